"""A second process that takes a share of a large dataset's first reading.

Opening a 100,000-line dataset means decoding and checking every line: a second
and a half of one core in Python, with the interpreter's lock keeping threads to
one core. A :class:`Helper` is a process of its own that takes batches of lines
from the far end while the caller works from the near end (:class:`TwoEnds`): on
two cores the dataset opens in about two thirds of the time (the caller still
builds every line's row, and reads again the lines the helper did not pass).

The helper only *screens* lines: for each it answers either the little a plain
line leaves behind (see ``incremental.screen_batch``) or "look at this one", and
the caller reads and checks those itself. Every finding is therefore made by the
caller's own rules and workspace, as without a helper. Whatever goes wrong with
the helper (it cannot start, dies, hangs, answers nonsense) costs only time: the
caller takes back the batches it did not answer.

The helper is started on first use and kept for later ones; it ends when
:meth:`Helper.close` is called or when its input closes (the caller is gone).
Messages are pickles with a length in front, over the helper's stdin and stdout,
between two processes of the same program.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, BinaryIO, Callable, Protocol, Sequence

log = logging.getLogger(__name__)

# How long the caller waits for the helper's answers once its own share is done,
# beyond which the helper is stopped and its batches taken back (a batch takes
# the helper tens of milliseconds).
ANSWER_TIMEOUT_S = 30.0

_LENGTH = struct.Struct("<Q")
# Characters of a text encoded at a time for the helper.
_PIECE = 1 << 20
# The folder holding the rag_lsp package: the helper runs this very code.
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent)


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        return os.cpu_count() or 1


class Job(Protocol):
    """What the helper is to do with a text: picklable, and turned once, in the
    helper, into the function it applies to each batch (by index). The text comes
    as UTF-8 (lone surrogates kept): a helper decodes only what it reads."""

    def start(self, data: bytes) -> Callable[[int], Any]: ...


class TwoEnds:
    """Batch indexes ``[start, stop)`` taken from both ends, each exactly once."""

    def __init__(self, start: int, stop: int) -> None:
        self._front = start
        self._back = stop
        self._lock = threading.Lock()

    def take_front(self) -> int | None:
        with self._lock:
            if self._front >= self._back:
                return None
            self._front += 1
            return self._front - 1

    def take_back(self) -> int | None:
        with self._lock:
            if self._front >= self._back:
                return None
            self._back -= 1
            return self._back


class Share:
    """The helper's part of one reading.

    A thread hands the helper the text at once (through a temporary file: a pipe
    would pass it in small pieces, each waiting for the interpreter's lock), then
    the job when the caller knows it (:meth:`begin`), then batch after batch from
    the back until the two ends meet.
    """

    def __init__(self, helper: Helper, text: str, ends: TwoEnds) -> None:
        self._helper = helper
        self._text = text
        self._ends = ends
        self._job: Job | None = None
        self._begun = threading.Event()
        # (batch, answer or None) for each batch the helper took, as it ends,
        # until the caller collects them.
        self._arrived: list[tuple[int, Any]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._feed, name="rag-lsp-helper-feed", daemon=True)
        self._thread.start()

    def begin(self, job: Job) -> None:
        """Let the helper start on ``job``."""
        self._job = job
        self._begun.set()

    def _feed(self) -> None:
        try:
            channel = self._helper.channel()
            if channel is None:
                return
            _pass_text(self._text, channel)
            self._begun.wait()
            if self._job is None:  # the caller finished alone
                return
            # The job goes once; the helper keeps it for the batches that follow.
            channel.send(("job", pickle.dumps(self._job, pickle.HIGHEST_PROTOCOL)))
            if channel.receive() != "ready":
                return
            while (index := self._ends.take_back()) is not None:
                answer = None  # the helper failed on this batch if it stays None
                try:
                    channel.send(("batch", index))
                    answer = channel.receive()
                finally:
                    with self._lock:
                        self._arrived.append((index, answer))
            # The helper lets go of the text until the next share.
            channel.send(("end", None))
            channel.receive()
        except Exception:
            log.warning("the helper process failed; its batches are read here", exc_info=True)
            self._helper.stop()

    def answered(self) -> list[tuple[int, Any]]:
        """The (batch, answer) pairs that arrived since the last call, without
        waiting. An answer of None: the caller must read that batch itself."""
        with self._lock:
            arrived, self._arrived = self._arrived, []
        return arrived

    def abandon(self) -> None:
        """The caller stops reading (it failed): the helper takes no more batches
        and the feeding thread ends without being waited for."""
        while self._ends.take_front() is not None:
            pass
        self._begun.set()

    def remaining(self) -> list[tuple[int, Any]]:
        """As :meth:`answered`, once the helper has answered its last batch."""
        self._begun.set()  # a share never begun ends here
        self._thread.join(ANSWER_TIMEOUT_S)
        if self._thread.is_alive():
            log.warning("the helper process did not answer in %.0f s; it is stopped", ANSWER_TIMEOUT_S)
            self._helper.stop()  # its pipes close, and the feeding thread ends
            self._thread.join()
        return self.answered()


def _pass_text(text: str, channel: _Channel) -> None:
    """Write ``text`` to a file only this user can read, for the helper to read;
    the file is removed once the helper has read it."""
    descriptor, name = tempfile.mkstemp(prefix="rag-lsp-", suffix=".text")
    try:
        with os.fdopen(descriptor, "wb") as file:
            # A piece at a time: the whole text encoded at once would be a copy.
            for start in range(0, len(text), _PIECE):
                file.write(text[start : start + _PIECE].encode("utf-8", "surrogatepass"))
        channel.send(("read", name))
        if channel.receive() != "read":
            raise RuntimeError("the helper could not read the text")
    finally:
        os.unlink(name)


class Helper:
    """One helper process, started when first needed."""

    def __init__(self, preload: Sequence[str] = ()) -> None:
        """``preload``: modules the helper imports as soon as it starts (those its
        jobs come from), while the caller is still busy with its first batches."""
        self._preload = tuple(preload)
        self._channel: _Channel | None = None
        self._lock = threading.Lock()
        self._closed = False

    def share(self, text: str, ends: TwoEnds) -> Share:
        """Let the helper take batches of ``text`` from the back of ``ends`` while
        the caller takes them from the front, once the share has begun; the
        share's answers say what it did."""
        return Share(self, text, ends)

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

    def stop(self) -> None:
        """Stop the helper process (a later share starts a new one)."""
        with self._lock:
            channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()

    def close(self) -> None:
        """Stop the helper process for good."""
        with self._lock:
            self._closed = True
        self.stop()

    @property
    def pid(self) -> int | None:
        channel = self._channel
        return channel.process.pid if channel is not None else None


class _Channel:
    """The pipes to one helper process."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self._out: BinaryIO = process.stdin  # type: ignore[assignment]
        self._in: BinaryIO = process.stdout  # type: ignore[assignment]

    @staticmethod
    def command() -> list[str]:
        """The helper's program: this Python, running this very code (the modules
        to preload follow)."""
        return [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); from rag_lsp.core.parallel import serve; serve(sys.argv[2:])",
            _PACKAGE_PARENT,
        ]

    @classmethod
    def start(cls, preload: Sequence[str] = ()) -> _Channel:
        # stderr is shared: a helper's warnings land in the server's log.
        return cls(subprocess.Popen([*cls.command(), *preload], stdin=subprocess.PIPE, stdout=subprocess.PIPE))

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, message: Any) -> None:
        _write(self._out, message)

    def receive(self) -> Any:
        return _read(self._in)

    def close(self) -> None:
        # The process goes first: a thread blocked reading its answer holds the
        # stream's lock, which closing the stream would wait for.
        if self.process.poll() is None:
            self.process.kill()
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
    """The helper's side: import ``preload``, then read each text (as UTF-8
    bytes), start each job, answer each batch, until the input closes."""
    requests: BinaryIO = sys.stdin.buffer
    answers: BinaryIO = sys.stdout.buffer
    # Only answers go to stdout; anything printed by mistake goes to stderr.
    sys.stdout = sys.stderr
    for module in preload:
        try:
            importlib.import_module(module)
        except Exception:  # the job's unpickling will import it, or say why not
            log.exception("the helper could not preload %s", module)
    data = b""
    work: Callable[[int], Any] | None = None
    while True:
        try:
            kind, payload = _read(requests)
        except EOFError:
            return
        answer: Any = None
        try:
            if kind == "read":
                data = Path(payload).read_bytes()
                work = None
                answer = "read"
            elif kind == "job":
                work = pickle.loads(payload).start(data)
                answer = "ready"
            elif kind == "batch" and work is not None:
                answer = work(payload)
            elif kind == "end":
                answer = "ended"
        except Exception:  # the caller does this part itself
            log.exception("the helper failed on a %s", kind)
        try:
            _write(answers, answer)
        except OSError:
            return
        if kind == "end":  # after answering: the caller need not wait for this
            data, work = b"", None
            gc.collect()
