"""A second process that takes a share of a large dataset's first reading.

Opening a 100,000-line dataset means decoding and checking every line: a second
and a half of one core in Python, with the interpreter's lock keeping threads to
one core. A :class:`Helper` is a process of its own that takes batches of lines
from the far end while the caller works from the near end: on two cores the
dataset opens in about two thirds of the time (the caller still builds every
line's row, and reads again the lines the helper did not pass).

Each side takes its batches itself, through two counters in a small file both
map (:class:`SharedEnds`): the helper never waits for the caller to hand it the
next batch, however busy the caller is. Each counter is written by one side
only, and a side stops at the first batch the other has taken; reading the
other's counter a moment late can only make both take the same last batch (the
caller keeps its own reading of it), never leave a batch to neither.

The helper only *screens* lines: for each it answers either the little a plain
line leaves behind (see ``screening.screen_batch``) or "look at this one", and
the caller reads and checks those itself. A plain line may carry unfinished
findings (a missing expected path: see ``Finding.unfinished``), which say only
what they are about; the caller's own rules and workspace finish them (or the
helper does, when the caller will want every finding), and make every other
finding, as without a helper. Whatever goes wrong with the helper
(it cannot start, dies, hangs, answers nonsense) costs only time: the caller
reads the batches it did not answer.

The helper is started on first use (or ahead of it, see :meth:`Helper.start_soon`)
and kept for later ones; it ends when :meth:`Helper.close` is called or when its
input closes (the caller is gone). Messages are pickles with a length in front,
over the helper's stdin and stdout, between two processes of the same program.
"""

from __future__ import annotations

import gc
import importlib
import logging
import mmap
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, Protocol, Sequence

from .batchends import HEADER_BYTES, SharedEnds

log = logging.getLogger(__name__)

# How long the caller waits for the helper's next answer once its own share is
# done, beyond which the helper is stopped and its batches read by the caller (a
# batch takes the helper tens of milliseconds).
ANSWER_TIMEOUT_S = 30.0
# The longest a caller waits for its job to be sent to a helper that is ready:
# sending takes milliseconds, unless the helper has stopped reading.
_SEND_WAIT_S = 0.05

_LENGTH = struct.Struct("<Q")
# What Linux lets any user give a pipe without privileges (pipe-max-size).
_PIPE_BYTES = 1 << 20
# More than a message's length and pickled envelope take besides its payload.
_FRAMING_BYTES = 256
# The folder holding the rag_lsp package: the helper runs this very code.
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent.parent)


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        return os.cpu_count() or 1


class Job(Protocol):
    """What the helper is to do with a text's batches: picklable, and turned once,
    in the helper, into the function it applies to each batch. A batch comes as
    its lines' UTF-8 (lone surrogates kept, joined by "\n"): a helper decodes only
    what it reads."""

    def start(self) -> Callable[[int, memoryview], Any]:
        """The function that does the work on one batch: given its index and its
        text (mapped from a file)."""


class Preparation(Protocol):
    """What a helper may make while it waits, ahead of the job that needs it
    (a workspace's files, indexed for did-you-means): picklable, and compared
    with ``==`` to the job's own (see :func:`prepared`)."""

    def make(self) -> Any:
        """What the job would otherwise make on its first batch, after the caller has begun waiting."""


# In the helper: the last preparation made, and what it made (see prepared).
_made_ahead: tuple[Preparation, Any] | None = None


def prepared(preparation: Preparation) -> Any:
    """What the helper made ahead of ``preparation`` (see Helper.prepare), for the
    one job that asks; None when it made none, or made another."""
    global _made_ahead
    if _made_ahead is None or _made_ahead[0] != preparation:
        return None
    made = _made_ahead[1]
    _made_ahead = None
    return made


class Share:
    """The helper's part of one reading.

    The counters and the text go to a file only this user can read; a thread
    hands the helper that file, then the job when the caller knows it
    (:meth:`begin`), then collects the answers the helper sends for each batch
    it takes, until it has taken its last. The caller takes its batches with
    :attr:`ends`.
    """

    def __init__(self, helper: Helper, lines: Sequence[str], start: int, stop: int, batch_starts: Sequence[int]) -> None:
        self._helper = helper
        self._stop = stop
        # Where each batch's text starts and ends in the file's text (see _write_text).
        self._bounds: list[tuple[int, int]] = []
        descriptor, self._path = tempfile.mkstemp(prefix="rag-lsp-", suffix=".share")
        self._file = os.fdopen(descriptor, "w+b")
        counters = None
        try:
            self._file.write(SharedEnds.header(start, stop))
            self._file.flush()
            counters = mmap.mmap(self._file.fileno(), HEADER_BYTES)
            self.ends = SharedEnds(counters)
            self._write_text(lines, batch_starts)
        except BaseException:  # a full disk, say: the caller reads alone
            if counters is not None:
                counters.close()
            self._file.close()
            os.unlink(self._path)
            raise
        self._job: Job | None = None
        self._begun = threading.Event()
        # Set once the helper has read the share, and once it was sent the job.
        self._shared = threading.Event()
        self._sent = threading.Event()
        # (batch, answer) for each batch the helper answered, until the caller
        # collects them; and when the helper was last heard from.
        self._arrived: list[tuple[int, Any]] = []
        self._heard = time.monotonic()
        # The batches whose answers the caller has collected.
        self._given: set[int] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._feed, name="rag-lsp-helper-feed", daemon=True)
        self._thread.start()

    def begin(self, job: Job) -> None:
        """Let the helper start on ``job``: sent at once when the helper has
        read the share already. The caller waits for that (a few milliseconds),
        as the thread that sends it would otherwise wait for the interpreter's
        lock, which the caller's reading holds, as long as the caller holds it
        in one call (tens of milliseconds, building the index of workspace paths)."""
        self._job = job
        self._begun.set()
        if self._shared.is_set():
            self._sent.wait(_SEND_WAIT_S)

    def _feed(self) -> None:
        try:
            channel = self._helper.channel()
            if channel is None:
                return
            self._pass_text(channel)
            self._shared.set()
            self._begun.wait()
            if self._job is None:  # the caller finished alone
                return
            channel.send(("job", pickle.dumps(self._job, pickle.HIGHEST_PROTOCOL)))
            self._sent.set()
            while (message := channel.receive()) != "done":
                index, answer = message
                if type(index) is not int:
                    raise ValueError(f"the helper answered a batch {index!r}")
                with self._lock:
                    self._arrived.append((index, answer))
                self._heard = time.monotonic()
            # The helper lets go of the text until the next share.
            channel.send(("end", None))
            channel.receive()
        except Exception:
            log.warning("the helper process failed; its batches are read here", exc_info=True)
            self._helper.stop()
        finally:
            self._sent.set()  # no caller waits for a job that will not be sent
            self._forget_file()

    def _write_text(self, lines: Sequence[str], batch_starts: Sequence[int]) -> None:
        """Write the text (its lines joined by "\n") after the counters, for the
        helper to read, noting where each batch (from each of ``batch_starts``,
        the first line of each, to the next) starts and ends in it: the helper
        is told, rather than finding every batch's end in tens of megabytes
        before its first batch.

        The caller writes it before it starts reading (a few milliseconds for
        20 MB): from the feeding thread, each piece would wait for the
        interpreter's lock, which the caller's reading holds, and the helper
        would get the text a tenth of a second later."""
        file = self._file
        written = 0
        # A batch at a time: the whole text joined, or encoded, at once would be
        # a copy of it.
        for first, end in zip(batch_starts, [*batch_starts[1:], len(lines)]):
            piece = "\n".join(lines[first:end]).encode("utf-8", "surrogatepass")
            self._bounds.append((written, written + len(piece)))
            file.write(piece)
            written += len(piece)
            if end < len(lines):
                file.write(b"\n")
                written += 1
        file.flush()

    def _pass_text(self, channel: _Channel) -> None:
        """Let the helper read the text (see _write_text)."""
        channel.send(("share", (self._path, self._bounds)))
        if channel.receive() != "read":
            raise RuntimeError("the helper could not read the share")
        self._forget_file()

    def _forget_file(self) -> None:
        # The mapping of the counters stays valid once the file is gone.
        if self._path:
            try:
                os.unlink(self._path)
            except OSError:
                pass
            self._path = ""
            self._file.close()

    def answered(self) -> list[tuple[int, Any]]:
        """The (batch, answer) pairs that arrived since the last call, without
        waiting, for batches the caller did not take itself."""
        with self._lock:
            arrived, self._arrived = self._arrived, []
        front = self.ends.front
        given = [(index, answer) for index, answer in arrived if front <= index < self._stop and index not in self._given]
        self._given.update(index for index, _ in given)
        return given

    def abandon(self) -> None:
        """The caller stops reading (it failed): the helper takes no more batches
        and the feeding thread ends without being waited for."""
        self.ends.close_front()
        self._begun.set()

    def remaining(self) -> list[tuple[int, Any]]:
        """As :meth:`answered`, once the helper has taken its last batch; a batch the
        caller did not take and the helper did not answer comes with None (the
        caller reads it)."""
        self._begun.set()  # a share never begun ends here
        self._heard = time.monotonic()
        # The helper may still be busy with several batches: it is given up only
        # once it has said nothing for ANSWER_TIMEOUT_S.
        while self._thread.is_alive() and (wait := self._heard + ANSWER_TIMEOUT_S - time.monotonic()) > 0:
            self._thread.join(wait)
        if self._thread.is_alive():
            log.warning("the helper process did not answer in %.0f s; it is stopped", ANSWER_TIMEOUT_S)
            self._helper.stop()  # its pipes close, and the feeding thread ends
            self._thread.join()
        arrived = self.answered()
        missing = set(range(self.ends.front, self._stop)) - self._given
        self._given |= missing
        return arrived + [(index, None) for index in sorted(missing)]


def reading_helper(one_reading: bool = False) -> Helper | None:
    """A helper process for the first readings of large datasets, not started yet,
    on a machine with a core to spare (None on one core). It runs with the
    collector policy of a one-shot process (see rag_lsp.collector) and warms up
    as soon as it starts (see core.checking.screening.warm_up; ``one_reading``:
    for a caller that reads one dataset and ends, warm_up_rows). Named here, by
    the modules it preloads, so that a caller starts it before importing them."""
    warm_up = "warm_up_rows" if one_reading else "warm_up"
    return Helper(preload=["rag_lsp.collector:one_shot", f"rag_lsp.core.checking.screening:{warm_up}"]) if cores() > 1 else None


class Helper:
    """One helper process, started when first needed."""

    def __init__(self, preload: Sequence[str] = ()) -> None:
        """``preload``: modules the helper imports as soon as it starts (those its
        jobs come from), while the caller is still busy with its first batches;
        ``"module:function"`` also calls that function of the module once, to do
        ahead what a job would do the first time (see :func:`serve`)."""
        self._preload = tuple(preload)
        self._channel: _Channel | None = None
        self._lock = threading.Lock()
        self._closed = False

    def share(self, lines: Sequence[str], start: int, stop: int, batch_starts: Sequence[int]) -> Share | None:
        """Let the helper take batches ``[start, stop)`` of a text (its ``lines``,
        split at "\n"; batch i from line ``batch_starts[i]`` to the next) from the back
        while the caller takes them from the front (``share.ends``), once the
        share has begun; the share's answers say what the helper did. None when
        there is no helper, or no file to share through."""
        if self._closed:
            return None
        try:
            return Share(self, lines, start, stop, batch_starts)
        except OSError:
            log.warning("no file to share a reading through; it is read in one process", exc_info=True)
            return None

    def channel(self) -> _Channel | None:
        """The running helper's channel, starting the helper if needed (None when closed or it cannot start)."""
        with self._lock:
            if self._closed:
                return None
            if self._channel is not None and self._channel.alive():
                return self._channel
            self._channel = None
            try:
                self._channel = _Channel.start(self._preload)
            except OSError:
                log.warning("the helper process could not start; datasets are read in one process", exc_info=True)
                self._closed = True
            return self._channel

    def start_soon(self) -> None:
        """Start the helper process in the background unless it runs: its start
        (an interpreter, the preloaded modules) then overlaps whatever the caller
        does before it shares a reading."""
        channel = self._channel
        if self._closed or (channel is not None and channel.alive()):
            return
        threading.Thread(target=self.channel, name="rag-lsp-helper-start", daemon=True).start()

    def prepare(self, preparation: Preparation) -> None:
        """Let a running helper make ``preparation`` while it waits for a job (no
        answer is awaited). Sent only where the pipe takes it at once (a wide
        pipe the caller has sent nothing through yet, and a preparation within
        it: the files of a workspace of up to about 25,000): the caller is not
        held up by a helper still starting."""
        channel = self._channel
        if self._closed or channel is None or not channel.wide or not channel.alive():
            return
        payload = pickle.dumps(preparation, pickle.HIGHEST_PROTOCOL)
        if len(payload) > _PIPE_BYTES - _FRAMING_BYTES:
            return
        try:
            channel.send(("prepare", payload))
        except OSError:  # the next share finds the helper gone, and says so
            pass

    def stop(self, wait: bool = True) -> None:
        """Stop the helper process (a later share starts a new one); ``wait``: until
        it has ended, else it is reaped on a thread of its own."""
        with self._lock:
            channel, self._channel = self._channel, None
        if channel is not None:
            channel.close(wait)

    def close(self, wait: bool = True) -> None:
        """Stop the helper process for good (see stop)."""
        with self._lock:
            self._closed = True
        self.stop(wait)

    @property
    def pid(self) -> int | None:
        channel = self._channel
        return channel.process.pid if channel is not None else None


class _Channel:
    """The pipes to one helper process."""

    def __init__(self, process: subprocess.Popen[bytes], wide: bool = False) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self._out: BinaryIO = process.stdin  # type: ignore[assignment]
        self._in: BinaryIO = process.stdout  # type: ignore[assignment]
        # Whether the request pipe takes a megabyte without waiting for the helper.
        self.wide = wide
        # A preparation is sent by the caller, a share's messages by its thread:
        # one message at a time.
        self._sending = threading.Lock()

    @staticmethod
    def command() -> list[str]:
        """The helper's program: this Python, running this very code (the modules
        to preload follow)."""
        return [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); from rag_lsp.core.checking.parallel import serve; serve(sys.argv[2:])",
            _PACKAGE_PARENT,
        ]

    @classmethod
    def start(cls, preload: Sequence[str] = ()) -> _Channel:
        # stderr is shared: a helper's warnings land in the server's log.
        process = subprocess.Popen([*cls.command(), *preload], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        # The helper answers a batch after another without waiting to be read;
        # and a job (the workspace's files, a megabyte for 20,000) is written at
        # once, not a pipe's worth at a time, each waiting for the interpreter's
        # lock that the caller's reading holds.
        widen_pipe(process.stdout)
        return cls(process, wide=widen_pipe(process.stdin))

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, message: Any) -> None:
        with self._sending:
            _write(self._out, message)

    def receive(self) -> Any:
        return _read(self._in)

    def close(self, wait: bool = True) -> None:
        # The process goes first: a thread blocked reading its answer holds the
        # stream's lock, which closing the stream would wait for.
        if self.process.poll() is None:
            self.process.kill()
        if wait:
            self._reap()
        else:
            # A killed process takes a few milliseconds to end: the caller goes on meanwhile.
            threading.Thread(target=self._reap, name="rag-lsp-helper-reap", daemon=True).start()

    def _reap(self) -> None:
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            log.warning("the helper process %d did not end", self.process.pid)
        for stream in (self._out, self._in):
            try:
                stream.close()
            except OSError:
                pass


def _write(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read(stream: BinaryIO) -> Any:
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError("the other process closed the channel")
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other process closed the channel")
    return pickle.loads(data)


def serve(preload: Sequence[str] = ()) -> None:
    """The helper's side: preload ``preload``, then for each share read its text
    (as UTF-8 bytes) and map its counters, start its job, and answer each batch
    it takes from the back, until the input closes."""
    requests: BinaryIO = sys.stdin.buffer
    answers: BinaryIO = sys.stdout.buffer
    # Only answers go to stdout; anything printed by mistake goes to stderr.
    sys.stdout = sys.stderr
    for entry in preload:
        try:
            _preload(entry)
        except Exception:  # the job's unpickling will import it, or say why not
            log.exception("the helper could not preload %s", entry)
    text: mmap.mmap | None = None  # the shared file, mapped
    data = memoryview(b"")  # its text
    bounds: list[tuple[int, int]] = []  # where each batch starts and ends in it
    ends: SharedEnds | None = None
    global _made_ahead
    while True:
        try:
            kind, payload = _read(requests)
        except EOFError:
            return
        if kind == "prepare":  # answered by nothing: the job that follows finds it (see prepared)
            try:
                preparation = pickle.loads(payload)
                _made_ahead = None  # the last one's is let go before the next is made
                _made_ahead = (preparation, preparation.make())
            except Exception:  # the job makes it itself
                log.exception("the helper could not prepare")
            continue
        answer: Any = None
        try:
            if kind == "share":
                data, text = _unmapped(data, text)
                path, bounds = payload
                with open(path, "r+b") as file:
                    ends = SharedEnds(mmap.mmap(file.fileno(), HEADER_BYTES))
                    # Mapped, not read: the text's pages count against this
                    # process's memory only while it looks at them (see below).
                    text = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
                data = memoryview(text)[HEADER_BYTES:]
                answer = "read"
            elif kind == "job" and ends is not None:
                work = pickle.loads(payload).start()
                # Each batch looks at its own part of the text: the pages looked at
                # are let go after each, so this process holds one batch's at a time.
                while (index := ends.take_back()) is not None:
                    start, end = bounds[index]
                    _write(answers, (index, work(index, data[start:end])))
                    _let_go(text)
                answer = "done"
            elif kind == "end":
                answer = "ended"
        except Exception:  # the caller reads what was not answered
            log.exception("the helper failed on a %s", kind)
            answer = "done" if kind == "job" else None
        try:
            _write(answers, answer)
        except OSError:
            return
        if kind == "end":  # after answering: the caller need not wait for this
            data, text = _unmapped(data, text)
            ends = None
            _made_ahead = None
            gc.collect()


def _let_go(text: mmap.mmap | None) -> None:
    """Drop the pages of the mapped text from this process's memory (they are
    read again from the file, or the system's cache, when looked at again)."""
    if text is not None and hasattr(mmap, "MADV_DONTNEED"):
        text.madvise(mmap.MADV_DONTNEED)


def _unmapped(data: memoryview, text: mmap.mmap | None) -> tuple[memoryview, None]:
    """Let go of a shared file's text and its mapping."""
    data.release()
    if text is not None:
        try:
            text.close()
        except BufferError:  # a view of it is still alive: it is unmapped when that goes
            pass
    return memoryview(b""), None


def _preload(entry: str) -> None:
    """Import the module of ``entry`` ("module" or "module:function"), and call
    the function: a job's first batch would otherwise pay for what it prepares
    (schemas compiled, manifests read), after the caller has begun waiting."""
    module, _, function = entry.partition(":")
    loaded = importlib.import_module(module)
    if function:
        getattr(loaded, function)()


def widen_pipe(stream: Any) -> bool:
    """Give the pipe behind ``stream`` a 1 MiB buffer, where the system allows it
    (Linux), and say whether it has one; anything else (a file, a terminal, a
    socket, another system) is left as it is."""
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except (ImportError, OSError, ValueError, AttributeError):
        return False
    return True
