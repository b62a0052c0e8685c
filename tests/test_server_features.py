"""The language server's editing features, end to end over stdio: completion, hover,
document links, go-to-definition, document symbols, watched files and settings.

Each test starts its own server; nothing sleeps (tests wait for the notification
or the response they need).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from lspclient import (
    SERVER,
    apply_text_edits,
    codes,
    diagnostics,
    edit,
    open_file,
    published_when,
    quick_fixes,
    refreshed,
    scanned,
    start,
    until,
    value_span,
    watched,
)
from pytest_lsp import LanguageClient

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SUITE = """\
suites:
  - id: code
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options:
      rag: {match: path, k: 5}
    thresholds:
      rag.recall: 0.8
      rag.mode.semantic: 1
"""
CASES = [
    '{"id": "app", "input": {"query": "app", "corpora": ["code"]}, "expect": {"relevant": ["src/app.py", "docs/approvals.md"]}}',
    '{"id": "gateway", "input": {"query": "gateway"}, "expect": {"relevant": ["src/gateway.ts"]}}',
]
SUITE_FILE = ".punica/evals/code.suite.yaml"
DATASET_FILE = ".punica/evals/code.jsonl"


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def make_workspace(root: Path, suite: str = SUITE, cases: list[str] = CASES) -> tuple[Path, Path]:
    """A workspace with one suite, its dataset, and two of the three files the cases expect."""
    for relative, text in (
        (SUITE_FILE, suite),
        (DATASET_FILE, "\n".join(cases) + "\n"),
        ("src/app.py", "print('app')\n"),
        ("src/gateway.ts", "export {}\n"),
    ):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root / SUITE_FILE, root / DATASET_FILE


def where(text: str, marker: str, after: str = "") -> types.Position:
    """The position just after ``after`` inside the first ``marker`` of ``text`` (code points: ASCII here)."""
    offset = text.index(marker) + (marker.index(after) + len(after) if after else 0)
    line = text.count("\n", 0, offset)
    return types.Position(line=line, character=offset - (text.rfind("\n", 0, offset) + 1))


async def complete(client: LanguageClient, uri: str, position: types.Position) -> types.CompletionList:
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    assert isinstance(result, types.CompletionList)
    return result


def by_label(result: types.CompletionList) -> dict[str, types.CompletionItem]:
    return {item.label: item for item in result.items}


def edit_of(item: types.CompletionItem) -> tuple[str, int, int]:
    edit = item.text_edit
    assert isinstance(edit, types.TextEdit)
    assert edit.range.start.line == edit.range.end.line
    return edit.new_text, edit.range.start.character, edit.range.end.character


async def hover_text(client: LanguageClient, uri: str, position: types.Position) -> str:
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    assert result.range is not None
    assert result.range.start.line == position.line
    return result.contents.value


# ---------------------------------------------------------------- completion


async def test_metric_completion_under_thresholds_names_rag_recall_with_its_documentation(
    client: LanguageClient, tmp_path: Path
) -> None:
    """Under `thresholds:` a partly typed metric completes to `rag.recall: ` with the manifest's display name, direction and description; counters are not offered."""
    text = SUITE.replace("      rag.recall: 0.8\n", "      rag.re\n")
    suite_path, _ = make_workspace(tmp_path, suite=text)
    await start(client, tmp_path)
    uri = open_file(client, suite_path)
    position = where(text, "      rag.re\n", "rag.re")
    items = by_label(await complete(client, uri, position))
    recall = items["rag.recall"]
    assert edit_of(recall) == ("rag.recall: ", 6, 12)
    assert recall.detail == "Recall · higher is better · range 0..1"
    assert isinstance(recall.documentation, types.MarkupContent)
    assert "Share of the declared documents that came back" in recall.documentation.value
    assert "**Methodology**" in recall.documentation.value
    assert "rag.retrieved" not in items  # a counter: never thresholded
    assert "rag.mode.semantic" not in items  # already a key of this mapping


async def test_path_completion_in_relevant_is_fuzzy_and_keeps_json_quoting(client: LanguageClient, tmp_path: Path) -> None:
    """Inside `expect.relevant` a misspelled path completes to the workspace file, replacing only the string's content; outside a string the value comes quoted."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "approvals.md").write_text("# Approvals\n", encoding="utf-8")
    line = '{"id": "new", "input": {"query": "café 🚀"}, "expect": {"relevant": ["aprovals"]}}'
    bare_line = '{"id": "bare", "input": {"query": "q"}, "expect": {"relevant": ['
    _, dataset_path = make_workspace(tmp_path, cases=[*CASES, line, bare_line])
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    start_cp = line.index('"aprovals"') + 1
    utf16 = len(line[:start_cp].encode("utf-16-le")) // 2  # the emoji takes two UTF-16 units
    result = await complete(client, uri, types.Position(line=2, character=utf16 + len("aprovals")))
    assert result.is_incomplete
    assert result.items[0].label == "docs/approvals.md"
    assert edit_of(result.items[0]) == ("docs/approvals.md", utf16, utf16 + len("aprovals"))

    bare = await complete(client, uri, types.Position(line=3, character=len(bare_line)))
    assert edit_of(by_label(bare)["src/app.py"]) == ('"src/app.py"', len(bare_line), len(bare_line))


async def test_completion_of_suite_keys_engines_options_targets_datasets_and_corpora(
    client: LanguageClient, tmp_path: Path
) -> None:
    """Suite keys come with their schema descriptions; engines, `match` values, target ids, dataset paths and corpus names come from the workspace."""
    text = SUITE.replace("    engines: [rag]\n", "    engines: [r]\n    \n").replace("{match: path, k: 5}", "{match: , k: 5}")
    text = text.replace("id: vectors.query}", "id: }").replace("dataset: .punica/evals/code.jsonl", "dataset: code")
    suite_path, dataset_path = make_workspace(tmp_path, suite=text)
    await start(client, tmp_path)
    uri = open_file(client, suite_path)

    keys = by_label(await complete(client, uri, where(text, "    \n", "    ")))
    assert {"description", "metrics"} <= set(keys)
    assert not {"id", "engines", "thresholds"} & set(keys)
    assert isinstance(keys["metrics"].documentation, types.MarkupContent)
    assert "config_schema" in keys["metrics"].documentation.value
    assert edit_of(keys["metrics"])[0] == "metrics: "

    assert edit_of(by_label(await complete(client, uri, where(text, "engines: [r]", "[r")))["rag"]) == ("rag", 14, 15)
    matches = by_label(await complete(client, uri, where(text, "{match: ,", "{match: ")))
    assert set(matches) == {"path", "id", "corpus"}
    assert matches["path"].detail == "default"
    targets = by_label(await complete(client, uri, where(text, "id: }", "id: ")))
    assert list(targets) == ["vectors.query"]
    datasets = await complete(client, uri, where(text, "dataset: code", "dataset: code"))
    assert [item.label for item in datasets.items] == [DATASET_FILE]

    dataset_uri = open_file(client, dataset_path)
    corpora = await complete(client, dataset_uri, where(CASES[0], '["code"]', '["'))
    inside = CASES[0].index('["code"]') + 2
    assert edit_of(by_label(corpora)["code"]) == ("code", inside, inside + len("code"))


# ---------------------------------------------------------------- hover


async def test_hover_documents_metrics_options_datasets_and_suite_keys(client: LanguageClient, tmp_path: Path) -> None:
    """Hover shows a metric's manifest documentation, an option's default and range, a dataset's case count and a key's schema description."""
    suite_path, _ = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, suite_path)

    metric = await hover_text(client, uri, where(SUITE, "rag.recall", "rag.re"))
    assert metric.startswith("**Recall** `rag.recall`")
    assert "- Direction: higher is better" in metric
    assert "- Range: 0..1" in metric
    assert "**Score semantics**" in metric

    option = await hover_text(client, uri, where(SUITE, "match: path", "ma"))
    assert "option of engine `rag`" in option
    assert "- Default: path" in option
    assert "- One of: `path`, `id`, `corpus`" in option
    k = await hover_text(client, uri, where(SUITE, "k: 5", "k"))
    assert "- Range: 1..inf" in k

    dataset = await hover_text(client, uri, where(SUITE, "dataset: .punica", "dataset: .pun"))
    assert dataset == f"**{DATASET_FILE}** — 2 cases (rag_case_v1)"
    engines = await hover_text(client, uri, where(SUITE, "engines:", "eng"))
    assert engines.startswith("Engines that score each case")


# ---------------------------------------------------------------- links, definition, symbols


async def test_links_and_definitions_point_at_workspace_files_only(client: LanguageClient, tmp_path: Path) -> None:
    """A suite's dataset and each expected path that is a workspace file are links and definitions; missing files are not."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)

    suite_links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=suite_uri))
    )
    assert suite_links is not None
    assert [(link.target, link.range.start.line, link.range.start.character) for link in suite_links] == [
        (dataset_path.as_uri(), 3, SUITE.splitlines()[3].index(".punica"))
    ]
    dataset_links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=dataset_uri))
    )
    assert dataset_links is not None
    app = CASES[0].index('"src/app.py"') + 1
    assert sorted((link.target, link.range.start.line, link.range.start.character, link.range.end.character) for link in dataset_links) == [
        ((tmp_path / "src/app.py").as_uri(), 0, app, app + len("src/app.py")),
        ((tmp_path / "src/gateway.ts").as_uri(), 1, CASES[1].index("src/gateway.ts"), CASES[1].index("src/gateway.ts") + 14),
    ]  # docs/approvals.md does not exist: no link

    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=dataset_uri), position=types.Position(line=1, character=CASES[1].index("gateway.ts")))
    )
    assert isinstance(found, list)
    assert len(found) == 1
    assert isinstance(found[0], types.LocationLink)
    assert found[0].target_uri == (tmp_path / "src/gateway.ts").as_uri()
    missing = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=dataset_uri), position=types.Position(line=0, character=CASES[0].index("approvals")))
    )
    assert missing is None
    dataset = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=suite_uri), position=where(SUITE, "code.jsonl", "code"))
    )
    assert isinstance(dataset, list)
    assert dataset[0].target_uri == dataset_path.as_uri()


async def test_symbols_list_suites_with_their_keys_and_cases_by_id(client: LanguageClient, tmp_path: Path) -> None:
    """A suite file's outline is each suite with its keys (thresholds with their metrics); a dataset's is its cases by id."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)

    (suite,) = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=suite_uri))
    )
    assert isinstance(suite, types.DocumentSymbol)
    assert (suite.name, suite.kind, suite.detail) == ("code", types.SymbolKind.Module, DATASET_FILE)
    assert [child.name for child in suite.children or []] == ["id", "target", "dataset", "engines", "options", "thresholds"]
    thresholds = (suite.children or [])[-1]
    assert [(child.name, child.detail) for child in thresholds.children or []] == [("rag.recall", "0.8"), ("rag.mode.semantic", "1")]

    cases = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=dataset_uri))
    )
    assert [(case.name, case.range.start.line, case.detail) for case in cases] == [("app", 0, "app"), ("gateway", 1, "gateway")]
    assert cases[1].selection_range.start.character == CASES[1].index('"gateway"')


# ---------------------------------------------------------------- watched files


async def test_creating_an_expected_file_clears_its_rag203(client: LanguageClient, tmp_path: Path) -> None:
    """The server registers file watchers; a created file reported by the watcher clears the RAG203 that named it in an unopened dataset."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    dataset_uri = dataset_path.as_uri()
    assert codes(await diagnostics(client, dataset_uri, None)) == ["RAG203"]
    (registration,) = client.registrations  # type: ignore[attr-defined]
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = [watcher["globPattern"] for watcher in registration.register_options["watchers"]]
    assert "**/*.{yaml,yml,jsonl}" in globs
    assert "**/*" in globs

    approvals = tmp_path / "docs" / "approvals.md"
    approvals.parent.mkdir()
    approvals.write_text("# Approvals\n", encoding="utf-8")
    watched(client, (approvals, types.FileChangeType.Created))
    assert await published_when(client, dataset_uri, lambda items: "RAG203" not in codes(items)) == []


async def test_a_corpus_glob_that_matches_no_file_is_fixed_or_cleared_by_the_folder_it_names(client: LanguageClient, tmp_path: Path) -> None:
    """The unopened targets config shows RAG004 on a misspelled corpus glob; its quick fix writes the folder's glob, and creating the folder it named clears it."""
    make_workspace(tmp_path)
    targets = tmp_path / ".punica" / "targets.yaml"
    text = 'targets:\n  vectors.query:\n    builtin: {corpora: {code: ["scr/**"], docs: ["docs/**"]}}\n'
    targets.write_text(text, encoding="utf-8")
    await start(client, tmp_path)
    uri = targets.as_uri()
    found = await published_when(client, uri, lambda items: len(items) == 2)
    assert [(item.code, item.range.start.character) for item in found] == [("RAG004", text.splitlines()[2].index('"scr/**"')), ("RAG004", text.splitlines()[2].index('"docs/**"'))]
    assert "did you mean 'src/**'" in found[0].message and "matches no file the builtin target searches" in found[1].message
    (fix,) = await quick_fixes(client, uri, found[0])
    assert fix.title == "Change to 'src/**'"
    (change,) = fix.edit.document_changes or []
    (replaced,) = change.edits
    assert (change.text_document.uri, replaced.new_text, replaced.range) == (uri, '"src/**"', found[0].range)

    guide = tmp_path / "docs" / "guide.md"
    guide.parent.mkdir()
    guide.write_text("# Guide\n", encoding="utf-8")
    watched(client, (guide, types.FileChangeType.Created))
    (left,) = await published_when(client, uri, lambda items: len(items) == 1)
    assert "'scr/**'" in left.message


async def test_a_case_corpus_the_target_does_not_serve_is_shown_while_typing_and_cleared_by_the_targets_config(client: LanguageClient, tmp_path: Path) -> None:
    """Typing a corpus the builtin target does not serve into an open dataset shows RAG004 on it; a targets config that gives the builtin that corpus clears it."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    assert codes(await diagnostics(client, uri, 1)) == ["RAG203"]
    line = CASES[0]
    start_at = line.index('"code"')
    edit(client, uri, 2, 0, start_at, start_at + len('"code"'), '"docs"')
    found = await diagnostics(client, uri, 2)
    unserved = [item for item in found if item.code == "RAG004"]
    assert [(item.range.start.line, item.range.start.character, item.range.end.character) for item in unserved] == [(0, start_at, start_at + len('"docs"'))]
    assert unserved[0].message == "corpus 'docs' is not one that target 'vectors.query' serves; it serves: code"

    targets = tmp_path / ".punica" / "targets.yaml"
    targets.write_text('targets:\n  vectors.query:\n    builtin: {corpora: {code: ["src/**"], docs: ["docs/**"]}}\n', encoding="utf-8")
    watched(client, (targets, types.FileChangeType.Created))
    assert "RAG004" not in codes(await published_when(client, uri, lambda items: "RAG004" not in codes(items)))


async def test_an_expected_file_in_a_corpus_the_case_does_not_search_is_fixed_by_searching_it(client: LanguageClient, tmp_path: Path) -> None:
    """Through a builtin target with two corpora, an expected file held only by the corpus the case does not name is RAG203 while typing; its quick fix adds that corpus, which clears it."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "approvals.md").write_text("# Approvals\n", encoding="utf-8")
    _, dataset_path = make_workspace(tmp_path)
    (tmp_path / ".punica" / "targets.yaml").write_text(
        'targets:\n  vectors.query:\n    builtin: {corpora: {code: ["src/**"], docs: ["docs/**"]}}\n', encoding="utf-8"
    )
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    (found,) = await diagnostics(client, uri, 1)
    line = CASES[0]
    start_at = line.index('"docs/approvals.md"')
    assert (found.code, found.range.start.line, found.range.start.character, found.range.end.character) == ("RAG203", 0, start_at, start_at + len('"docs/approvals.md"'))
    assert "'docs/approvals.md' is in corpus 'docs' of the builtin target 'vectors.query', but this case searches only 'code'" in found.message
    (fix,) = await quick_fixes(client, uri, found)
    assert fix.title == "Search corpus 'docs' too"
    (change,) = fix.edit.document_changes or []
    (replaced,) = change.edits
    corpora_at = line.index('["code"]')
    assert (replaced.new_text, replaced.range.start.character, replaced.range.end.character) == ('["code", "docs"]', corpora_at, corpora_at + len('["code"]'))
    edit(client, uri, 2, 0, corpora_at, corpora_at + len('["code"]'), replaced.new_text)
    assert await diagnostics(client, uri, 2) == []

    # A hidden file is never searched, whether typed or created later.
    start_at = line.replace('["code"]', replaced.new_text).index('"docs/approvals.md"')
    edit(client, uri, 3, 0, start_at, start_at + len('"docs/approvals.md"'), '".github/ci.yml"')
    assert codes(await diagnostics(client, uri, 3)) == ["RAG203"]
    hidden = tmp_path / ".github" / "ci.yml"
    hidden.parent.mkdir()
    hidden.write_text("name: ci\n", encoding="utf-8")
    watched(client, (hidden, types.FileChangeType.Created))
    (left,) = await published_when(client, uri, lambda items: bool(items) and "hidden file" in items[0].message)
    assert left.code == "RAG203" and "searches no hidden file" in left.message


async def test_a_quick_fix_asked_right_after_an_edit_is_made_for_the_edited_text(client: LanguageClient, tmp_path: Path) -> None:
    """A line typed above a threshold on a counter, and the quick fix asked at once for the finding moved with it: the fix removes that threshold's line in the new text, for the new version."""
    suite = SUITE.replace("      rag.mode.semantic: 1\n", "      rag.mode.semantic: 1\n      rag.retrieved: 1\n")
    suite_path, _ = make_workspace(tmp_path, suite=suite)
    await start(client, tmp_path)
    uri = open_file(client, suite_path)
    (counter,) = await diagnostics(client, uri, 1)
    assert counter.code == "RAG102"
    edit(client, uri, 2, 1, 0, 0, "  # a comment typed above\n")
    moved = types.Diagnostic(
        range=types.Range(types.Position(counter.range.start.line + 1, counter.range.start.character), types.Position(counter.range.end.line + 1, counter.range.end.character)),
        message=counter.message, code=counter.code, source=counter.source, severity=counter.severity,
    )
    (fix,) = await quick_fixes(client, uri, moved)
    (change,) = fix.edit.document_changes or []
    assert change.text_document.version == 2
    lines = suite.splitlines(keepends=True)
    lines.insert(1, "  # a comment typed above\n")
    text = apply_text_edits("".join(lines), change.edits)
    assert "rag.retrieved" not in text and "rag.recall: 0.8" in text and "# a comment typed above" in text


async def test_a_folder_holding_punica_below_the_workspace_folder_is_scanned_as_its_own_workspace(client: LanguageClient, tmp_path: Path) -> None:
    """An editor opened at a repository's root finds the eval workspace in a subfolder (its own .punica/): the scan checks its suite there (its dataset path resolves, no RAG105) and reports its dataset's findings."""
    (tmp_path / ".git").mkdir()
    suite_path, dataset_path = make_workspace(tmp_path / "search", cases=['{"id": "empty", "input": {"query": "q"}, "expect": {"relevant": []}}'])
    await start(client, tmp_path)
    await scanned(client)
    found = await published_when(client, dataset_path.as_uri(), bool)
    assert codes(found) == ["RAG200"]
    assert codes(client.published.get(suite_path.as_uri(), types.PublishDiagnosticsParams(suite_path.as_uri(), [])).diagnostics) == []  # type: ignore[attr-defined]


async def test_deleting_a_dataset_gives_its_suite_rag105_and_clears_the_dataset(client: LanguageClient, tmp_path: Path) -> None:
    """When a watched dataset is deleted its suite gets RAG105 and the dataset's own diagnostics are cleared."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    await scanned(client)
    assert codes(client.published[dataset_path.as_uri()].diagnostics) == ["RAG203"]  # type: ignore[attr-defined]
    assert suite_path.as_uri() not in client.published  # type: ignore[attr-defined]

    dataset_path.unlink()
    watched(client, (dataset_path, types.FileChangeType.Deleted))
    assert codes(await published_when(client, suite_path.as_uri(), bool)) == ["RAG105"]
    assert await published_when(client, dataset_path.as_uri(), lambda items: not items) == []


async def test_changing_a_workspace_manifest_rechecks_the_suites(client: LanguageClient, tmp_path: Path) -> None:
    """Renaming a workspace engine in its manifest on disk gives the suite that uses the old name RAG100, and renaming it back clears it."""
    suite = SUITE.replace("engines: [rag]", "engines: [rag, keyword]")
    suite_path, _ = make_workspace(tmp_path, suite=suite)
    manifest = tmp_path / ".punica" / "metrics" / "keyword.yaml"
    manifest.parent.mkdir()
    text = (
        "manifest_version: '1'\nkind: engine\nname: keyword\nversion: 1.0.0\n"
        "accepts:\n- name: rag_case_v1\n  task_types: [retrieval]\n"
        "config_schema: {type: object}\n"
        "metrics:\n- {name: keyword.recall, display_name: Keyword recall, direction: higher_is_better, minimum: 0, maximum: 1}\n"
    )
    manifest.write_text(text, encoding="utf-8")
    await start(client, tmp_path)
    await scanned(client)
    assert suite_path.as_uri() not in client.published  # type: ignore[attr-defined]

    manifest.write_text(text.replace("name: keyword\n", "name: kw\n"), encoding="utf-8")
    watched(client, (manifest, types.FileChangeType.Changed))
    assert codes(await published_when(client, suite_path.as_uri(), bool)) == ["RAG100"]
    manifest.write_text(text, encoding="utf-8")
    watched(client, (manifest, types.FileChangeType.Changed))
    assert await published_when(client, suite_path.as_uri(), lambda items: not items) == []


async def test_a_pull_client_is_asked_to_pull_again_after_a_watched_change(client: LanguageClient, tmp_path: Path) -> None:
    """A client that pulls gets workspace/diagnostic/refresh when a watched file changes findings, and the next pull has them."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path, pull=True)
    report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    by_uri = {item.uri: item for item in report.items}
    assert codes(by_uri[dataset_path.as_uri()].items) == ["RAG203"]
    client.refreshed.clear()  # type: ignore[attr-defined]

    approvals = tmp_path / "docs" / "approvals.md"
    approvals.parent.mkdir()
    approvals.write_text("# Approvals\n", encoding="utf-8")
    watched(client, (approvals, types.FileChangeType.Created))
    await refreshed(client)
    previous = [types.PreviousResultId(uri=item.uri, value=item.result_id) for item in report.items]
    again = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=previous))
    changed = {item.uri: item for item in again.items if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)}
    assert list(changed) == [dataset_path.as_uri()]
    assert codes(changed[dataset_path.as_uri()].items) == []
    assert client.history == []  # type: ignore[attr-defined]


# ---------------------------------------------------------------- settings


async def test_a_bad_setting_is_shown_and_the_server_keeps_working(client: LanguageClient, tmp_path: Path) -> None:
    """A bad value pushed with didChangeConfiguration is reported with showMessage, replaced by its default, and the server still checks and completes."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    assert codes(await diagnostics(client, dataset_path.as_uri(), None)) == ["RAG203"]
    client.set_configuration({"datasetGlobs": 42, "severity": {"RAG203": "hint"}}, section="ragLsp")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await until(client, types.WINDOW_SHOW_MESSAGE, lambda: bool(client.messages))
    (message,) = client.messages
    assert message.type == types.MessageType.Warning
    assert "datasetGlobs" in message.message

    found = await published_when(client, dataset_path.as_uri(), lambda items: bool(items) and items[0].severity == types.DiagnosticSeverity.Hint)
    assert codes(found) == ["RAG203"]
    uri = open_file(client, suite_path)
    assert "rag.recall" in by_label(await complete(client, uri, where(SUITE, "rag.recall", "rag.")))


async def test_hover_on_an_expected_path_says_whether_the_workspace_is_its_corpus(client: LanguageClient, tmp_path: Path) -> None:
    """Hover on an expected path says whether it is a workspace file and whether RAG203 checks it: yes
    through the builtin target, no through a service whose corpus lives elsewhere (the target says so too)."""
    root = tmp_path / "builtin"
    _, dataset_path = make_workspace(root)
    await start(client, root)
    uri = open_file(client, dataset_path)
    text = "\n".join(CASES)
    checked = await hover_text(client, uri, where(text, "docs/approvals.md", "docs"))
    assert checked.startswith("Expected path `docs/approvals.md` — not a file of this workspace.")
    assert "Checked against the workspace's files" in checked
    assert "`vectors.query`" in checked

    elsewhere = tmp_path / "elsewhere"
    suite = SUITE.replace("id: vectors.query", "id: kb.search")
    suite_path, dataset_path = make_workspace(elsewhere, suite)
    (elsewhere / ".punica" / "targets.yaml").write_text("targets:\n  kb.search:\n    command: [python, kb.py]\n")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(uri=elsewhere.as_uri(), name="elsewhere")], removed=[])
        )
    )
    uri = open_file(client, dataset_path)
    unchecked = await hover_text(client, uri, where(text, "docs/approvals.md", "docs"))
    assert "Not checked against the workspace's files" in unchecked
    target = await hover_text(client, open_file(client, suite_path), where(suite, "kb.search", "kb"))
    assert "declare `workspace_paths: true`" in target


# ---------------------------------------------------------------- quick fixes


async def test_a_did_you_mean_quick_fix_follows_its_line_when_a_line_is_inserted_above(client: LanguageClient, tmp_path: Path) -> None:
    """RAG203's did-you-mean is a quick fix; after a line is inserted above it, the action offered on its new line edits that line."""
    typo = '{"id": "typo", "input": {"query": "gateway"}, "expect": {"relevant": ["src/gatewy.ts"]}}'
    _, dataset_path = make_workspace(tmp_path, cases=[*CASES, typo])
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    await published_when(client, uri, lambda items: "RAG203" in codes(items))
    edit(client, uri, 2, 0, 0, 0, '{"id": "first", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}}\n')
    found = await diagnostics(client, uri, 2)
    (moved,) = [d for d in found if d.code == "RAG203" and "gatewy" in d.message]
    assert moved.range.start.line == 3
    assert "did you mean 'src/gateway.ts'?" in moved.message
    fixes = await quick_fixes(client, uri, moved)
    assert [action.title for action in fixes] == ["Change to 'src/gateway.ts'"]
    (change,) = fixes[0].edit.document_changes or []
    (text_edit,) = change.edits
    first, last = value_span(typo, "src/gatewy.ts")
    assert (text_edit.range.start.line, text_edit.range.start.character, text_edit.range.end.character) == (3, first - 1, last + 1)
    assert text_edit.new_text == '"src/gateway.ts"'
