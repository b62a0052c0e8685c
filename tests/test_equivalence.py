"""Random incremental edits, end to end: whatever changes an editor sends to a suite
and its dataset (insertions, deletions, multi-line replacements, whole-text
replacements, non-ASCII text, CRLF line endings, several changes in one
notification, bursts of notifications, closing and reopening), the server's copy
of each document equals the editor's, and the diagnostics it last published (for
a version with the text the document has now) equal those of a fresh
``rag-lsp check`` of the same texts.

A hypothesis state machine plays the editor against a real ``rag-lsp serve``. It
keeps its own copy of both documents, applies each change to it as LSP says
(ranges in UTF-16 code units, the changes of one notification in order), and after
every step compares with the server: the text the server holds
(``ragLsp/documentText``), and its diagnostics against ``rag-lsp check --format
json`` run on the same texts written to a copy of the workspace. A finding of one
file depends on the other (a suite reads its dataset's rows, a dataset is checked
with its suite's ``match``), so both are compared after every step.

One server serves every example of a test: starting Python per example would take
the whole run. Each example edits the files of a workspace of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import itertools
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from lspclient import SERVER, TIMEOUT_S, codes, diagnostics, edit, open_file, published_when, start
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from rag_lsp.cli import main as cli_main
from rag_lsp.core.reading.findings import Finding, Severity, shown_in_editor
from rag_lsp.core.reading.text import Range

# Slow (random edits held to a fresh check through the server): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

DOCUMENT_TEXT = "ragLsp/documentText"
SUITE = ".punica/evals/x.suite.yaml"
DATASET = ".punica/evals/x.jsonl"
# Files the cases may name: RAG203 holds for other paths, not for these.
WORKSPACE_FILES = {"src/a.py": "print('a')\n", "docs/b.md": "# B\n", "docs/ü.md": "# Ü\n"}
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
# The most findings of one code the server shows for a file here: few enough that
# edits often cross it, so the summary of those left out is held to the CLI too.
SHOWN = 3

# ---------------------------------------------------------------- texts

SUITE_TEXT = """\
# Suite für die Tests — 日本 😀
suites:
  - id: code
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/x.jsonl
    engines: [rag]
    options:
      rag: {match: path, k: 5}
    thresholds:
      rag.recall: 0.8   # über 😀
      rag.mode.semantic: 1
"""
SUITES = [
    SUITE_TEXT,
    SUITE_TEXT.replace("match: path", "match: id"),
    SUITE_TEXT.replace("match: path, k: 5", "match: corpus, k: 50"),
    SUITE_TEXT.replace("      rag.mode.semantic: 1\n", "      rag.retrieved: 3\n      rag.precision: 1.5\n"),
    (
        "suites:\n  - id: gdi\n    target: {kind: capability, id: vectors.query}\n    dataset: .punica/evals/x.jsonl\n"
        "    metrics:\n      rag.hit_at_k: {k: 3, t1: 0.7}\n    thresholds: {rag.hit_at_k: 0.5}\n"
    ),
    "suites:\n  - id: code\n    dataset: ../x.jsonl\n    engines: [rga]\n",
    # A target that does not search the workspace: expected paths are not checked against it.
    SUITE_TEXT.replace("id: vectors.query", "id: kb.search"),
]

ROWS = [
    '{"id": "app", "input": {"query": "wo ist die App? 日本", "corpora": ["code"], "topK": 10}, "expect": {"relevant": ["src/a.py"]}}',
    '{"id": "docs", "input": {"query": "😀 docs", "corpora": ["code"], "topK": 3}, "expect": {"relevant": ["docs/b.md", "docs/missing.md"]}}',
    '{"id": "ü", "input": {"query": "umlaut"}, "expect": {"relevant": ["docs/ü.md", "docs/ü.md"]}}',
    '{"id": "empty", "input": {"query": "é"}, "expect": {"relevant": []}}',
    '{"id": "app", "input": {"query": "dup"}, "expect": {"relevant": ["./src/a.py"]}}',
    '{"id": "no-expect", "input": {"query": "x"}, "expect": {}}',
    '{"id": "corpus", "input": {"query": "c", "corpora": ["code"]}, "expect": {"relevant": ["tickets", "code"]}}',
    '{"id": "broken", "input": {"query": "x"',
    '{"id": 𝄞}',
    '["not", "an", "object"]',
    '{"input_id": "g1", "prompt": "p", "reference_contexts": ["alpha beta"], "sut_response": "r", "retrieved_context": ["alpha beta"]}',
    '{"input_id": "g2", "prompt": "p", "reference_contexts": [], "sut_response": "r", "retrieved_context": []}',
    '{"input_id": "g1", "prompt": "again", "reference_contexts": ["alpha"], "sut_response": "r", "retrieved_context": ["beta"]}',
    '{"id": "a", "id": "b", "input": {"query": "q"}, "expect": {"relevant": ["src\\\\a.py", "docs/"]}}',
    "",
    "   ",
    # Causes a dataset written by another tool has on every row: a grade written as a fraction, an expected
    # value written as an object, an empty `corpora`, a key of the tool's own.
    '{"id": "g", "input": {"query": "g", "corpora": []}, "expect": {"relevant": ["src/a.py"], "grades": {"src/a.py": 0.5}}, "tool": 1}',
    '{"tool": 1, "id": "o", "input": {"query": "o"}, "expect": {"relevant": [{"path": "src/a.py"}, "src/a.py"]}}',
    # 21 documents of a corpus indexed elsewhere: with them, most expected paths may be missing.
    '{"id": "kb", "input": {"query": "faq"}, "expect": {"relevant": [' + ", ".join(f'"kb/{n}.html"' for n in range(21)) + "]}}",
]

# Pieces of text an edit inserts. A "\r" only ever comes as part of "\r\n": a lone
# "\r" is a line break to LSP but not to the server's copy (nor to rag-lsp check).
PIECES = [
    "\r\n",
    "\n",
    "é",
    "日本語",
    "😀",
    "𝄞x",
    "\u2028",
    "\t",
    "\x00",
    '"',
    ",",
    "}",
    "{",
    ":",
    "[]",
    "  ",
    "#",
    '"id": "app"',
    '"relevant": []',
    '"./src/a.py"',
    '"docs/b.md", ',
    '"src/nope.py"',
    '"topK": 1, ',
    "suites:\n",
    "  - id: code\n",
    "    engines: [rag]\n",
    "match: id",
    "match: corpus",
    "k: 50",
    "rag.recall: 0.8",
    "rag.retrieved: 1\n",
    "rag.mode.semantic: 1",
    "dataset: .punica/evals/x.jsonl",
    "metrics: {rag.hit_at_k: {k: 3}}",
    "&a [x]",
    "*a",
    "'",
    "- ",
]
CHARACTERS = list("{}[]\":, -_./\\#&*|>'az0\n") + ["é", "ß", "日", "😀", "𝄞", "\u2028", "\t"]

texts = st.lists(
    st.one_of(st.sampled_from(PIECES), st.sampled_from(ROWS), st.text(st.sampled_from(CHARACTERS), max_size=6)),
    min_size=1,
    max_size=3,
).map("".join)
endings = st.sampled_from(["\n", "\r\n"])
seeds = st.integers(0, 1 << 20)


def with_endings(lines: list[str], style: str, final: bool) -> str:
    """Lines joined by "\\n", by "\\r\\n", or by the two in turn; ``final``: one after the last."""
    if style == "mixed":
        breaks = ["\r\n" if index % 2 else "\n" for index in range(len(lines))]
    else:
        breaks = [style] * len(lines)
    text = "".join(line + ending for line, ending in zip(lines, breaks))
    return text if final else text[: -len(breaks[-1])] if lines else text


styles = st.sampled_from(["\n", "\r\n", "mixed"])
suite_texts = st.builds(lambda text, style: with_endings(text.splitlines(), style, True), st.sampled_from(SUITES), styles)
dataset_texts = st.builds(
    with_endings, st.lists(st.sampled_from(ROWS), min_size=1, max_size=6), styles, st.booleans()
)

# ---------------------------------------------------------------- the editor's copy


@dataclass(frozen=True)
class Spot:
    """A place a change may start or end at: its LSP position and its offset in the text."""

    line: int
    character: int  # UTF-16 code units
    offset: int  # code points


def spots(text: str) -> list[Spot]:
    """Every position of ``text`` in order, as LSP counts them: never between the
    "\\r" and "\\n" of a line ending, and never inside a surrogate pair (a character
    beyond the BMP takes two UTF-16 code units, so its column skips one)."""
    found = []
    offset = 0
    for line, row in enumerate(text.split("\n")):
        content = row.removesuffix("\r")
        column = 0
        for index, character in enumerate(content):
            found.append(Spot(line, column, offset + index))
            column += 2 if ord(character) > 0xFFFF else 1
        found.append(Spot(line, column, offset + len(content)))
        offset += len(row) + 1
    return found


def line_starts(text: str) -> list[Spot]:
    return [spot for spot in spots(text) if spot.character == 0]


Change = types.TextDocumentContentChangePartial | types.TextDocumentContentChangeWholeDocument


@dataclass(frozen=True)
class Edit:
    """One change an editor may send, placed on the text it applies to by seeds
    (so the same edit fits any text): ``at`` picks where it starts, ``span`` how far
    it reaches, ``text`` is what replaces the range."""

    kind: str  # insert, delete, replace, insert_line, delete_line; whole: an insert sent as the whole text
    at: int
    span: int = 0
    text: str = ""

    def change(self, text: str) -> tuple[Change, str]:
        """The change to send for this edit of ``text``, and the text it gives."""
        start, end, new_text = self.place(text)
        edited = text[: start.offset] + new_text + text[end.offset :]
        if self.kind == "whole":
            return types.TextDocumentContentChangeWholeDocument(text=edited), edited
        return change_of(start, end, new_text), edited

    def place(self, text: str) -> tuple[Spot, Spot, str]:
        every = spots(text)
        if self.kind in ("insert_line", "delete_line"):
            starts = line_starts(text)
            line = starts[self.at % len(starts)]
            if self.kind == "insert_line":
                return line, line, self.text
            following = [spot for spot in starts if spot.line == line.line + 1]
            if following:
                return line, following[0], ""
            # The last line: remove it with the line ending before it.
            start = every[max(0, every.index(line) - 1)]
            return start, every[-1], ""
        first = self.at % len(every)
        reach = {"insert": 0, "whole": 0, "delete": 60, "replace": 400}[self.kind]
        last = min(len(every) - 1, first + (self.span % (reach + 1)))
        return every[first], every[last], "" if self.kind == "delete" else self.text


def change_of(start: Spot, end: Spot, new_text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(start.line, start.character), types.Position(end.line, end.character)),
        text=new_text,
    )


any_edit = st.one_of(
    st.builds(Edit, st.just("insert"), seeds, st.just(0), texts),
    st.builds(Edit, st.just("delete"), seeds, seeds),
    st.builds(Edit, st.just("replace"), seeds, seeds, texts),
    st.builds(Edit, st.just("insert_line"), seeds, st.just(0), st.builds(str.__add__, st.sampled_from(ROWS), endings)),
    st.builds(Edit, st.just("delete_line"), seeds),
    st.builds(Edit, st.just("insert"), seeds, st.just(0), st.just("\r\n")),
    # A change that changes nothing (an editor sends them, e.g. for an empty paste).
    st.builds(Edit, st.just("insert"), seeds, st.just(0), st.just("")),
    st.builds(Edit, st.just("whole"), seeds, st.just(0), texts),
)
documents = st.sampled_from([SUITE, DATASET])


@dataclass
class EditorDocument:
    uri: str
    text: str
    version: int = 1
    # The text of every version sent: diagnostics may be published for an older
    # version than the last (a change that changed nothing needs no new ones), but
    # only for one with the same text as now.
    texts: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.texts[self.version] = self.text

    def sent(self, text: str) -> None:
        self.version += 1
        self.text = self.texts[self.version] = text


# ---------------------------------------------------------------- the server


def write_workspace(root: Path, texts: dict[str, str]) -> None:
    """A workspace (``.punica/`` makes it the root) with the files cases name and ``texts``."""
    (root / ".punica" / "evals").mkdir(parents=True, exist_ok=True)
    for relative, text in {**WORKSPACE_FILES, **texts}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


class Editor:
    """A client talking to ``rag-lsp serve``, its event loop on a thread of its own:
    hypothesis runs a state machine synchronously, the client is asyncio.

    The server publishes a file's diagnostics only when they (or its version)
    changed, so waiting on a document cannot tell "nothing more is coming". A
    sentinel dataset, in a workspace of its own, is edited after each step instead:
    the pass that publishes its new version has seen every change sent before, and
    a request answered after that publication means its notifications were all read.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="lsp-client", daemon=True)
        self.thread.start()
        self.client: LanguageClient = self.call(SERVER.start())
        self.call(start(self.client, None, options={"maxFindingsShown": SHOWN}))
        self.workspaces = itertools.count(1)
        sentinel = folder / "sentinel"
        write_workspace(sentinel, {DATASET: '{"id": "0"}\n'})
        self.sentinel_version = 1
        self.sentinel_uri = self.call(self._open(sentinel / DATASET, '{"id": "0"}\n', 1))

    def call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(TIMEOUT_S * 2)

    def stop(self) -> None:
        try:
            self.call(self.client.shutdown_session())
            self.call(self.client.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(TIMEOUT_S)

    # Coroutines, run on the client's loop (its transport is not thread-safe).

    async def _open(self, path: Path, text: str, version: int) -> str:
        return open_file(self.client, path, text, version)

    async def _close(self, uris: list[str]) -> None:
        for uri in uris:
            self.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))

    async def _change(self, uri: str, version: int, changes: list[Change]) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=changes
            )
        )

    async def _settle(self, uris: list[str]) -> dict[str, tuple[Any, Any]]:
        old = f'{{"id": "{self.sentinel_version - 1}"}}'
        new = f'{{"id": "{self.sentinel_version}"}}'
        self.sentinel_version += 1
        change = change_of(Spot(0, 0, 0), Spot(0, len(old), len(old)), new)
        await self._change(self.sentinel_uri, self.sentinel_version, [change])
        await diagnostics(self.client, self.sentinel_uri, self.sentinel_version)
        answers = {}
        for uri in uris:
            held = await self.client.protocol.send_request_async(DOCUMENT_TEXT, {"uri": uri})
            answers[uri] = (self.client.published.get(uri), held)  # type: ignore[attr-defined]
        return answers

    # The state machine's side.

    def new_workspace(self, texts: dict[str, str]) -> Path:
        root = self.folder / f"edits-{next(self.workspaces)}"
        write_workspace(root, texts)
        return root

    def open(self, path: Path, text: str, version: int = 1) -> str:
        return self.call(self._open(path, text, version))

    def close(self, uris: list[str]) -> None:
        self.call(self._close(uris))

    def change(self, uri: str, version: int, changes: list[Change]) -> None:
        self.call(self._change(uri, version, changes))

    def settle(self, uris: list[str]) -> dict[str, tuple[Any, Any]]:
        """Once the server has checked everything sent: per URI, the last
        publishDiagnostics and the server's answer to ``ragLsp/documentText``."""
        return self.call(self._settle(uris))


def finding(code: str, start: tuple[int, int], end: tuple[int, int], severity: str, message: str) -> tuple:
    return (code, f"{start[0]}:{start[1]}-{end[0]}:{end[1]}", severity, message)


def published_findings(params: types.PublishDiagnosticsParams) -> list[tuple]:
    return sorted(
        finding(
            str(item.code),
            (item.range.start.line, item.range.start.character),
            (item.range.end.line, item.range.end.character),
            SEVERITIES[int(item.severity or 1)],
            item.message,
        )
        for item in params.diagnostics
    )


def fresh_check(root: Path, texts: dict[str, str], shown: int | None = None) -> dict[str, list[tuple]]:
    """``rag-lsp check --format json`` (run in this process) of ``texts`` written
    into the workspace ``root``, by path; with ``shown``, what an editor is shown
    of each file's findings (see shown_in_editor) with that limit per code."""
    for relative, text in texts.items():
        (root / relative).write_bytes(text.encode("utf-8"))
    out = io.StringIO()
    collecting = gc.isenabled()
    try:
        with contextlib.redirect_stdout(out):
            code = cli_main(["check", "--format", "json", "--fail-on", "never", str(root)])
    finally:
        if collecting:  # the command line turns the collector off for its one-shot run
            gc.enable()
    assert code == 0, "rag-lsp check failed (its error is on stderr)"
    by_path: dict[str, list[Finding]] = {relative: [] for relative in texts}
    for item in json.loads(out.getvalue()):
        start, end = item["range"]["start"], item["range"]["end"]
        where = Range.of(start["line"], start["character"], end["line"], end["character"])
        by_path.setdefault(item["path"], []).append(Finding(item["code"], Severity.parse(item["severity"]), where, item["message"], item["path"]))
    found: dict[str, list[tuple]] = {}
    for relative, items in by_path.items():
        if shown is not None:
            items = shown_in_editor(items, shown)
        found[relative] = sorted(
            finding(item.code, (item.range.start.line, item.range.start.character), (item.range.end.line, item.range.end.character), item.severity.label, item.message)
            for item in items
        )
    return found


# ---------------------------------------------------------------- the machine


class EditingSession(RuleBasedStateMachine):
    """An editor with a suite and its dataset open, editing both at random."""

    def __init__(self, editor: Editor, fresh_root: Path) -> None:
        super().__init__()
        self.editor = editor
        self.fresh_root = fresh_root
        self.documents: dict[str, EditorDocument] = {}
        self.root: Path | None = None  # the workspace of this example, once opened

    @initialize(suite=suite_texts, dataset=dataset_texts)
    def open_both(self, suite: str, dataset: str) -> None:
        texts = {SUITE: suite, DATASET: dataset}
        self.root = self.editor.new_workspace(texts)
        for relative, text in texts.items():
            self.documents[relative] = EditorDocument(self.editor.open(self.root / relative, text), text)

    def send(self, relative: str, groups: list[list[Edit]]) -> None:
        """Apply each group of edits to the editor's copy and send it as one didChange."""
        document = self.documents[relative]
        for group in groups:
            changes = []
            text = document.text
            for one in group:
                change, text = one.change(text)
                changes.append(change)
            document.sent(text)
            self.editor.change(document.uri, document.version, changes)
        # What the edits may produce is what the server may receive: no lone "\r".
        assert "\r" not in document.text.replace("\r\n", "")

    @rule(document=documents, at=seeds, text=texts)
    def insert(self, document: str, at: int, text: str) -> None:
        self.send(document, [[Edit("insert", at, 0, text)]])

    @rule(document=documents, at=seeds, span=seeds)
    def delete(self, document: str, at: int, span: int) -> None:
        self.send(document, [[Edit("delete", at, span)]])

    @rule(document=documents, at=seeds, span=seeds, text=texts)
    def replace_lines(self, document: str, at: int, span: int, text: str) -> None:
        self.send(document, [[Edit("replace", at, span, text)]])

    @rule(document=documents, at=seeds, row=st.sampled_from(ROWS), ending=endings)
    def insert_line(self, document: str, at: int, row: str, ending: str) -> None:
        self.send(document, [[Edit("insert_line", at, 0, row + ending)]])

    @rule(document=documents, at=seeds)
    def delete_line(self, document: str, at: int) -> None:
        self.send(document, [[Edit("delete_line", at)]])

    @rule(document=documents, edits=st.lists(any_edit, min_size=2, max_size=4))
    def several_changes_in_one_notification(self, document: str, edits: list[Edit]) -> None:
        self.send(document, [edits])

    @rule(document=documents, edits=st.lists(any_edit, min_size=2, max_size=4))
    def burst_of_notifications(self, document: str, edits: list[Edit]) -> None:
        self.send(document, [[one] for one in edits])

    @rule(edits=st.lists(st.tuples(documents, any_edit), min_size=2, max_size=4))
    def both_files_in_turn(self, edits: list[tuple[str, Edit]]) -> None:
        for document, one in edits:
            self.send(document, [[one]])

    @rule(document=documents)
    def close_and_reopen(self, document: str) -> None:
        # Meanwhile the server checks the file on disk (the text it was created with).
        state = self.documents[document]
        assert self.root is not None
        self.editor.close([state.uri])
        state.sent(state.text)
        self.editor.open(self.root / document, state.text, state.version)

    @invariant()
    def server_agrees_with_a_fresh_check(self) -> None:
        uris = {document.uri: relative for relative, document in self.documents.items()}
        answers = self.editor.settle(list(uris))
        expected = fresh_check(self.fresh_root, {relative: document.text for relative, document in self.documents.items()}, SHOWN)
        for uri, (published, held) in answers.items():
            relative = uris[uri]
            document = self.documents[relative]
            assert (held.version, held.text) == (document.version, document.text), f"the server's copy of {relative}"
            assert published is not None, f"nothing published for {relative}"
            assert published.version is not None, f"{relative} is open, its diagnostics were published as a closed file's"
            assert document.texts.get(published.version) == document.text, f"diagnostics of {relative} published for other text"
            assert published_findings(published) == expected[relative], f"diagnostics of {relative}"

    def teardown(self) -> None:
        self.editor.close([document.uri for document in self.documents.values()])


@pytest.fixture
def editor(tmp_path: Path):
    running = Editor(tmp_path)
    try:
        yield running
    finally:
        running.stop()


def test_random_edits_keep_the_server_equal_to_a_fresh_check(editor: Editor, tmp_path: Path) -> None:
    """After any sequence of random edits, the server holds the editor's text and publishes what a fresh check finds."""
    fresh_root = tmp_path / "fresh"
    write_workspace(fresh_root, {})
    run_state_machine_as_test(
        lambda: EditingSession(editor, fresh_root),
        settings=settings(
            max_examples=30,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def test_findings_overtaken_by_an_edit_that_changes_nothing_are_published(client: LanguageClient, tmp_path: Path) -> None:
    """A suite edited during a check, then sent a change that changes nothing before the check ends, still gets its new findings."""
    # Enough cases that checking them all (the suite's edit changes how they are
    # read) outlasts the client sending its next change.
    dataset = "".join(ROWS[0].replace('"app"', f'"case-{number}"') + "\n" for number in range(2000))
    write_workspace(tmp_path, {SUITE: SUITE_TEXT, DATASET: dataset})
    await start(client, tmp_path)
    suite_uri = open_file(client, tmp_path / SUITE, SUITE_TEXT)
    dataset_uri = open_file(client, tmp_path / DATASET, dataset)
    assert codes(await diagnostics(client, suite_uri, 1)) == []
    await diagnostics(client, dataset_uri, 1)

    line = SUITE_TEXT.splitlines().index("    engines: [rag]")
    column = SUITE_TEXT.splitlines()[line].index("rag")
    edit(client, suite_uri, 2, line, column, column + 3, "rga")
    edit(client, dataset_uri, 2, 0, 0, 0, " ")  # a dataset edit is checked at once, with the suite's
    edit(client, suite_uri, 3, 0, 0, 0, "")
    found = await published_when(client, suite_uri, lambda items: codes(items) == ["RAG100"])
    assert found[0].range.start == types.Position(line, column)
    assert client.published[suite_uri].version in (2, 3)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- ragLsp/documentText


async def test_document_text_answers_the_servers_copy(client: LanguageClient, tmp_path: Path) -> None:
    """ragLsp/documentText answers an open document's text and version after edits, and refuses a document that is not open."""
    write_workspace(tmp_path, {DATASET: ROWS[0] + "\r\n"})
    await start(client, tmp_path)
    uri = open_file(client, tmp_path / DATASET, "é😀\r\nb\n")
    # "😀" is two UTF-16 code units: column 3 is after it.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[change_of(Spot(0, 3, 2), Spot(1, 0, 4), "日\n")],
        )
    )
    held = await client.protocol.send_request_async(DOCUMENT_TEXT, {"uri": uri})
    assert (held.uri, held.version, held.text) == (uri, 2, "é😀日\nb\n")

    # A column past the end of a line is its end, before its "\r" (LSP): the server's copy stays the editor's.
    uri = open_file(client, tmp_path / "crlf.jsonl", "ab\r\ncd\r\n")
    for version, (first, last, text) in enumerate((((0, 99), (0, 99), "x"), ((0, 1), (0, 50), "")), start=2):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(range=types.Range(types.Position(*first), types.Position(*last)), text=text)],
            )
        )
        held = await client.protocol.send_request_async(DOCUMENT_TEXT, {"uri": uri})
        assert held.text == ("abx\r\ncd\r\n" if version == 2 else "a\r\ncd\r\n")

    for params in ({"uri": (tmp_path / "src" / "a.py").as_uri()}, {"url": uri}):
        with pytest.raises(JsonRpcException) as refused:
            await client.protocol.send_request_async(DOCUMENT_TEXT, params)
        assert refused.value.code == -32602
