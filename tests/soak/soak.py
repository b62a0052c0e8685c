"""Soak: thousands of mixed requests against one language server.

    python tests/soak/soak.py [--requests 10000] [--cases 500] [--seed 1]
                              [--sample-every 500] [--max-growth-mb 10] [--answer-timeout 60]
                              [--without KIND ...] [--keep DIR]

Writes a workspace (a ``.punica/`` root with two suites over one dataset of
--cases cases, a ``recorded`` target whose recording answers every case, and the
source and doc files the cases expect), starts ``python -X faulthandler -m rag_lsp serve`` over
stdio with ``{"trusted": false}`` (recorded targets need no trust), opens the suite
and the dataset, and sends --requests messages, one at a time, drawn at random
(--seed) from what an editor sends while someone works on a suite:

* edits (``didChange``): keystrokes into a query, a case line inserted or deleted,
  an expected path changed, a line broken and mended, a threshold changed, a
  metric name mistyped and corrected, a comment typed; each keystroke counts as
  one message, and the driver waits for the diagnostics of the last one;
* completion and hover at chosen and at random positions (suite keys, metric and
  engine names, ``match`` values, target ids, ``relevant`` paths, case ids);
* code lenses and ``codeLens/resolve``, code actions (quick fixes and the run
  actions), document symbols, definitions and document links;
* ``workspace/executeCommand``: ``ragLsp.runCase`` (most), ``ragLsp.runSuite`` and
  ``ragLsp.clearResults``;
* hovers and completions cancelled (``$/cancelRequest``) as soon as they are sent.

It prints:

* the responses by kind: how many were answered, and every error response by
  code; errors the protocol calls for (RequestCancelled for a cancelled request,
  ContentModified) are expected, any other error, a request left unanswered or an
  edit whose diagnostics never came is unexpected;
* what the server logged at level ERROR (tracebacks) and WARNING, and the
  messages it showed the user (``window/showMessage``), by kind;
* the server's resident memory (VmRSS) every --sample-every messages, and its
  growth from the end of the warm-up (the first tenth of the messages, at least
  1,000 but at most half) to the end;
* the median and 95th percentile latency per kind over the first and the last
  1,000 messages; an edit's latency runs from its (last) keystroke to the
  diagnostics of that version (suite edits include the server's 50 ms debounce);
* the run results (RAG400–RAG405) the runs produced, and whether the server was
  alive at the end, answered a last request, and exited with code 0 after
  ``shutdown`` and ``exit``.

It exits 1 when an unexpected error appeared, the server died, stopped answering
(then its threads' stacks are printed) or logged an error, or memory grew by more
than --max-growth-mb after the warm-up; else 0. --without leaves kinds of message
out, to find which one memory or latency follows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# faulthandler: a server that stops answering is made to show its threads' stacks.
SERVER_COMMAND = [sys.executable, "-X", "faulthandler", "-m", "rag_lsp", "serve"]
SETTINGS = {"trusted": False}

SUITE_FILE = ".punica/evals/soak.suite.yaml"
DATASET_FILE = ".punica/evals/soak.jsonl"
RECORDING = ".punica/runs/rec.jsonl"
TARGETS = "targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n"

SUITE = """\
# Soak suites: one scores the first five hits, one the first three.
suites:
  - id: soak
    target: {kind: capability, id: rec}
    dataset: .punica/evals/soak.jsonl
    engines: [rag]
    options:
      rag: {match: path, k: 5}
    thresholds:
      rag.recall: 0.5
      rag.mrr: 0.3
      rag.mode.semantic: 1
  - id: soak-top3
    target: {kind: capability, id: rec}
    dataset: .punica/evals/soak.jsonl
    engines: [rag]
    options:
      rag: {match: path, k: 3}
    thresholds:
      rag.recall: 0.4
      rag.mode.semantic: 1
"""
SUITE_IDS = ("soak", "soak-top3")

TOPICS = [
    *("gateway", "approval", "quorum", "policy", "store", "expiry", "tenant", "limiter", "bucket", "deploy"),
    *("probe", "shutdown", "ledger", "invoice", "refund", "session", "token", "cache", "index", "search"),
    *("ranking", "embedding", "chunker", "crawler", "scheduler"),
]

# A wait for an answer longer than this is a request left unanswered (by default).
ANSWER_TIMEOUT_S = 60.0
# JSON-RPC error codes the protocol calls for: the first only for cancelled requests.
REQUEST_CANCELLED = -32800
CONTENT_MODIFIED = -32801
ERROR_NAMES = {
    -32700: "ParseError",
    -32600: "InvalidRequest",
    -32601: "MethodNotFound",
    -32602: "InvalidParams",
    -32603: "InternalError",
    -32002: "ServerNotInitialized",
    -32803: "RequestFailed",
    -32802: "ServerCancelled",
    CONTENT_MODIFIED: "ContentModified",
    REQUEST_CANCELLED: "RequestCancelled",
}
NO_ANSWER = "no answer"
NO_DIAGNOSTICS = "no diagnostics for the edit"
LATENCY_WINDOW = 1000
# Requests or edits in a row left unanswered after which the server counts as hung.
SILENT_LIMIT = 3


# ---------------------------------------------------------------- the workspace


def file_paths() -> list[str]:
    return [f"src/{topic}.py" for topic in TOPICS] + [f"docs/{topic}.md" for topic in TOPICS]


def case_line(case_id: str, rng: random.Random) -> str:
    topic, other = rng.sample(TOPICS, 2)
    relevant = [f"src/{topic}.py"] + ([f"docs/{topic}.md"] if rng.random() < 0.5 else [])
    return json.dumps(
        {
            "id": case_id,
            "input": {"query": f"how does the {topic} handle {other}", "corpora": ["code"], "topK": 10},
            "expect": {"relevant": relevant},
        }
    )


def recorded_answer(case: dict, rng: random.Random) -> str:
    """A recorded answer to ``case``: some relevant files at random ranks, some missed,
    a few keyword fallbacks and a few hits without a path (broken cases)."""
    others = [path for path in file_paths() if path not in case["expect"]["relevant"]]
    paths = rng.sample(others, rng.randint(3, 8))
    for relevant in case["expect"]["relevant"]:
        if rng.random() < 0.8:
            paths.insert(rng.randint(0, len(paths)), relevant)
    roll = rng.random()
    if roll < 0.02:
        hits = [{"id": f"chunk-{n}", "score": 1 - n / 20} for n in range(len(paths))]
    else:
        hits = [{"path": path, "score": round(1 - n / 20, 3)} for n, path in enumerate(paths)]
    mode = "keyword" if roll > 0.9 else "semantic"
    return json.dumps({"id": case["id"], "hits": hits, "mode": mode})


def write_workspace(root: Path, cases: int, seed: int) -> tuple[Path, Path]:
    """The soak's workspace under ``root``: the suite file and the dataset."""
    rng = random.Random(seed)
    files = {
        SUITE_FILE: SUITE,
        ".punica/targets.yaml": TARGETS,
        "README.md": "# Soak workspace\n\nSuites over recorded answers.\n",
    }
    for path in file_paths():
        topic = Path(path).stem
        files[path] = f"# {topic}\n\nHow the {topic} works, and what it hands to the next stage.\n"
    lines = [case_line(f"case-{n:05d}", rng) for n in range(cases)]
    files[DATASET_FILE] = "\n".join(lines) + "\n"
    files[RECORDING] = "\n".join(recorded_answer(json.loads(line), rng) for line in lines) + "\n"
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root / SUITE_FILE, root / DATASET_FILE


class TextModel:
    """The client's copy of an open document, kept in step with the edits sent."""

    def __init__(self, uri: str, text: str) -> None:
        self.uri = uri
        self.lines = text.split("\n")
        self.version = 1

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def change(self, line: int, start: int, end_line: int, end: int, text: str) -> dict:
        """Apply one edit and return its ``didChange`` params (ASCII: UTF-16 columns are code points)."""
        head, tail = self.lines[line][:start], self.lines[end_line][end:]
        self.lines[line : end_line + 1] = (head + text + tail).split("\n")
        self.version += 1
        return {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [
                {"range": {"start": {"line": line, "character": start}, "end": {"line": end_line, "character": end}}, "text": text}
            ],
        }


# ---------------------------------------------------------------- the wire


class Wire:
    """A minimal LSP client over the server's stdio: requests with their answer
    times, the last diagnostics per document, and answers to the server's requests."""

    def __init__(self, process: asyncio.subprocess.Process, settings: dict, answer_timeout: float = ANSWER_TIMEOUT_S) -> None:
        self.process = process
        self.settings = settings
        self.answer_timeout = answer_timeout
        self.next_id = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.published: dict[str, tuple[int | None, list[dict]]] = {}
        self.result_codes: Counter[str] = Counter()
        self.shown: Counter[int] = Counter()
        self.shown_messages: Counter[tuple[int, str]] = Counter()
        self.server_requests: Counter[str] = Counter()
        self.log_errors: list[str] = []
        self.log_warnings: Counter[str] = Counter()
        self.log_tail: deque[str] = deque(maxlen=400)
        self.closed = False
        # What went wrong on the wire itself (not an answer): each is unexpected.
        self.problems: list[str] = []
        self._arrived = asyncio.Event()
        self.reader = asyncio.create_task(self._read())
        self.log_reader = asyncio.create_task(self._read_log())

    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            while True:
                header = await stream.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length"))
                body = await stream.readexactly(length)
                arrived = time.perf_counter()
                try:
                    self._dispatch(json.loads(body), arrived)
                except Exception as error:  # noqa: BLE001 - a message this client cannot read is the server's fault
                    self.problems.append(f"a message that is not LSP: {type(error).__name__}: {error}: {body[:200]!r}")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.closed = True
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server closed its output"))
            self._arrived.set()

    def _dispatch(self, message: dict, arrived: float) -> None:
        if "id" in message and "method" in message:
            self.server_requests[message["method"]] += 1
            result: Any = None
            if message["method"] == "workspace/configuration":
                result = [self.settings for _ in message.get("params", {}).get("items", [])]
            asyncio.ensure_future(self._send({"jsonrpc": "2.0", "id": message["id"], "result": result}))
            return
        if "id" in message:
            future = self.pending.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result((arrived, message))
            return
        method, params = message.get("method"), message.get("params") or {}
        if method == "textDocument/publishDiagnostics":
            diagnostics = params.get("diagnostics", [])
            self.published[params["uri"]] = (params.get("version"), diagnostics)
            self.result_codes.update({str(d.get("code")) for d in diagnostics if str(d.get("code", "")).startswith("RAG40")})
        elif method == "window/showMessage":
            self.shown[params.get("type", 0)] += 1
            if len(self.shown_messages) < 1000:
                self.shown_messages[(params.get("type", 0), params.get("message", "")[:160])] += 1
        # Wake whoever waits for a notification.
        self._arrived.set()
        self._arrived = asyncio.Event()

    async def _read_log(self) -> None:
        """Keep the server's stderr drained, remembering errors and tracebacks."""
        stream = self.process.stderr
        assert stream is not None
        in_error = False
        while True:
            line = await stream.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip()
            self.log_tail.append(text)
            if text.startswith(("ERROR:", "CRITICAL:", "Traceback")):
                in_error = True
                self.log_errors.append(text)
            elif text.startswith("WARNING:"):
                in_error = False
                # Counted by kind: the numbers in a warning (ids, lines) vary.
                self.log_warnings[re.sub(r"\d+", "N", text)[:160]] += 1
            elif in_error and len(self.log_errors) < 200:
                self.log_errors[-1] += "\n" + text

    async def _send(self, message: dict) -> None:
        if self.closed or self.process.stdin is None or self.process.stdin.is_closing():
            return
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        try:
            await asyncio.wait_for(self.process.stdin.drain(), self.answer_timeout)
        except ConnectionError:
            self.closed = True
        except asyncio.TimeoutError:
            # A server that stops reading its input is as good as dead.
            self.problems.append(f"the server read nothing of its input for {self.answer_timeout:g} s")
            self.closed = True
            self._arrived.set()

    async def request(self, method: str, params: Any, *, cancel: bool = False, timeout: float | None = None) -> tuple[dict | None, float]:
        """The response to a request (None when none came in ``timeout``, by default
        the answer timeout) and how long it took."""
        timeout = self.answer_timeout if timeout is None else timeout
        self.next_id += 1
        request_id = self.next_id
        future = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        started = time.perf_counter()
        await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if cancel:
            await self._send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}})
        try:
            arrived, message = await asyncio.wait_for(future, timeout)
        except (asyncio.TimeoutError, ConnectionError):
            self.pending.pop(request_id, None)
            return None, time.perf_counter() - started
        return message, arrived - started

    async def notify(self, method: str, params: Any) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def until(self, predicate: Callable[[], bool]) -> float | None:
        """When ``predicate`` came to hold (perf_counter), or None when it did not within the answer timeout."""
        timeout = self.answer_timeout
        deadline = time.perf_counter() + timeout
        while not predicate():
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or self.closed:
                return None
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except asyncio.TimeoutError:
                return None
        return time.perf_counter()

    def diagnostics_at(self, uri: str, version: int) -> bool:
        published = self.published.get(uri)
        return published is not None and published[0] is not None and published[0] >= version


def resident_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


# ---------------------------------------------------------------- the report


@dataclass
class Report:
    requests: int
    cases: int
    seed: int
    warm_up: int
    # kind -> outcome ("ok", "error -32800 RequestCancelled", "no answer", ...) -> count
    outcomes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    # kind -> outcome -> count, for outcomes the protocol does not call for
    unexpected: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    unexpected_examples: list[str] = field(default_factory=list)
    # (message index, kind, seconds)
    latencies: list[tuple[int, str, float]] = field(default_factory=list)
    # (message index, VmRSS MB)
    memory: list[tuple[int, float]] = field(default_factory=list)
    result_codes: Counter[str] = field(default_factory=Counter)
    runs_with_cases: int = 0
    # Cases in the dataset at the start and at the end.
    dataset_lines: tuple[int, int] = (0, 0)
    log_errors: list[str] = field(default_factory=list)
    log_warnings: Counter[str] = field(default_factory=Counter)
    shown_messages: Counter[tuple[int, str]] = field(default_factory=Counter)
    shown: Counter[int] = field(default_factory=Counter)
    alive_at_end: bool = False
    # When the server stopped answering (messages sent by then), and its threads' stacks then.
    hung_at: int | None = None
    stacks: str = ""
    last_answer_ms: float | None = None
    exit_code: int | None = None
    seconds: float = 0.0

    def growth_mb(self) -> float:
        """VmRSS at the end minus VmRSS at the end of the warm-up."""
        after = [mb for index, mb in self.memory if index >= self.warm_up]
        return after[-1] - after[0] if len(after) >= 2 else 0.0

    def failures(self, max_growth_mb: float | None = None) -> list[str]:
        found = []
        if self.hung_at is not None:
            found.append(f"the server stopped answering after {self.hung_at} messages")
        if self.unexpected:
            found.append("unexpected error responses or missing answers")
        if not self.alive_at_end or self.last_answer_ms is None:
            found.append("the server did not answer at the end")
        if self.exit_code != 0:
            found.append(f"the server exited with code {self.exit_code}")
        if self.log_errors:
            found.append(f"the server logged {len(self.log_errors)} error(s)")
        if max_growth_mb is not None and self.growth_mb() > max_growth_mb:
            found.append(f"memory grew by {self.growth_mb():.1f} MB after the warm-up (limit {max_growth_mb:g} MB)")
        return found

    def format(self) -> str:
        out: list[str] = []
        out.append(
            f"soak: {self.requests} messages against one rag-lsp server, {self.cases} cases, seed {self.seed}, "
            f"{self.seconds:.0f} s ({self.requests / max(self.seconds, 1e-9):.0f} messages/s)"
        )
        out.append("")
        out.append("responses by kind")
        out.append(f"  {'kind':<22} {'sent':>6}  outcomes")
        for kind in sorted(self.outcomes):
            counts = self.outcomes[kind]
            text = ", ".join(f"{label} {count}" for label, count in counts.most_common())
            out.append(f"  {kind:<22} {sum(counts.values()):>6}  {text}")
        if self.unexpected:
            out.append("unexpected:")
            for kind, counts in sorted(self.unexpected.items()):
                out.append(f"  {kind}: " + ", ".join(f"{label} {count}" for label, count in counts.items()))
            out.extend(f"  e.g. {example}" for example in self.unexpected_examples)
        else:
            out.append("unexpected: none (only RequestCancelled for cancelled requests, ContentModified)")
        out.append(f"server log: {len(self.log_errors)} error(s), {sum(self.log_warnings.values())} warning(s)")
        out.extend("  " + error.replace("\n", "\n  ") for error in self.log_errors[:5])
        out.extend(f"  {count} x {warning}" for warning, count in self.log_warnings.most_common(5))
        kinds = {1: "error", 2: "warning", 3: "info", 4: "log"}
        shown = ", ".join(f"{kinds.get(kind, kind)} {count}" for kind, count in sorted(self.shown.items())) or "none"
        out.append(f"messages shown to the user: {shown}")
        for (kind, message), count in self.shown_messages.most_common(5):
            out.append(f"  {count} x {kinds.get(kind, kind)}: {message}")
        out.append("")
        out.append("memory (server VmRSS)")
        for index, mb in self.memory:
            mark = "  <- end of warm-up" if index == min((i for i, _ in self.memory if i >= self.warm_up), default=-1) else ""
            out.append(f"  {index:>6} messages  {mb:7.1f} MB{mark}")
        after = [mb for index, mb in self.memory if index >= self.warm_up]
        if len(after) >= 2:
            out.append(
                f"  after the warm-up: {after[0]:.1f} MB -> {after[-1]:.1f} MB at the end "
                f"({self.growth_mb():+.1f} MB, {self.growth_mb() / after[0] * 100:+.1f}%); "
                f"range {min(after):.1f}-{max(after):.1f} MB"
            )
        out.append("")
        window = min(LATENCY_WINDOW, self.requests // 2)
        out.append(f"latency (ms): first {window} messages vs last {window}")
        out.append(f"  {'kind':<22} {'n':>5} {'median':>8} {'p95':>8}   {'n':>5} {'median':>8} {'p95':>8}")
        first = _by_kind(item for item in self.latencies if item[0] < window)
        last = _by_kind(item for item in self.latencies if item[0] >= self.requests - window)
        for kind in sorted(set(first) | set(last)):
            out.append(f"  {kind:<22} {_figures(first.get(kind, []))}   {_figures(last.get(kind, []))}")
        out.append("")
        codes = ", ".join(f"{code}" for code in sorted(self.result_codes)) or "none"
        out.append(f"run results seen: {codes}; runs that ran cases: {self.runs_with_cases}")
        out.append(f"dataset: {self.dataset_lines[0]} lines at the start, {self.dataset_lines[1]} at the end")
        if self.hung_at is not None:
            out.append(f"server: stopped answering after {self.hung_at} messages; its threads then:")
            out.extend("  " + line for line in self.stacks.splitlines())
            return "\n".join(out)
        answered = f"answered a last hover in {self.last_answer_ms:.1f} ms" if self.last_answer_ms is not None else "did not answer"
        out.append(
            f"server: {'alive' if self.alive_at_end else 'DEAD'} at the end, {answered}; "
            f"shutdown and exit: exit code {self.exit_code}"
        )
        return "\n".join(out)


def _by_kind(items: Any) -> dict[str, list[float]]:
    found: dict[str, list[float]] = defaultdict(list)
    for _, kind, seconds in items:
        found[kind].append(seconds * 1000)
    return found


def _figures(values: list[float]) -> str:
    if not values:
        return f"{0:>5} {'-':>8} {'-':>8}"
    values = sorted(values)
    p95 = values[max(0, int(len(values) * 0.95 + 0.5) - 1)]
    return f"{len(values):>5} {statistics.median(values):>8.1f} {p95:>8.1f}"


# ---------------------------------------------------------------- the driver


QUERY = '"query": "'
RELEVANT = '"relevant": ["'
THRESHOLD = re.compile(r"^      (rag\.[a-z.@_0-9]+): (\S+)$")


class Driver:
    """Draws the next message, sends it, and records what came back."""

    def __init__(
        self, wire: Wire, suite: TextModel, dataset: TextModel, report: Report, rng: random.Random, without: frozenset[str] = frozenset()
    ) -> None:
        self.wire = wire
        self.suite = suite
        self.dataset = dataset
        self.report = report
        self.rng = rng
        self.sent = 0
        self.added = 0
        self.lenses: dict[str, list[dict]] = {}
        self.typo: tuple[int, int, str] | None = None  # (line, column, the character taken out)
        self.comment: tuple[int, int, int] | None = None  # (line, start, end)
        self.without = without
        # Messages in a row that got nothing back.
        self.silent = 0
        self.operations: list[tuple[Callable[[], Any], float]] = [
            (self.edit_dataset, 30),
            (self.edit_suite, 7),
            (self.completion, 15),
            (self.hover, 13),
            (self.code_lens, 5),
            (self.resolve_lens, 6),
            (self.code_action, 6),
            (self.document_symbol, 3),
            (self.navigation, 2),
            (self.run_case, 8),
            (self.run_suite, 1),
            (self.clear_results, 1),
            (self.cancelled, 3),
        ]

    # -------------------------------------------------- recording

    def record(self, kind: str, message: dict | None, seconds: float, *, cancelled: bool = False) -> dict | None:
        """Count a response by outcome and keep its latency; the result, or None."""
        index = self.sent
        self.sent += 1
        self.silent = self.silent + 1 if message is None else 0
        if message is None:
            outcome = NO_ANSWER
        elif "error" in message:
            code = message["error"].get("code")
            outcome = f"error {code} {ERROR_NAMES.get(code, '')}".rstrip()
            expected = code == CONTENT_MODIFIED or (cancelled and code == REQUEST_CANCELLED)
            if not expected:
                self._unexpected(kind, outcome, message["error"].get("message", ""))
            self.report.outcomes[kind][outcome] += 1
            return None
        else:
            outcome = "ok"
        self.report.outcomes[kind][outcome] += 1
        if message is None:
            self._unexpected(kind, outcome, f"no answer within {self.wire.answer_timeout:g} s")
            return None
        self.report.latencies.append((index, kind, seconds))
        return message.get("result")

    def _unexpected(self, kind: str, outcome: str, detail: str) -> None:
        self.report.unexpected[kind][outcome] += 1
        if len(self.report.unexpected_examples) < 10:
            self.report.unexpected_examples.append(f"{kind}: {outcome}: {detail[:300]}")

    async def changes(self, kind: str, model: TextModel, edits: list[tuple[int, int, int, int, str]]) -> None:
        """Send ``edits`` as keystrokes (one didChange each), then wait for the diagnostics of the last."""
        start = 0.0
        for edit in edits:
            params = model.change(*edit)
            start = time.perf_counter()
            await self.wire.notify("textDocument/didChange", params)
        version = model.version
        arrived = await self.wire.until(lambda: self.wire.diagnostics_at(model.uri, version))
        for _ in edits[:-1]:
            self.sent += 1
            self.report.outcomes[kind]["keystroke"] += 1
        index = self.sent
        self.sent += 1
        self.silent = self.silent + 1 if arrived is None else 0
        if arrived is None:
            self.report.outcomes[kind][NO_DIAGNOSTICS] += 1
            self._unexpected(kind, NO_DIAGNOSTICS, f"version {version} of {model.uri} after {edits}")
            return
        self.report.outcomes[kind]["diagnosed"] += 1
        self.report.latencies.append((index, kind, arrived - start))

    # -------------------------------------------------- positions

    def case_lines(self, prefix: str = '{"id": "case-') -> list[int]:
        return [n for n, line in enumerate(self.dataset.lines) if line.startswith(prefix)]

    def random_position(self, model: TextModel) -> dict:
        line = self.rng.randrange(len(model.lines))
        return {"line": line, "character": self.rng.randint(0, len(model.lines[line]))}

    def dataset_position(self) -> dict:
        """Inside a case: its id, its query, an expected path, or anywhere on a line."""
        lines = self.case_lines('{"id": "')
        if not lines or self.rng.random() < 0.2:
            return self.random_position(self.dataset)
        line = self.rng.choice(lines)
        text = self.dataset.lines[line]
        marker = self.rng.choice(['{"id": "', QUERY, RELEVANT])
        column = text.find(marker)
        if column < 0:
            return self.random_position(self.dataset)
        column += len(marker) + self.rng.randint(0, 5)
        return {"line": line, "character": min(column, len(text))}

    def suite_position(self) -> dict:
        """On a suite key, a metric name, an engine, a `match` value, a target id, or anywhere."""
        if self.rng.random() < 0.2:
            return self.random_position(self.suite)
        markers = ["rag.", "engines: [", "match: ", "id: rec", "dataset: ", "thresholds:", "options:", "k: ", "target: {"]
        marker = self.rng.choice(markers)
        found = [(n, line.find(marker)) for n, line in enumerate(self.suite.lines) if marker in line]
        line, column = self.rng.choice(found)
        column += self.rng.randint(0, len(marker))
        return {"line": line, "character": min(column, len(self.suite.lines[line]))}

    def some_document(self) -> tuple[TextModel, dict]:
        if self.rng.random() < 0.5:
            return self.dataset, self.dataset_position()
        return self.suite, self.suite_position()

    # -------------------------------------------------- edits

    async def edit_dataset(self) -> None:
        lines = self.dataset.lines
        roll = self.rng.random()
        cases = self.case_lines('{"id": "')
        added = self.case_lines('{"id": "added-')
        broken = [n for n, line in enumerate(lines) if line.startswith('"id": ')]
        if roll < 0.4 and cases:
            # Keystrokes into a query, or deleting one character of it.
            line = self.rng.choice(cases)
            column = lines[line].find(QUERY) + len(QUERY)
            query_length = lines[line].find('"', column) - column
            if self.rng.random() < 0.5 and query_length > 8:
                edits = [(line, column, line, column + 1, "")]
            else:
                edits = [(line, column + n, line, column + n, self.rng.choice("abcdefgh ")) for n in range(self.rng.randint(1, 4))]
        elif roll < 0.55 or (roll < 0.7 and not added):
            self.added += 1
            line = self.rng.randrange(len(lines))
            edits = [(line, 0, line, 0, case_line(f"added-{self.added}", self.rng) + "\n")]
        elif roll < 0.7:
            line = self.rng.choice(added)
            edits = [(line, 0, line + 1, 0, "")]
        elif roll < 0.85 and cases:
            # Another expected path (now and then one that does not exist: RAG203).
            line = self.rng.choice(cases)
            start = lines[line].find(RELEVANT) + len(RELEVANT)
            end = lines[line].find('"', start)
            paths = [*file_paths(), "src/missing.py"]
            path = self.rng.choice([path for path in paths if path != lines[line][start:end]])
            edits = [(line, start, line, end, path)]
        elif broken:
            # Mend a line broken before.
            line = self.rng.choice(broken)
            edits = [(line, 0, line, 0, "{")]
        elif cases:
            # Break a line: it is no longer JSON (RAG002).
            line = self.rng.choice(cases)
            edits = [(line, 0, line, 1, "")]
        else:
            return await self.edit_suite()
        await self.changes("edit dataset", self.dataset, edits)

    async def edit_suite(self) -> None:
        lines = self.suite.lines
        roll = self.rng.random()
        if self.typo is not None:
            line, column, character = self.typo
            self.typo = None
            edits = [(line, column, line, column, character)]
        elif roll < 0.5:
            line = self.rng.choice([n for n, text in enumerate(lines) if THRESHOLD.match(text)])
            match = THRESHOLD.match(lines[line])
            assert match is not None
            # Always a different value: an edit that changes nothing gets no diagnostics of its own.
            values = ["1", "0.9"] if match.group(1) == "rag.mode.semantic" else [f"0.{n}" for n in range(1, 10)]
            value = self.rng.choice([value for value in values if value != match.group(2)])
            edits = [(line, match.start(2), line, match.end(2), value)]
        elif roll < 0.75:
            # Mistype a metric name (RAG101); the next suite edit corrects it.
            line = self.rng.choice([n for n, text in enumerate(lines) if THRESHOLD.match(text)])
            match = THRESHOLD.match(lines[line])
            assert match is not None
            column = match.end(1) - 1
            self.typo = (line, column, lines[line][column])
            edits = [(line, column, line, column + 1, "")]
        elif self.comment is None:
            line = self.rng.choice([n for n, text in enumerate(lines) if text.endswith(("thresholds:", "options:"))])
            start = len(lines[line])
            typed = "  # tuned"[: self.rng.randint(3, 9)]
            edits = [(line, start + n, line, start + n, character) for n, character in enumerate(typed)]
            self.comment = (line, start, start + len(typed))
        else:
            line, start, end = self.comment
            self.comment = None
            edits = [(line, start, line, end, "")]
        await self.changes("edit suite", self.suite, edits)

    # -------------------------------------------------- requests

    @staticmethod
    def at(model: TextModel, position: dict) -> dict:
        return {"textDocument": {"uri": model.uri}, "position": position}

    async def completion(self) -> None:
        model, position = self.some_document()
        message, seconds = await self.wire.request("textDocument/completion", self.at(model, position))
        self.record("completion", message, seconds)

    async def hover(self) -> None:
        model, position = self.some_document()
        message, seconds = await self.wire.request("textDocument/hover", self.at(model, position))
        self.record("hover", message, seconds)

    async def cancelled(self) -> None:
        model, position = self.some_document()
        method = self.rng.choice(["textDocument/hover", "textDocument/completion"])
        message, seconds = await self.wire.request(method, self.at(model, position), cancel=True)
        self.record(f"{method.split('/')[1]} (cancelled)", message, seconds, cancelled=True)

    async def code_lens(self) -> None:
        model = self.rng.choice([self.dataset, self.suite])
        message, seconds = await self.wire.request("textDocument/codeLens", {"textDocument": {"uri": model.uri}})
        result = self.record("codeLens", message, seconds)
        if isinstance(result, list):
            self.lenses[model.uri] = result

    async def resolve_lens(self) -> None:
        known = [lenses for lenses in self.lenses.values() if lenses]
        if not known:
            return await self.code_lens()
        lens = self.rng.choice(self.rng.choice(known))
        message, seconds = await self.wire.request("codeLens/resolve", lens)
        self.record("codeLens/resolve", message, seconds)

    async def code_action(self) -> None:
        model, position = self.some_document()
        line = position["line"]
        span = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": len(model.lines[line])}}
        _, published = self.wire.published.get(model.uri, (None, []))
        here = [d for d in published if d["range"]["start"]["line"] <= line <= d["range"]["end"]["line"]][:5]
        context: dict[str, Any] = {"diagnostics": here}
        if not here and self.rng.random() < 0.5:
            context["only"] = ["source"]
        message, seconds = await self.wire.request(
            "textDocument/codeAction", {"textDocument": {"uri": model.uri}, "range": span, "context": context}
        )
        self.record("codeAction", message, seconds)

    async def document_symbol(self) -> None:
        model = self.rng.choice([self.dataset, self.suite])
        message, seconds = await self.wire.request("textDocument/documentSymbol", {"textDocument": {"uri": model.uri}})
        self.record("documentSymbol", message, seconds)

    async def navigation(self) -> None:
        model, position = self.some_document()
        if self.rng.random() < 0.5:
            message, seconds = await self.wire.request("textDocument/definition", self.at(model, position))
            self.record("definition", message, seconds)
        else:
            message, seconds = await self.wire.request("textDocument/documentLink", {"textDocument": {"uri": model.uri}})
            self.record("documentLink", message, seconds)

    async def execute(self, kind: str, command: str, arguments: list) -> dict | None:
        message, seconds = await self.wire.request("workspace/executeCommand", {"command": command, "arguments": arguments})
        result = self.record(kind, message, seconds)
        if isinstance(result, dict) and any(suite.get("cases") for suite in result.get("suites", [])):
            self.report.runs_with_cases += 1
        return result

    async def run_case(self) -> None:
        lines = self.case_lines()
        if not lines:
            return await self.hover()
        suite = self.rng.choice([*SUITE_IDS, None])
        arguments: dict[str, Any] = {"uri": self.dataset.uri, "line": self.rng.choice(lines)}
        if suite is not None:
            arguments["suite"] = suite
        await self.execute("runCase", "ragLsp.runCase", [arguments])

    async def run_suite(self) -> None:
        roll = self.rng.random()
        if roll < 0.4:
            arguments: dict[str, Any] = {"uri": self.suite.uri, "suite": self.rng.choice(SUITE_IDS)}
        elif roll < 0.7:
            arguments = {"uri": self.suite.uri, "line": 2}
        else:
            arguments = {"uri": self.dataset.uri, "suite": "soak"}
        await self.execute("runSuite", "ragLsp.runSuite", [arguments])

    async def clear_results(self) -> None:
        arguments = [{"uri": self.rng.choice([self.dataset.uri, self.suite.uri])}] if self.rng.random() < 0.7 else []
        await self.execute("clearResults", "ragLsp.clearResults", arguments)

    async def next(self) -> None:
        operations, weights = zip(*[(operation, weight) for operation, weight in self.operations if operation.__name__ not in self.without])
        await self.rng.choices(operations, weights)[0]()


# The kinds of message the driver draws from (Driver.operations), as --without names them.
OPERATIONS = [
    *("edit_dataset", "edit_suite", "completion", "hover", "code_lens", "resolve_lens", "code_action"),
    *("document_symbol", "navigation", "run_case", "run_suite", "clear_results", "cancelled"),
]

CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "window": {"workDoneProgress": True, "showMessage": {}},
    "workspace": {
        "configuration": True,
        "workspaceFolders": True,
        "didChangeWatchedFiles": {"dynamicRegistration": True},
        "codeLens": {"refreshSupport": True},
        "executeCommand": {},
    },
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
        "completion": {"completionItem": {"snippetSupport": True, "documentationFormat": ["markdown", "plaintext"]}},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "codeLens": {},
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}}},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "definition": {"linkSupport": True},
        "documentLink": {},
    },
}


async def soak(
    root: Path,
    *,
    requests: int = 10_000,
    cases: int = 500,
    seed: int = 1,
    sample_every: int = 500,
    without: frozenset[str] = frozenset(),
    answer_timeout: float = ANSWER_TIMEOUT_S,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Write the workspace under ``root``, start one server, send ``requests`` messages, stop it; what happened."""
    suite_path, dataset_path = write_workspace(root, cases, seed)
    report = Report(requests=requests, cases=cases, seed=seed, warm_up=max(min(1000, requests // 2), requests // 10))
    process = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        limit=1 << 26,
    )
    wire = Wire(process, SETTINGS, answer_timeout)
    began = time.perf_counter()
    try:
        initialized, _ = await wire.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": CAPABILITIES,
                "initializationOptions": SETTINGS,
            },
        )
        if initialized is None or "error" in initialized:
            raise RuntimeError(f"the server did not initialize: {initialized}")
        await wire.notify("initialized", {})
        models = []
        for path, language in ((suite_path, "yaml"), (dataset_path, "jsonl")):
            model = TextModel(path.as_uri(), path.read_text(encoding="utf-8"))
            await wire.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": model.uri, "languageId": language, "version": 1, "text": model.text}},
            )
            models.append(model)
        for model in models:
            if await wire.until(lambda model=model: wire.diagnostics_at(model.uri, 1)) is None:
                raise RuntimeError(f"no diagnostics for {model.uri} after opening it")
        driver = Driver(wire, models[0], models[1], report, random.Random(seed), without)
        report.memory.append((0, resident_mb(process.pid)))
        next_sample = sample_every
        while driver.sent < requests and not wire.closed:
            if driver.silent >= SILENT_LIMIT:
                report.hung_at = driver.sent
                break
            await driver.next()
            if driver.sent >= next_sample or driver.sent >= requests:
                report.memory.append((min(driver.sent, requests), resident_mb(process.pid)))
                if progress is not None:
                    progress(f"{driver.sent} messages, {report.memory[-1][1]:.1f} MB, {time.perf_counter() - began:.0f} s")
                next_sample = (driver.sent // sample_every + 1) * sample_every
        report.alive_at_end = process.returncode is None and not wire.closed and report.hung_at is None
        if report.hung_at is not None:
            # SIGABRT: faulthandler writes every thread's stack to stderr, and the server ends.
            process.send_signal(signal.SIGABRT)
            try:
                report.exit_code = await asyncio.wait_for(process.wait(), 15)
                await asyncio.wait_for(wire.log_reader, 5)
            except asyncio.TimeoutError:
                pass
            report.stacks = "\n".join(wire.log_tail)
            return report
        report.dataset_lines = (cases, sum(1 for line in driver.dataset.lines if line))
        last, seconds = await wire.request("textDocument/hover", Driver.at(models[0], {"line": 9, "character": 8}))
        if last is not None and "error" not in last:
            report.last_answer_ms = seconds * 1000
        await wire.request("shutdown", None, timeout=15)
        await wire.notify("exit", None)
        try:
            report.exit_code = await asyncio.wait_for(process.wait(), 15)
        except asyncio.TimeoutError:
            report.exit_code = None
    finally:
        report.seconds = time.perf_counter() - began
        if process.returncode is None:
            process.kill()
            await process.wait()
        for task in (wire.reader, wire.log_reader):
            try:
                await asyncio.wait_for(task, 5)
            except asyncio.TimeoutError:
                task.cancel()
        report.result_codes = wire.result_codes
        report.log_errors = wire.log_errors
        report.log_warnings = wire.log_warnings
        report.shown = wire.shown
        report.shown_messages = wire.shown_messages
        for problem in wire.problems:
            report.unexpected["wire"][problem.split(":")[0]] += 1
            if len(report.unexpected_examples) < 10:
                report.unexpected_examples.append(f"wire: {problem}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000, help="messages to send (default 10000)")
    parser.add_argument("--cases", type=int, default=500, help="cases in the dataset (default 500)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sample-every", type=int, default=500, help="messages between memory samples (default 500)")
    parser.add_argument(
        "--max-growth-mb", type=float, default=10.0, help="memory growth after the warm-up that fails the soak (default 10)"
    )
    parser.add_argument(
        "--answer-timeout",
        type=float,
        default=ANSWER_TIMEOUT_S,
        help=f"seconds a request may take before it counts as unanswered (default {ANSWER_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        choices=OPERATIONS,
        metavar="KIND",
        help="leave out a kind of message (repeatable): " + ", ".join(OPERATIONS),
    )
    parser.add_argument("--keep", type=Path, help="write the workspace here and keep it (default: a temporary folder)")
    arguments = parser.parse_args()

    def progress(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def run(root: Path) -> Report:
        return asyncio.run(
            soak(
                root,
                requests=arguments.requests,
                cases=arguments.cases,
                seed=arguments.seed,
                sample_every=arguments.sample_every,
                without=frozenset(arguments.without),
                answer_timeout=arguments.answer_timeout,
                progress=progress,
            )
        )

    if arguments.keep is not None:
        arguments.keep.mkdir(parents=True, exist_ok=True)
        report = run(arguments.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="rag-lsp-soak-") as folder:
            report = run(Path(folder).resolve())
    print(report.format())
    failures = report.failures(arguments.max_growth_mb)
    print("verdict: " + ("; ".join(failures) if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
