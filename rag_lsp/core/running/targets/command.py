"""The ``command`` target: a persistent child process speaking JSON Lines.

```yaml
targets:
  ids.search:
    command: ["python", "tools/search.py"]   # argv, run in the workspace root
    timeout_s: 10                             # per case (default: the run timeout)
```

The process is started on the first case and kept for the next ones (and, in the
language server, for the next runs). For each case it is sent one line, the case's
``input`` as JSON, and must answer one line, ``{"hits": [...], "mode": ...}``.
Whatever goes wrong becomes that case's RAG405 and never stops the run:

* the command cannot start, or exits: the message gives its exit code and the
  last lines it wrote to stderr; it is started again for the next case (but not
  after three deaths in a row without a single answer). Its exit is noticed
  even when a child it started keeps its stdout open;
* no answer within the timeout: the process is stopped (its whole process group)
  and started again for the next case (but after three cases in a row without
  an answer in time, the run's other cases are not asked: each would wait the
  timeout out);
* an answer that is not JSON, not shaped as an answer, longer than the line limit,
  or more than one line for one request: the process is restarted, since its
  stdout can no longer be trusted to line up with the requests;
* the run is cancelled while a case is out: the process is stopped (its answer
  could no longer be told apart from the next one's) and the run ends at once.

Reading happens on a thread per pipe with bounded buffers, so a process that
floods stdout or stderr blocks itself, not us. :meth:`CommandTarget.close` ends the
process group; nothing is left running.
"""

from __future__ import annotations

import collections
import os
import queue
import signal
import subprocess
import threading
import time
import weakref
from typing import IO, Any


from ...workspace.suitefacts import TargetInfo
from ...workspace.workspace import Workspace
from .base import Answer, Cancelled, Request, Target, TargetError, decode_answer, input_json

_EOF = object()
_TOO_LONG = object()

# Unread answer lines kept before the reader thread (and so the process) waits.
_QUEUE_LINES = 64
# Consecutive deaths without an answer after which the command is not restarted.
_MAX_DEATHS = 3
# Consecutive cases it did not answer in time after which it is not asked again
# in the run: a command that hangs would otherwise cost the timeout per case.
_MAX_TIMEOUTS = 3
# How often a wait for an answer looks at the run's cancel event and whether the
# process is still running.
_POLL_S = 0.05
# How long, once the process has exited, its last output may take to be read.
_EXIT_GRACE_S = 0.2
_STDERR_KEEP = 8 * 1024


class _Process:
    """One running child with its reader threads."""

    def __init__(self, argv: list[str], cwd: str, line_limit: int) -> None:
        posix = os.name == "posix"
        self.popen = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Its own process group, so that stopping it stops what it started.
            start_new_session=posix,
        )
        self.lines: queue.Queue[Any] = queue.Queue(maxsize=_QUEUE_LINES)
        self.stderr: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._line_limit = line_limit
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(self.popen.stdout,), daemon=True, name="rag-lsp-command-stdout"),
            threading.Thread(target=self._read_stderr, args=(self.popen.stderr,), daemon=True, name="rag-lsp-command-stderr"),
        ]
        for thread in self._threads:
            thread.start()
        # Stop the child if this object is dropped without close().
        self._finalizer = weakref.finalize(self, _kill, self.popen)

    def _read_stdout(self, stream: IO[bytes]) -> None:
        # Lines are queued in the batches one read returns: two lines written
        # together arrive together, so a second answer to one request is seen at
        # once instead of being taken for the answer to the next request.
        fd = stream.fileno()
        pending = b""
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                pending += chunk
                if b"\n" in chunk:
                    *lines, pending = pending.split(b"\n")
                    self.lines.put(tuple(lines))
                if len(pending) > self._line_limit:
                    self.lines.put(_TOO_LONG)
                    return
        except (OSError, ValueError):
            pass
        self.lines.put(_EOF)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        try:
            while True:
                chunk = stream.read1(4096) if hasattr(stream, "read1") else stream.read(4096)
                if not chunk:
                    return
                self.stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size > _STDERR_KEEP and len(self.stderr) > 1:
                    self._stderr_size -= len(self.stderr.popleft())
        except (OSError, ValueError):
            return

    def stderr_tail(self) -> str:
        text = b"".join(self.stderr).decode("utf-8", "replace").strip()
        lines = [line for line in text.splitlines() if line.strip()]
        return " | ".join(lines[-3:])[-400:]

    def alive(self) -> bool:
        return self.popen.poll() is None

    def send(self, data: bytes) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(data)
        self.popen.stdin.flush()

    def exit_code(self, wait_s: float = 1.0) -> int | None:
        try:
            return self.popen.wait(wait_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace_s: float = 0.5) -> None:
        """Close stdin (a polite end), then end the process group."""
        popen = self.popen
        if popen.stdin is not None:
            try:
                popen.stdin.close()
            except OSError:
                pass
        if popen.poll() is None:
            try:
                popen.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        _kill(popen)
        for stream in (popen.stdout, popen.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        for thread in self._threads:
            thread.join(1.0)
        self._finalizer.detach()


def _kill(popen: subprocess.Popen) -> None:
    if os.name == "posix":
        try:
            # The group outlives its leader: end it even when the leader is gone.
            os.killpg(popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    if popen.poll() is None:
        try:
            popen.kill()
        except OSError:
            pass
    try:
        popen.wait(5)
    except subprocess.TimeoutExpired:
        pass


class CommandTarget(Target):
    kind = "command"
    needs_trust = True

    def __init__(self, info: TargetInfo, workspace: Workspace, timeout_s: float) -> None:
        super().__init__(info, workspace, timeout_s)
        argv = info.config.get("command")
        if not isinstance(argv, list) or not argv or not all(isinstance(part, str) and part for part in argv):
            raise TargetError(f"target {info.id!r}: `command` must be a non-empty list of strings (argv, not a shell line)")
        self.argv = list(argv)
        self.line_limit = workspace.settings.max_file_bytes
        self._process: _Process | None = None
        self._deaths = 0
        self._last_death = ""
        self._timeouts = 0
        self._lock = threading.Lock()
        # The cancel event of the run being answered (see answer_many).
        self._cancel: threading.Event | None = None

    @property
    def command_text(self) -> str:
        return " ".join(self.argv)

    def _running(self) -> _Process:
        process = self._process
        if process is not None and process.alive():
            return process
        if process is not None:
            process.stop(0)
            self._process = None
        if self._deaths >= _MAX_DEATHS:
            raise TargetError(
                f"`{self.command_text}` died {self._deaths} times in a row without answering and is not started again "
                f"in this run ({self._last_death})"
            )
        try:
            self._process = _Process(self.argv, str(self.workspace.root), self.line_limit)
        except OSError as error:
            self._deaths = _MAX_DEATHS
            self._last_death = f"cannot start it: {error.strerror or error}"
            raise TargetError(f"cannot start `{self.command_text}`: {error.strerror or error}") from None
        return self._process

    def _died(self, process: _Process, what: str) -> TargetError:
        code = process.exit_code()
        tail = process.stderr_tail()
        process.stop(0)
        self._process = None
        self._deaths += 1
        status = f"exited with code {code}" if code is not None else "closed its output"
        detail = f"; stderr: {tail}" if tail else ""
        self._last_death = f"{status}{detail}"
        return TargetError(f"`{self.command_text}` {status} {what}{detail}; it is restarted for the next case")

    def _restart(self, process: _Process) -> None:
        process.stop(0)
        self._process = None

    def answer(self, request: Request) -> Answer:
        with self._lock:
            return self._answer(request)

    def _answer(self, request: Request) -> Answer:
        if self._timeouts >= _MAX_TIMEOUTS:
            raise TargetError(
                f"`{self.command_text}` did not answer {self._timeouts} cases in a row within {self.timeout_s:g} s and is "
                "not asked again in this run (raise timeout_s in .punica/targets.yaml if it is just slow)"
            )
        process = self._running()
        # Lines left over from an earlier request mean the process answered more
        # than once: its output no longer lines up with the requests. (Give the
        # reader thread a turn first, so a line that has arrived is seen.)
        time.sleep(0)
        try:
            stale = process.lines.get_nowait()
        except queue.Empty:
            stale = None
        if stale is _EOF:
            raise self._died(process, "before this case was sent")
        if stale is not None:
            self._restart(process)
            process = self._running()
        payload = input_json(request.input) + b"\n"
        try:
            process.send(payload)
        except (BrokenPipeError, OSError, ValueError):
            raise self._died(process, "before reading the case") from None
        try:
            line = self._next_line(process)
        except queue.Empty:
            self._restart(process)
            self._timeouts += 1
            raise TargetError(
                f"`{self.command_text}` did not answer within {self.timeout_s:g} s; it was stopped and is restarted "
                "for the next case (raise timeout_s in .punica/targets.yaml if it is just slow)"
            ) from None
        if line is _EOF:
            raise self._died(process, "without answering")
        if line is _TOO_LONG:
            self._restart(process)
            raise TargetError(
                f"`{self.command_text}` answered a line longer than {self.line_limit:,} bytes; it was stopped"
            )
        self._deaths = self._timeouts = 0
        try:
            answer = decode_answer(line[0], f"the answer of `{self.command_text}`")
        except TargetError:
            # Garbage on stdout (a stray print, a traceback): whatever follows may
            # belong to this request, so start clean for the next one.
            self._restart(process)
            raise
        if len(line) > 1 or not process.lines.empty():
            self._restart(process)
            raise TargetError(
                f"`{self.command_text}` wrote more than one line for one case; answer each input line with exactly "
                "one JSON line (log to stderr). It was restarted"
            )
        return answer

    def _next_line(self, process: _Process) -> Any:
        """The process's next answer line; _EOF once it has exited without one;
        queue.Empty after the timeout; Cancelled (the process stopped) as soon as
        the run is cancelled."""
        cancel = self._cancel
        deadline = time.monotonic() + self.timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise queue.Empty
            try:
                return process.lines.get(timeout=min(remaining, _POLL_S))
            except queue.Empty:
                if cancel is not None and cancel.is_set():
                    self._restart(process)
                    raise Cancelled(f"the run was cancelled while `{self.command_text}` was answering; it was stopped") from None
                if not process.alive():
                    # Exited, yet its stdout may never end: a child it started can
                    # hold the pipe open. What it wrote before exiting is read by now.
                    try:
                        return process.lines.get(timeout=_EXIT_GRACE_S)
                    except queue.Empty:
                        return _EOF

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                self._process.stop()
                self._process = None
            self._deaths = 0

    def answer_many(self, requests, cancel=None, concurrency=1, fields=None):
        # A new run gives a command that kept dying or hanging another chance.
        with self._lock:
            self._deaths = self._timeouts = 0
            self._cancel = cancel
        try:
            yield from super().answer_many(requests, cancel, concurrency)
        finally:
            with self._lock:
                self._cancel = None
