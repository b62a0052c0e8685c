"""The ``http`` target: one JSON POST per case.

```yaml
targets:
  remote.search:
    http: {url: "http://127.0.0.1:8900/query", timeout_s: 10, headers: {Authorization: "Bearer …"}}
```

The body is the case's ``input`` as JSON; the answer must be a JSON
``{"hits": [...], "mode": ...}``. Refused connections, error statuses, timeouts,
bodies larger than the file size limit and malformed answers become the case's
RAG405. Many cases are sent with bounded concurrency (the ``runConcurrency``
setting, 4 by default): at most that many requests are in flight at once. After
three cases in a row without an answer in time, the run's other cases are not
sent: a service that hangs would cost the timeout per case.
"""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Iterator, Sequence


from ...workspace.settings import MAX_RUN_CONCURRENCY
from ...workspace.suitefacts import TargetInfo
from ...workspace.workspace import Workspace
from .base import Answer, Request, Target, TargetError, decode_answer, excerpt, input_json

# Consecutive cases not answered in time after which the run sends no more.
_MAX_TIMEOUTS = 3


class HttpTarget(Target):
    kind = "http"
    needs_trust = True

    def __init__(self, info: TargetInfo, workspace: Workspace, timeout_s: float) -> None:
        super().__init__(info, workspace, timeout_s)
        config = info.config.get("http")
        url = config.get("url") if isinstance(config, dict) else None
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise TargetError(f"target {info.id!r}: `http.url` must be an http:// or https:// URL")
        headers = config.get("headers") if isinstance(config.get("headers"), dict) else {}
        self.url = url
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        self.headers.update({str(name): str(value) for name, value in headers.items()})
        self.max_bytes = workspace.settings.max_file_bytes
        self.concurrency = max(1, min(workspace.settings.run_concurrency, MAX_RUN_CONCURRENCY))
        # Local endpoints must not go through a proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        # Cases not answered in time since the last answer (requests run on
        # several threads: read and written under the lock).
        self._timeouts = 0
        self._lock = threading.Lock()

    def answer(self, request: Request) -> Answer:
        with self._lock:
            if self._timeouts >= _MAX_TIMEOUTS:
                raise TargetError(
                    f"{self.url} did not answer {self._timeouts} cases in a row within {self.timeout_s:g} s and is not "
                    "asked again in this run (raise timeout_s in .punica/targets.yaml if it is just slow)"
                )
        try:
            data = self._post(request)
        except _TimedOut:
            with self._lock:
                self._timeouts += 1
            raise TargetError(
                f"{self.url} did not answer within {self.timeout_s:g} s (raise timeout_s in .punica/targets.yaml "
                "if it is just slow)"
            ) from None
        except TargetError:
            self._answered()  # an error status or a refused connection: quick, not a hang
            raise
        self._answered()
        if len(data) > self.max_bytes:
            raise TargetError(f"{self.url} answered more than {self.max_bytes:,} bytes; the answer is not read")
        return decode_answer(data, f"the answer of {self.url}")

    def _answered(self) -> None:
        with self._lock:
            self._timeouts = 0

    def _post(self, request: Request) -> bytes:
        """The body of the service's answer to one case; _TimedOut when it gave
        none in time, a TargetError when it failed otherwise."""
        body = input_json(request.input)
        http_request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
        try:
            with self._opener.open(http_request, timeout=self.timeout_s) as response:
                data = response.read(self.max_bytes + 1)
        except urllib.error.HTTPError as error:
            detail = ""
            try:
                detail = "; " + excerpt(error.read(2000))
            except Exception:  # noqa: BLE001 - the status says enough
                pass
            raise TargetError(f"{self.url} answered HTTP {error.code} {error.reason}{detail}") from None
        except (TimeoutError, socket.timeout):
            raise _TimedOut from None
        except urllib.error.URLError as error:
            reason = error.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise _TimedOut from None
            text = getattr(reason, "strerror", None) or str(reason)
            raise TargetError(f"cannot reach {self.url}: {text}; is the service running?") from None
        except (OSError, ValueError) as error:
            raise TargetError(f"the request to {self.url} failed: {error}") from None
        return data

    def answer_many(
        self,
        requests: Sequence[Request],
        cancel: threading.Event | None = None,
        concurrency: int = 0,
        fields: frozenset[str] | None = None,
    ) -> Iterator[tuple[int, Answer | TargetError]]:
        # A new run gives a service that kept hanging another chance.
        with self._lock:
            self._timeouts = 0
        workers = max(1, min(concurrency or self.concurrency, MAX_RUN_CONCURRENCY))
        if workers == 1 or len(requests) <= 1:
            yield from super().answer_many(requests, cancel)
            return
        pending: dict[Future, int] = {}
        next_index = 0
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rag-lsp-http") as pool:
            while next_index < len(requests) or pending:
                # Keep at most `workers` requests in flight; stop starting new ones on cancel.
                while next_index < len(requests) and len(pending) < workers and not (cancel and cancel.is_set()):
                    pending[pool.submit(self.answer_safely, requests[next_index])] = next_index
                    next_index += 1
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield pending.pop(future), future.result()


class _TimedOut(Exception):
    """The service gave no answer within the timeout."""
