"""The incremental dataset model gives exactly the findings of a fresh check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp.core.checking.analyze import analyze_file
from rag_lsp.core.reading.findings import for_editor, shown_in_editor
from rag_lsp.core.checking.folding import every_occurrence_fix
from rag_lsp.core.checking import incremental
from rag_lsp.core.checking import rules as registry
from rag_lsp.core.checking.incremental import DatasetModel
from rag_lsp.core.checking.rules import rag203_missing_expected_path as rag203
from rag_lsp.core.workspace.settings import Settings
from rag_lsp.core.reading.text import LineIndex, Position, apply_edits
from rag_lsp.core.reading.sources import DiskSource, OverlaySource
from rag_lsp.core.workspace.workspace import Workspace

# The broken dataset of the demonstrations: one instance of each common mistake.
EXAMPLES = Path(__file__).parent.parent / "examples-caught"
BROKEN = ".punica/evals/broken.jsonl"
PIECES = ["x", '"', ",", "}", "{", "\n", "", "é😀", '"id": "dup-case"', '"relevant": []', "./", "\r\n", " "]


def fresh_findings(workspace: Workspace, source: OverlaySource, text: str):
    source.texts[workspace.absolute(BROKEN)] = text
    workspace.invalidate(BROKEN)
    return analyze_file(workspace, BROKEN)


def fresh_check(workspace: Workspace, source: OverlaySource, path: str, text: str):
    """The findings of a fresh check of the dataset at ``path`` holding ``text`` (the workspace's files unchanged)."""
    source.texts[workspace.absolute(path)] = text
    workspace.invalidate(path, files_changed=False)
    return analyze_file(workspace, path)


edits = st.lists(
    st.tuples(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 200), st.sampled_from(PIECES)),
    min_size=1,
    max_size=12,
)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=edits)
def test_random_edits_match_a_fresh_check(edits) -> None:
    """After any sequence of edits, the model's findings equal a fresh check of its text."""
    source = OverlaySource(DiskSource(1 << 30))
    workspace = Workspace(EXAMPLES, source=source)
    text = (EXAMPLES / BROKEN).read_text(encoding="utf-8")
    model = DatasetModel(workspace, BROKEN, text)
    assert model.findings() == fresh_findings(workspace, source, text)
    for start_seed, length, column_seed, piece in edits:
        lines = LineIndex(model.text)
        start_offset = start_seed % (len(model.text) + 1)
        end_offset = min(len(model.text), start_offset + length % 40)
        start, end = lines.position(start_offset), lines.position(end_offset)
        model.edit(start, end, piece * (1 + column_seed % 3))
        expected_text = model.text
        assert model.findings() == fresh_findings(workspace, source, expected_text)


def test_model_text_follows_edits() -> None:
    """Edits in code points, across lines and at the end, give the expected text."""
    workspace = Workspace(EXAMPLES)
    model = DatasetModel(workspace, BROKEN, "ab\ncd\nef")
    model.edit(Position(0, 1), Position(1, 1), "X\nY")
    assert model.text == "aX\nYd\nef"
    model.edit(Position(2, 2), Position(2, 2), "\n")
    assert model.text == "aX\nYd\nef\n"
    model.edit(Position(0, 0), Position(3, 0), "")
    assert model.text == ""


def test_a_changed_fact_rechecks_every_line(tmp_path: Path) -> None:
    """Creating a file named in relevant clears its RAG203 through the workspace facts."""
    (tmp_path / ".punica" / "evals").mkdir(parents=True)
    (tmp_path / ".punica" / "evals" / "s.suite.yaml").write_text(
        "suites:\n  - id: s\n    target: {kind: capability, id: vectors.query}\n"
        "    dataset: .punica/evals/d.jsonl\n    engines: [rag]\n    thresholds: {rag.mode.semantic: 1}\n"
    )
    text = '{"id": "a", "input": {"query": "q"}, "expect": {"relevant": ["docs/new.md"]}}\n'
    workspace = Workspace(tmp_path)
    model = DatasetModel(workspace, ".punica/evals/d.jsonl", text)
    assert [finding.code for finding in model.findings()] == ["RAG203"]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "new.md").write_text("new\n")
    workspace.invalidate()
    assert model.findings() == []


def test_a_missing_path_listed_by_many_cases_is_looked_into_once(tmp_path: Path, monkeypatch) -> None:
    """RAG203's message for a path that many cases list is derived once while the workspace's files
    stay as they are, and derived again when they change (the path has become a folder)."""
    (tmp_path / ".punica" / "evals").mkdir(parents=True)
    text = "".join(f'{{"id": "c{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["docs/new"]}}}}\n' for n in range(3))
    workspace = Workspace(tmp_path)
    looked_into: list[str] = []
    problem = rag203._problem
    monkeypatch.setattr(rag203, "_problem", lambda workspace, value, normal: looked_into.append(value) or problem(workspace, value, normal))
    model = DatasetModel(workspace, ".punica/evals/d.jsonl", text)
    messages = [finding.message for finding in model.findings()]
    assert len(messages) == 3
    assert len(set(messages)) == 1
    assert "is not a file in the workspace" in messages[0]
    assert looked_into == ["docs/new"]
    (tmp_path / "docs" / "new").mkdir(parents=True)
    workspace.invalidate()
    messages = [finding.message for finding in model.findings()]
    assert len(messages) == 3
    assert all("is a folder" in message for message in messages)
    assert looked_into == ["docs/new", "docs/new"]


ELSEWHERE_SUITE = (
    "suites:\n  - id: s\n    target: {kind: capability, id: vectors.query}\n"
    "    dataset: .punica/evals/d.jsonl\n    engines: [rag]\n    thresholds: {rag.mode.semantic: 1}\n"
)
ELSEWHERE_DATASET = ".punica/evals/d.jsonl"
# Pieces an edit inserts into a dataset whose expected paths are half elsewhere.
PATH_PIECES = ['"kb/x.html", ', '"src/a.py", ', '"docs/b.md", ', '"kb/', "kb", '"', ",", "\n", "", "]"]


def elsewhere_workspace(root: Path) -> tuple[Workspace, OverlaySource, str]:
    """A workspace with two files and a dataset whose 40 expected paths are half not workspace files."""
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / ".punica" / "evals" / "s.suite.yaml").write_text(ELSEWHERE_SUITE)
    for name in ("src/a.py", "docs/b.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    rows = [f'{{"id": "kb{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["kb/{n}.html", "kb/{n}-faq.html"]}}}}' for n in range(10)]
    rows += [f'{{"id": "ws{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py", "docs/b.md"]}}}}' for n in range(10)]
    source = OverlaySource(DiskSource(1 << 30))
    return Workspace(root, source=source), source, "\n".join(rows) + "\n"


def checked_alike(workspace: Workspace, source: OverlaySource, text: str):
    """The findings of a fresh check of the dataset holding ``text``, which a model of it gives too."""
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = text
    found = analyze_file(workspace, ELSEWHERE_DATASET)
    assert DatasetModel(workspace, ELSEWHERE_DATASET, text).findings() == found
    return found


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 10_000), st.sampled_from(PATH_PIECES)), min_size=1, max_size=10))
def test_edits_across_the_elsewhere_threshold_match_a_fresh_check(tmp_path_factory, edits) -> None:
    """Whether most expected paths are elsewhere (one RAG203 for the file, or one per value) follows
    each edit exactly as a fresh check of the text decides it."""
    workspace, source, text = elsewhere_workspace(tmp_path_factory.mktemp("ws"))
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)

    def fresh(text: str):
        return fresh_check(workspace, source, ELSEWHERE_DATASET, text)

    assert model.findings() == fresh(text)
    for start_seed, length, piece in edits:
        lines = LineIndex(model.text)
        start_offset = start_seed % (len(model.text) + 1)
        end_offset = min(len(model.text), start_offset + length % 30)
        model.edit(lines.position(start_offset), lines.position(end_offset), piece)
        assert model.findings() == fresh(model.text)


def test_files_appearing_end_the_summary_of_paths_elsewhere(tmp_path: Path) -> None:
    """A dataset whose paths are mostly missing gets one RAG203; once most of those files exist, each
    missing path gets its own again, as a fresh check gives."""
    workspace, source, text = elsewhere_workspace(tmp_path)
    text += '{"id": "more", "input": {"query": "q"}, "expect": {"relevant": ["kb/a.html", "kb/b.html", "kb/c.html"]}}\n'
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)
    summary = [finding for finding in model.findings() if finding.code == "RAG203"]
    assert len(summary) == 1
    assert summary[0].message.startswith("23 of the 43 expected paths")
    for n in range(8):
        (tmp_path / "kb").mkdir(exist_ok=True)
        (tmp_path / "kb" / f"{n}.html").write_text("x\n")
    workspace.invalidate()
    found = model.findings()
    assert [finding.code for finding in found].count("RAG203") == 15
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = model.text
    assert found == analyze_file(Workspace(tmp_path, source=source), ELSEWHERE_DATASET)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=edits, limit=st.integers(1, 3), findings_first=st.booleans())
def test_what_an_editor_is_shown_follows_edits_as_the_capped_findings(edits, limit: int, findings_first: bool) -> None:
    """After any edits (lines inserted above findings included), the findings the model shows with a
    limit per code are those of shown_in_editor over all its findings, whichever is asked first."""
    workspace = Workspace(EXAMPLES, source=OverlaySource(DiskSource(1 << 30)))
    model = DatasetModel(workspace, BROKEN, (EXAMPLES / BROKEN).read_text(encoding="utf-8"))
    for start_seed, length, column_seed, piece in edits:
        lines = LineIndex(model.text)
        start_offset = start_seed % (len(model.text) + 1)
        end_offset = min(len(model.text), start_offset + length % 40)
        model.edit(lines.position(start_offset), lines.position(end_offset), piece * (1 + column_seed % 3))
        if findings_first:
            everything = model.findings()
            shown = model.shown(limit)
        else:
            shown = model.shown(limit)
            everything = model.findings()
        assert shown == shown_in_editor(everything, limit)


# Lines of a dataset over src/a.py and docs/b.md, each with the findings its name says.
VARIANTS = {
    "fine": '"relevant": ["src/a.py"]',
    "fine-two": '"relevant": ["src/a.py", "docs/b.md"]',
    "missing": '"relevant": ["docs/missing-{n}.md"]',
    "two-missing": '"relevant": ["docs/missing-{n}.md", "src/gone-{n}.py"]',
    # More findings of one code on one line than a limit shows.
    "listed-six-times": '"relevant": [' + ", ".join(['"src/a.py"'] * 6) + "]",
    "not-normal": '"relevant": ["./src/a.py"]',
    "backslash": '"relevant": ["src\\\\a.py"]',
    "extra-key": '"relevant": ["src/a.py"], "graded": 1',
    "not-normal-extra-key": '"relevant": ["./src/a.py"], "graded": 1',
    "listed-twice": '"relevant": ["src/a.py", "src/a.py"]',
    "empty": '"relevant": []',
    # A workspace file and a document of a corpus that lives elsewhere.
    "elsewhere": '"relevant": ["src/a.py", "kb/{n}.html"]',
}


def variant_line(name: str, n: int, case_id: str | None = None) -> str:
    relevant = VARIANTS[name].format(n=n)
    return f'{{"id": "{case_id or f"c{n}"}", "input": {{"query": "q{n}"}}, "expect": {{{relevant}}}}}'


line_edits = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.sampled_from(["fine", "fine", "fine", *VARIANTS]),
        st.sampled_from(["replace"] * 6 + ["insert", "delete", "repeat-id", "query"]),
        st.booleans(),
    ),
    min_size=1,
    max_size=15,
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(edits=line_edits, limit=st.integers(1, 4))
def test_what_an_editor_is_shown_after_edits_of_whole_lines_is_what_a_fresh_check_shows(tmp_path_factory, edits, limit: int) -> None:
    """After lines are rewritten one by one (findings coming, going and changing code on lines before,
    at and past each code's limit), inserted, deleted, or given a repeated id, the findings the model
    shows with a limit per code are those of shown_in_editor over a fresh check of its text."""
    workspace, source, _ = elsewhere_workspace(tmp_path_factory.mktemp("ws"))
    names = ["fine", "missing", "not-normal", "fine", "two-missing", "listed-twice", "missing", "empty", "fine", "missing", "listed-six-times"] * 3
    model = DatasetModel(workspace, ELSEWHERE_DATASET, "\n".join(variant_line(name, n) for n, name in enumerate(names)) + "\n")

    def fresh(text: str):
        return shown_in_editor(fresh_check(workspace, source, ELSEWHERE_DATASET, text), limit)

    assert model.shown(limit) == fresh(model.text)
    for number, (line_seed, name, kind, everything_first) in enumerate(edits, start=100):
        line = line_seed % (len(model.lines) - 1)
        text = model.lines[line]
        if kind == "query" and '"query": "' in text:
            column = text.index('"query": "') + len('"query": "')
            model.edit(Position(line, column), Position(line, column), "x")
        elif kind == "insert":
            model.edit(Position(line, 0), Position(line, 0), variant_line(name, number) + "\n")
        elif kind == "delete":
            model.edit(Position(line, 0), Position(line + 1, 0), "")
        else:
            case_id = "c0" if kind == "repeat-id" else None
            model.edit(Position(line, 0), Position(line, len(text)), variant_line(name, number, case_id))
        if everything_first:
            model.findings()
        assert model.shown(limit) == fresh(model.text)


def test_an_edit_within_a_line_leaves_the_other_shown_findings_as_they_were(tmp_path: Path) -> None:
    """An edit within one line, before a code's limit or past it, changes what an editor is shown on
    that line (and the count of the findings left out) only: every other finding shown is the same
    object as before, which the server's converted diagnostics are kept by."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    names = ["missing", "fine", "not-normal", "missing", "fine", "missing", "missing", "fine", "missing", "fine"]
    model = DatasetModel(workspace, ELSEWHERE_DATASET, "\n".join(variant_line(name, n) for n, name in enumerate(names)) + "\n")
    before = model.shown(2)
    assert [finding.code for finding in before] == ["RAG203", "RAG206", "RAG203", "RAG203"]
    assert before[3].message.startswith("3 more RAG203 findings")

    # A word typed into the query of line 2 (its RAG206 moves by a column).
    column = model.lines[2].index('"query": "') + len('"query": "')
    model.edit(Position(2, column), Position(2, column), "x")
    after = model.shown(2)
    assert [finding is earlier for finding, earlier in zip(after, before)] == [True, False, True, True]
    assert after[1].range.start.character == before[1].range.start.character + 1

    # A typo past the limit of RAG203 (line 8's path goes missing): one more left out.
    model.edit(Position(7, 0), Position(7, len(model.lines[7])), variant_line("missing", 70))
    recounted = model.shown(2)
    assert [finding is earlier for finding, earlier in zip(recounted, after)] == [True, True, True, False]
    assert recounted[3].message.startswith("4 more RAG203 findings")

    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = model.text
    assert recounted == shown_in_editor(analyze_file(Workspace(tmp_path, source=source), ELSEWHERE_DATASET), 2)


def test_a_line_inserted_above_findings_moves_their_lines_not_the_findings(tmp_path: Path) -> None:
    """A line inserted above shown findings gives the same finding objects, each on the line below
    the one it was on (what an editor's conversions are kept by); a line removed gives them back on
    their lines; and what is shown is what a fresh check shows."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    names = ["missing", "fine", "not-normal", "missing", "fine", "listed-twice", "missing", "fine"]
    model = DatasetModel(workspace, ELSEWHERE_DATASET, "\n".join(variant_line(name, n) for n, name in enumerate(names)) + "\n")
    before = model.shown_as_placed(3)
    assert before.lines == [0, 2, 3, 5, 6]

    model.edit(Position(1, 0), Position(1, 0), variant_line("fine", 20) + "\n")
    after = model.shown_as_placed(3)
    assert after.lines == [0, 3, 4, 6, 7]
    assert all(finding is earlier for finding, earlier in zip(after.placed, before.placed))
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = model.text
    assert model.shown(3) == shown_in_editor(analyze_file(Workspace(tmp_path, source=source), ELSEWHERE_DATASET), 3)
    assert [finding.range.start.line for finding in model.shown(3)] == after.lines

    model.edit(Position(1, 0), Position(2, 0), "")
    again = model.shown_as_placed(3)
    assert again.lines == before.lines
    assert all(finding is earlier for finding, earlier in zip(again.placed, before.placed))
    assert model.shown(3) == before.findings()


def test_a_word_typed_into_a_dataset_of_paths_elsewhere_keeps_its_summary(tmp_path: Path) -> None:
    """Where most expected paths are elsewhere, a word typed into a query leaves the one RAG203 that
    says so the same object (what it says has not changed), as every other finding shown; a path
    going missing counts it again, as a fresh check does."""
    workspace, source, text = elsewhere_workspace(tmp_path)
    text += '{"id": "kb-more", "input": {"query": "q"}, "expect": {"relevant": ["kb/a.html", "kb/b.html"]}}\n'
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)
    before = model.shown(5)
    (summary,) = [finding for finding in before if finding.code == "RAG203"]
    assert summary.message.startswith("22 of the 42 expected paths")

    column = model.lines[3].index('"query": "') + len('"query": "')
    model.edit(Position(3, column), Position(3, column), "x")
    after = model.shown(5)
    assert len(after) == len(before) and all(finding is earlier for finding, earlier in zip(after, before))

    model.edit(Position(12, 0), Position(12, len(model.lines[12])), variant_line("missing", 12))
    recounted = model.shown(5)
    (summary,) = [finding for finding in recounted if finding.code == "RAG203"]
    assert summary.message.startswith("23 of the 41 expected paths")
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = model.text
    assert recounted == shown_in_editor(analyze_file(Workspace(tmp_path, source=source), ELSEWHERE_DATASET), 5)


def test_past_the_limit_one_finding_says_how_many_are_left_out(tmp_path: Path) -> None:
    """A file with more findings of a code than an editor is shown keeps the first ones of that
    code, all of the others, and one finding where the first left out is, counting them."""
    workspace, source, text = elsewhere_workspace(tmp_path)
    text = "".join(
        f'{{"id": "c{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py", "docs/missing-{n}.md"]}}}}\n' for n in range(8)
    ) + '{"id": "c0", "input": {"query": "q"}, "expect": {"relevant": []}}\n'
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)
    everything = model.findings()
    assert [finding.code for finding in everything].count("RAG203") == 8
    shown = model.shown(3)
    assert [finding.code for finding in shown] == ["RAG203"] * 4 + ["RAG202", "RAG200"]
    assert [finding.range.start.line for finding in shown[:4]] == [0, 1, 2, 3]
    assert shown[3].message.startswith("5 more RAG203 findings in this file, from here on, are not shown")
    assert shown[:3] == everything[:3]


def test_only_the_shown_missing_paths_are_looked_into(tmp_path: Path, monkeypatch) -> None:
    """Of a file's RAG203 findings past an editor's limit (the workspace's max_findings_shown), only those
    on the lines looked at for it pay for the search of the closest workspace file; asked for every
    finding, the model gives each one finished, as a fresh check of the file does."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    workspace = Workspace(tmp_path, Settings(max_findings_shown=3), source=source)
    text = "".join(
        f'{{"id": "c{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py", "docs/missing-{n}.md"]}}}}\n' for n in range(8)
    )
    looked_into: list[str] = []
    problem = rag203._problem
    monkeypatch.setattr(rag203, "_problem", lambda workspace, value, normal: looked_into.append(value) or problem(workspace, value, normal))
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)
    # The three shown, and the first left out, where the finding that counts them goes: finished
    # as the lines were read.
    assert looked_into == [f"docs/missing-{n}.md" for n in range(4)]
    shown = model.shown(3)
    assert looked_into == [f"docs/missing-{n}.md" for n in range(4)]
    assert [finding.unfinished for finding in shown] == [None] * 4
    assert all("is not a file in the workspace, so no hit can match it" in finding.message for finding in shown[:3])
    everything = model.findings()
    assert looked_into == [f"docs/missing-{n}.md" for n in range(8)]
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = model.text
    assert everything == analyze_file(Workspace(tmp_path, source=source), ELSEWHERE_DATASET)


GDI_SUITE = (
    "suites:\n  - id: g\n    dataset: .punica/evals/d.jsonl\n"
    "    metrics:\n      rag.hit_at_k: {k: 3}\n    thresholds: {rag.hit_at_k: 0.5}\n"
)
GDI_ROW = '{{"input_id": "{}", "prompt": "p", "reference_contexts": ["a b"], "sut_response": "r", "retrieved_context": ["a b"]}}'
# Pieces an edit inserts into a gdi dataset: ids repeated and renamed, rows of the other shape.
GDI_PIECES = ['"input_id": "q1", ', '"id": "q1", ', "q1", "q2", '"', "\n", "", GDI_ROW.format("q1") + "\n",
              '{"id": "q1", "input": {"query": "q"}, "expect": {"relevant": ["a.md"]}}\n', "}"]


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 10_000), st.sampled_from(GDI_PIECES)), min_size=1, max_size=10))
def test_repeated_input_ids_follow_edits_as_a_fresh_check(tmp_path_factory, edits) -> None:
    """A repeated input_id of gdi rows is RAG202 on the repeat, and after any edits (rows of either
    shape coming and going, the file's shape turning) the model's findings equal a fresh check."""
    root = tmp_path_factory.mktemp("ws")
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / ".punica" / "evals" / "g.suite.yaml").write_text(GDI_SUITE)
    path = ".punica/evals/d.jsonl"
    text = "".join(GDI_ROW.format(row_id) + "\n" for row_id in ("q1", "q2", "q1", "q3"))
    source = OverlaySource(DiskSource(1 << 30))
    workspace = Workspace(root, source=source)
    model = DatasetModel(workspace, path, text)

    def fresh(text: str):
        return fresh_check(workspace, source, path, text)

    first = model.findings()
    assert [(finding.code, finding.range.start.line) for finding in first] == [("RAG202", 2)]
    assert first == fresh(text)
    for start_seed, length, piece in edits:
        lines = LineIndex(model.text)
        start_offset = start_seed % (len(model.text) + 1)
        end_offset = min(len(model.text), start_offset + length % 30)
        model.edit(lines.position(start_offset), lines.position(end_offset), piece)
        assert model.findings() == fresh(model.text)


fold_edits = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.sampled_from(["fine", "not-normal", "not-normal-extra-key", "backslash", "extra-key", "extra-key", "missing", "elsewhere", "elsewhere"]),
        st.sampled_from(["replace"] * 6 + ["insert", "delete", "query"]),
        st.booleans(),
    ),
    min_size=1,
    max_size=15,
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(edits=fold_edits, limit=st.integers(1, 4), start=st.integers(18, 22), batch=st.sampled_from([2048, 20]))
def test_findings_of_one_cause_fold_and_unfold_with_edits_as_a_fresh_check(tmp_path_factory, edits, limit: int, start: int, batch: int) -> None:
    """Edits that make a cause stand on most rows (an unnormalized path, an unknown key) or no longer
    do fold and unfold its findings exactly as a fresh check of the text does, in every finding and in
    what an editor is shown. Read in batches of 20 lines, a cause on every row of the first is presumed
    to fold and only counted on the others (see DatasetModel._presumed), until the file says otherwise."""
    workspace, source, _ = elsewhere_workspace(tmp_path_factory.mktemp("ws"))
    # About as many rows share each cause as fold it (20 of 32): edits fold and unfold it.
    names = ["not-normal-extra-key"] * start + ["fine", "missing", "backslash", "extra-key"] * 3
    batch_before = incremental._CHECK_BATCH
    incremental._CHECK_BATCH = batch
    try:
        model = DatasetModel(workspace, ELSEWHERE_DATASET, "\n".join(variant_line(name, n) for n, name in enumerate(names)) + "\n")
    finally:
        incremental._CHECK_BATCH = batch_before

    def fresh(text: str):
        return fresh_check(workspace, source, ELSEWHERE_DATASET, text)

    for number, (line_seed, name, kind, everything_first) in enumerate(edits, start=100):
        line = line_seed % (len(model.lines) - 1)
        text = model.lines[line]
        if kind == "query" and '"query": "' in text:
            column = text.index('"query": "') + len('"query": "')
            model.edit(Position(line, column), Position(line, column), "x")
        elif kind == "insert":
            model.edit(Position(line, 0), Position(line, 0), variant_line(name, number) + "\n")
        elif kind == "delete":
            model.edit(Position(line, 0), Position(line + 1, 0), "")
        else:
            model.edit(Position(line, 0), Position(line, len(text)), variant_line(name, number))
        expected = fresh(model.text)
        if everything_first:
            assert model.findings() == expected
            assert model.shown(limit) == shown_in_editor(expected, limit)
        else:
            assert model.shown(limit) == shown_in_editor(expected, limit)
            assert model.findings() == expected


def test_a_cause_on_most_rows_is_one_finding_with_a_fix_for_every_occurrence(tmp_path: Path) -> None:
    """When most rows write their expected path from `./`, one RAG206 stands for them all: it names how many
    rows and which lines, covers each occurrence, and its one fix normalizes every path; the rows that break
    the pattern keep their own findings, and `unfold` lists each occurrence."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    names = ["not-normal"] * 24 + ["backslash", "fine", "missing"]
    text = "\n".join(variant_line(name, n) for n, name in enumerate(names)) + "\n"
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = text
    found = analyze_file(workspace, ELSEWHERE_DATASET)
    rag206 = [finding for finding in found if finding.code == "RAG206"]
    assert len(rag206) == 2
    folded, own = rag206
    assert folded.message.startswith("24 of the 27 rows (lines 1, 2, 3, …) share this finding: './src/a.py' is not a normalized path")
    assert "written from `./`" in folded.message and "--unfold" in folded.message
    assert [member.range.start.line for member in folded.covers] == list(range(24))
    assert all(member.code == "RAG206" and member.cause == "dot-slash" and not member.covers for member in folded.covers)
    (fix,) = folded.fixes
    assert fix.title == "Normalize every such path (24 places)"
    assert fix.every and not fix.edits  # made when asked for
    edits = every_occurrence_fix(folded, fix).edits
    assert [(edit.range.start.line, edit.new_text) for edit in edits] == [(line, '"src/a.py"') for line in range(24)]
    assert own.range.start.line == 24 and not own.covers and "src\\\\a.py" in own.message
    assert DatasetModel(workspace, ELSEWHERE_DATASET, text).findings() == found
    workspace.folds_findings = False
    assert [finding.code for finding in analyze_file(workspace, ELSEWHERE_DATASET)].count("RAG206") == 25


@pytest.mark.parametrize(
    ("written", "said", "title"),
    [
        (lambda path: f" {path} ", "with spaces around it", "Trim the spaces around every expected path"),
        (str.upper, "written in other letter case", "Write every expected path in its workspace file's letter case"),
        (lambda path: path.upper().replace("/", "\\"), "written in other letter case", "Write every expected path in its workspace file's letter case"),
        (lambda path: path.rpartition(".")[0], "written without its extension", "Write every expected path with its workspace file's extension"),
        (lambda path: path.rpartition(".")[0] + ".html", "written with another extension", "Write every expected path with its workspace file's extension"),
    ],
    ids=["spaces-around", "letter-case", "letter-case-backslash", "no-extension", "another-extension"],
)
def test_paths_written_another_way_on_most_rows_are_one_finding_whose_fix_writes_every_path_as_its_file(
    tmp_path: Path, written, said: str, title: str
) -> None:
    """Expected paths written on most rows another way than the workspace files they name (spaces around
    them, another letter case, another extension or none) are one RAG203 that says how; its fix of every occurrence, in a fresh check
    and in a model alike, writes each path so written as its file and leaves a path that names none."""
    workspace, source, _ = elsewhere_workspace(tmp_path)

    def row(n: int, paths: list[str]) -> str:
        listed = ", ".join(json.dumps(path) for path in paths)
        return f'{{"id": "c{n}", "input": {{"query": "q"}}, "expect": {{"relevant": [{listed}]}}}}'

    rows = [row(n, [written("src/a.py"), written("docs/b.md")]) for n in range(24)]
    rows.append(row(24, [written("old/c.py")]))
    text = "\n".join(rows) + "\n"
    (found,) = [finding for finding in checked_alike(workspace, source, text) if finding.code == "RAG203"]
    assert said in found.message
    (fix,) = found.fixes
    assert fix.title == title and fix.every and not fix.edits
    lines = text.split("\n")
    made = registry.fix_of_every_occurrence(workspace, ELSEWHERE_DATASET, lines, found, fix)
    (in_model,) = [finding for finding in DatasetModel(workspace, ELSEWHERE_DATASET, text).findings() if finding.code == "RAG203"]
    assert registry.fix_of_every_occurrence(workspace, ELSEWHERE_DATASET, lines, in_model, fix) == made
    assert len(made.edits) == 48
    fixed = apply_edits(text, [(edit.range, edit.new_text) for edit in made.edits])
    assert fixed.split("\n")[:25] == [row(n, ["src/a.py", "docs/b.md"]) for n in range(24)] + [rows[24]]
    (left,) = [finding for finding in checked_alike(workspace, source, fixed) if finding.code == "RAG203"]
    assert left.range.start.line == 24 and not left.fixes


@pytest.mark.parametrize(("elsewhere", "under"), [("kb/{n}.html", "'kb/'"), ("https://kb.example.com/{n}", "'https://'")])
def test_a_document_of_a_corpus_elsewhere_on_most_rows_is_one_finding_beside_the_typos(tmp_path: Path, elsewhere: str, under: str) -> None:
    """Cases that each expect a workspace file and a document of a corpus that lives elsewhere (under a
    folder the workspace lacks, or a URL) are one RAG203 for the file that says where those documents are,
    although most expected paths are workspace files; a typo keeps its own finding and its did-you-mean,
    in a fresh check and in a model alike, and every occurrence is still listed."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = [
        f'{{"id": "c{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py", "docs/b.md", "{elsewhere.format(n=n)}"]}}}}'
        for n in range(30)
    ]
    rows.append('{"id": "typo", "input": {"query": "q"}, "expect": {"relevant": ["docs/bb.md"]}}')
    found = [finding for finding in checked_alike(workspace, source, "\n".join(rows) + "\n") if finding.code == "RAG203"]
    folded, typo = found
    assert folded.message.startswith("30 of the 31 rows (lines 1, 2, 3, …) share this finding")
    assert f"documents under {under}, which this workspace does not hold" in folded.message
    assert [member.range.start.line for member in folded.covers] == list(range(30))
    assert typo.range.start.line == 30 and "did you mean 'docs/b.md'?" in typo.message and not typo.covers
    workspace.folds_findings = False
    assert [finding.code for finding in analyze_file(workspace, ELSEWHERE_DATASET)].count("RAG203") == 31


def test_files_alike_but_for_letter_case_are_named_by_no_path_written_in_other_case(tmp_path: Path) -> None:
    """Where two workspace files differ only in letter case, a path written in a third letter case names
    neither: most such paths are then said to be elsewhere, with no fix of every occurrence."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    (tmp_path / "src" / "A.py").write_text("x\n")
    workspace.invalidate()
    rows = [f'{{"id": "c{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["SRC/A.PY"]}}}}' for n in range(24)]
    (found,) = [finding for finding in checked_alike(workspace, source, "\n".join(rows) + "\n") if finding.code == "RAG203"]
    assert "letter case" not in found.message and "lives elsewhere" in found.message and not found.fixes


def test_files_alike_but_for_their_extension_are_named_by_no_path_written_without_one(tmp_path: Path) -> None:
    """Where two workspace files differ only in their extension, a path written without one names neither:
    most such paths are then said to be elsewhere, with no fix of every occurrence."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    (tmp_path / "src" / "a.md").write_text("x\n")
    workspace.invalidate()
    rows = [f'{{"id": "c{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a"]}}}}' for n in range(24)]
    (found,) = [finding for finding in checked_alike(workspace, source, "\n".join(rows) + "\n") if finding.code == "RAG203"]
    assert "extension" not in found.message and "lives elsewhere" in found.message and not found.fixes


def test_a_prefix_before_most_paths_is_one_finding_whose_fix_takes_it_off_every_path(tmp_path: Path) -> None:
    """Paths written from the folder of the machine that wrote the dataset (`/home/ci/repo/src/a.py`) on
    most rows are one RAG203, which names the prefix; its fix of every occurrence, made when asked for, in
    a fresh check and in a model alike, takes it off each path it stands before that is then a workspace
    file, and leaves a path that is none; the dataset then holds one missing path."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = [f'{{"id": "c{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["/home/ci/repo/src/a.py", "/home/ci/repo/docs/b.md"]}}}}' for n in range(24)]
    rows.append('{"id": "gone", "input": {"query": "q"}, "expect": {"relevant": ["/home/ci/repo/old/c.py"]}}')
    text = "\n".join(rows) + "\n"
    (found,) = [finding for finding in checked_alike(workspace, source, text) if finding.code == "RAG203"]
    assert "with '/home/ci/repo/' before it" in found.message
    (fix,) = found.fixes
    assert fix.title == "Remove '/home/ci/repo/' before every expected path" and fix.every and not fix.edits
    lines = text.split("\n")
    made = registry.fix_of_every_occurrence(workspace, ELSEWHERE_DATASET, lines, found, fix)
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)
    (in_model,) = [finding for finding in model.findings() if finding.code == "RAG203"]
    assert registry.fix_of_every_occurrence(workspace, ELSEWHERE_DATASET, model.lines, in_model, fix) == made
    assert len(made.edits) == 48
    fixed = apply_edits(text, [(edit.range, edit.new_text) for edit in made.edits])
    assert fixed.split("\n")[:24] == [row.replace("/home/ci/repo/", "") for row in rows[:24]]
    assert fixed.split("\n")[24] == rows[24]
    (left,) = [finding for finding in checked_alike(workspace, source, fixed) if finding.code == "RAG203"]
    assert left.range.start.line == 24 and "'/home/ci/repo/old/c.py' leaves the workspace" in left.message


# Rows as tools other than rag-lsp write them, each with one cause on every row: (the row, the code and
# the cause of its findings, the title of the fix of every occurrence, or None where the cause lives elsewhere).
TOOL_ROWS = {
    "tool-key": ('{{"source": "export", "id": "t{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py"]}}}}', "RAG004", "additionalProperties at source", "Remove the key `source` from every row"),
    "fraction-grades": ('{{"id": "g{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py", "docs/b.md"], "grades": {{"src/a.py": 1.5, "docs/b.md": 0.5}}}}}}', "RAG004", "type at expect.grades.*", None),
    "object-relevant": ('{{"id": "o{n}", "input": {{"query": "q"}}, "expect": {{"relevant": [{{"path": "src/a.py"}}]}}}}', "RAG004", "type at expect.relevant[]", None),
    "no-corpora": ('{{"id": "c{n}", "input": {{"corpora": [], "query": "q"}}, "expect": {{"relevant": ["src/a.py"]}}}}', "RAG004", "no corpora", "Remove every empty `corpora`"),
    "repeat": ('{{"id": "r{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py", "docs/b.md", "src/a.py"]}}}}', "RAG205", "repeat", "Remove every repeat"),
    "python-values": ("{{'id': 'p{n}', 'input': {{'query': 'q'}}, 'expect': {{'relevant': ['src/a.py']}}}}", "RAG002", "single quotes", None),
    "bom-each-row": ('\ufeff{{"id": "b{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py"]}}}}', "RAG002", "a byte order mark (U+FEFF) starts this line, as one starts a file saved with it", "Remove every byte order mark"),
    "comma-after": ('{{"id": "a{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py"]}}}},', "RAG002", "extra data after the JSON value, at a comma to remove", "Remove every such comma"),
    "one-id": ('{{"id": "same", "input": {{"query": "q{n}"}}, "expect": {{"relevant": ["src/a.py"]}}}}', "RAG202", "same", "Make every repeated id unique"),
    "array-rows": ('[{{"id": "l{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py"]}}}}]', "RAG004", "type at the row", None),
    "key-twice": ('{{"id": "export", "id": "k{n}", "input": {{"query": "q"}}, "expect": {{"relevant": ["src/a.py"]}}}}', "RAG003", "id", "Remove the earlier 'id' from every row"),
    "encoded-twice": ('"{{\\"id\\": \\"e{n}\\", \\"input\\": {{\\"query\\": \\"q\\"}}, \\"expect\\": {{\\"relevant\\": [\\"src/a.py\\"]}}}}"', "RAG004", "a row encoded twice", "Write every row's object"),
}


@pytest.mark.parametrize("tool", sorted(TOOL_ROWS))
def test_a_cause_a_tool_writes_on_every_row_is_one_finding_and_its_fix_repairs_every_row(tmp_path: Path, tool: str) -> None:
    """A cause another tool writes on every row (its own key, grades as fractions, expected values as
    objects, an empty `corpora`, a value listed twice, one id for every case, each row written as a list, a
    key written twice, each row encoded twice as a JSON string, a byte order mark before each row) is
    one finding covering each
    occurrence, equal in a model and a fresh check; where each occurrence has a fix, the fix of every
    occurrence leaves JSON rows with no finding of the cause; the rows that break the pattern keep theirs."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    row, code, cause, fix_title = TOOL_ROWS[tool]
    rows = [row.format(n=n) for n in range(24)] + ['{"id": "fine", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}']
    rows.append('{"id": "own", "input": {"query": "q"}, "expect": {"relevant": ["./docs/b.md"]}, "tool": 1}')
    text = "\n".join(rows) + "\n"
    found = checked_alike(workspace, source, text)
    (folded,) = [finding for finding in found if finding.covers]
    assert (folded.code, folded.cause) == (code, cause)
    lines = {member.range.start.line for member in folded.covers}
    assert lines == set(range(1 if tool == "one-id" else 0, 24))  # the first use of an id is no repeat
    assert all(member.cause == cause for member in folded.covers)
    # The row that breaks the pattern keeps its own findings (a path written from `./`, a key of its own).
    assert {finding.code for finding in found if finding.range.start.line == 25} == {"RAG004", "RAG206"}
    if fix_title is None:
        return
    (fix,) = folded.fixes
    assert fix.title.startswith(fix_title)
    fixed = apply_edits(text, [(edit.range, edit.new_text) for edit in every_occurrence_fix(folded, fix).edits]).split("\n")
    for line in fixed[:24]:
        json.loads(line)
    fixed_found = fresh_check(workspace, source, ELSEWHERE_DATASET, "\n".join(fixed))
    assert not [finding for finding in fixed_found if (finding.code, finding.cause) == (code, cause)]


def test_one_row_written_again_on_every_line_is_one_finding_whose_fix_removes_every_copy(tmp_path: Path) -> None:
    """A row a tool wrote on every line is one RAG202 that says the row is written again, in a model and a
    fresh check alike; its fix of every occurrence removes each copy, not renames it, and leaves the row once."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    row = '{"id": "same", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}'
    text = "\n".join([row] * 24 + ['{"id": "fine", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}']) + "\n"
    (folded,) = [finding for finding in checked_alike(workspace, source, text) if finding.code == "RAG202"]
    assert folded.cause == "same, the row written again" and [member.range.start.line for member in folded.covers] == list(range(1, 24))
    assert "repeats exactly" in folded.message and "one row many times over" in folded.message
    (fix,) = folded.fixes
    assert fix.title == "Remove every repeated row (23 places)"
    fixed = apply_edits(text, [(edit.range, edit.new_text) for edit in every_occurrence_fix(folded, fix).edits])
    assert fixed.split("\n") == [row, '{"id": "fine", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}', ""]
    assert not [finding for finding in fresh_check(workspace, source, ELSEWHERE_DATASET, fixed) if finding.code == "RAG202"]


def test_one_id_on_every_row_some_rows_written_again_folds_with_a_fix_that_leaves_each_id_once(tmp_path: Path) -> None:
    """One id on every row, some rows copies of the first and others not, is one RAG202 of that id: its fix of
    every occurrence removes each copy and gives each other row an id of its own, leaving no repeated id."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    first = '{"id": "same", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}'
    rows = [first if n % 2 == 0 else f'{{"id": "same", "input": {{"query": "q{n}"}}, "expect": {{"relevant": ["src/a.py"]}}}}' for n in range(24)]
    text = "\n".join(rows) + "\n"
    (folded,) = [finding for finding in checked_alike(workspace, source, text) if finding.code == "RAG202"]
    assert folded.cause == "same" and len(folded.covers) == 23
    (fix,) = folded.fixes
    assert fix.title == "Make every repeated id unique (23 places)"
    fixed = apply_edits(text, [(edit.range, edit.new_text) for edit in every_occurrence_fix(folded, fix).edits])
    ids = [json.loads(line)["id"] for line in fixed.split("\n") if line]
    assert len(ids) == 13 and len(set(ids)) == 13  # the first row, and the twelve that were no copy
    assert not [finding for finding in fresh_check(workspace, source, ELSEWHERE_DATASET, fixed) if finding.code == "RAG202"]


def test_a_key_misspelt_on_every_row_folds_and_its_fix_renames_it_where_the_row_lacks_the_key_it_means(tmp_path: Path) -> None:
    """`expected` written for `expect` on every row is one RAG004 finding (beside RAG201's, every case having no
    `expect`) whose fix of every occurrence renames the key, not removes the judgments: a row that holds `expect`
    already is not given the rename, and loses the misspelt copy; once fixed, the rows have neither finding."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = [f'{{"id": "m{n}", "input": {{"query": "q"}}, "expected": {{"relevant": ["src/a.py"]}}}}' for n in range(24)]
    rows.append('{"id": "both", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}, "expected": {"relevant": ["docs/b.md"]}}')
    text = "\n".join(rows) + "\n"
    found = checked_alike(workspace, source, text)
    folded = {finding.code: finding for finding in found if finding.covers}
    assert sorted(folded) == ["RAG004", "RAG201"]
    misspelt = folded["RAG004"]
    assert misspelt.cause == "additionalProperties at expected" and len(misspelt.covers) == 25
    assert "did you mean 'expect'?" in misspelt.message and "most likely `expect` misspelt" in misspelt.message
    (fix,) = misspelt.fixes
    assert fix.title == "Rename the key 'expected' to 'expect' in every row (25 places)"
    both = misspelt.covers[-1]
    assert both.range.start.line == 24
    assert [each.title for each in both.fixes] == ["Remove the key 'expected'"]
    assert [each.title for each in misspelt.covers[0].fixes] == ["Rename the key 'expected' to 'expect'", "Remove the key 'expected'"]
    fixed = apply_edits(text, [(edit.range, edit.new_text) for edit in every_occurrence_fix(misspelt, fix).edits]).split("\n")
    assert [json.loads(line)["expect"]["relevant"] for line in fixed[:25]] == [["src/a.py"]] * 25
    assert "expected" not in json.loads(fixed[24])
    assert not [finding for finding in fresh_check(workspace, source, ELSEWHERE_DATASET, "\n".join(fixed)) if finding.code in ("RAG004", "RAG201")]


@pytest.mark.parametrize(
    ("corpora", "case_corpora", "said", "fix_title"),
    [
        ("{code: [src/**]}", None, "they lie outside every glob of its corpora", None),
        ("{code: [src/**], docs: [docs/**]}", '["code"]', "add 'docs' to every case's corpora", "Search corpus 'docs' too in every case (24 places)"),
    ],
    ids=["outside-every-corpus", "outside-the-cases-corpora"],
)
def test_expected_files_a_builtin_target_never_returns_on_every_row_are_one_finding_naming_the_setting(
    tmp_path: Path, corpora: str, case_corpora, said: str, fix_title
) -> None:
    """Every expected path a workspace file the builtin target never returns (its corpora's globs hold none
    of them, or the cases ask to search a corpus that does not hold them) is one RAG203 for the file, which
    names the setting to change, equal in a model and a fresh check; where each occurrence has a fix (the
    corpus to search added to the case), the fix of every occurrence repairs every row."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    (tmp_path / ".punica" / "targets.yaml").write_text(f"targets:\n  vectors.query:\n    builtin: {{corpora: {corpora}}}\n")
    workspace.invalidate()
    asked = f', "corpora": {case_corpora}' if case_corpora else ""
    rows = [f'{{"id": "c{n}", "input": {{"query": "q"{asked}}}, "expect": {{"relevant": ["docs/b.md"]}}}}' for n in range(24)]
    rows.append('{"id": "own", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py", "kb/x.html"]}}')
    text = "\n".join(rows) + "\n"
    found = checked_alike(workspace, source, text)
    (folded,) = [finding for finding in found if finding.covers]
    assert folded.code == "RAG203" and len(folded.covers) == 24 and said in folded.message
    assert [finding.range.start.line for finding in found if not finding.covers] == [24]  # the row's own typo
    if fix_title is None:
        assert not folded.fixes
        return
    (fix,) = folded.fixes
    assert fix.title == fix_title
    fixed = apply_edits(text, [(edit.range, edit.new_text) for edit in every_occurrence_fix(folded, fix).edits]).split("\n")
    assert [finding.range.start.line for finding in fresh_check(workspace, source, ELSEWHERE_DATASET, "\n".join(fixed))] == [24]


def test_a_corpus_every_case_expects_and_none_searches_is_one_finding(tmp_path: Path) -> None:
    """With `match: corpus`, an expected corpus that most cases do not ask to search is one RAG204 for the file,
    equal in a model and a fresh check; a case expecting another corpus it does not search keeps its own."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    (tmp_path / ".punica" / "evals" / "s.suite.yaml").write_text(ELSEWHERE_SUITE.replace("engines: [rag]", "engines: [rag]\n    options: {rag: {match: corpus}}"))
    workspace.invalidate()
    rows = [f'{{"id": "c{n}", "input": {{"query": "q", "corpora": ["code"]}}, "expect": {{"relevant": ["tickets"]}}}}' for n in range(24)]
    rows.append('{"id": "own", "input": {"query": "q", "corpora": ["code"]}, "expect": {"relevant": ["wiki"]}}')
    text = "\n".join(rows) + "\n"
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = text
    found = [finding for finding in analyze_file(workspace, ELSEWHERE_DATASET) if finding.code == "RAG204"]
    assert [finding for finding in DatasetModel(workspace, ELSEWHERE_DATASET, text).findings() if finding.code == "RAG204"] == found
    folded, own = found
    assert len(folded.covers) == 24 and "add 'tickets' to every case's `input.corpora`" in folded.message
    assert own.range.start.line == 24 and not own.covers and "'wiki'" in own.message


def test_one_id_on_most_rows_folds_and_unfolds_as_rows_come_and_go_elsewhere(tmp_path: Path) -> None:
    """The repeats of one id fold while they stand on most rows; rows added elsewhere in the file (the
    group itself untouched) unfold them, and removing those rows folds them again, as a fresh check does."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = ['{"id": "same", "input": {"query": "q%d"}, "expect": {"relevant": ["src/a.py"]}}' % n for n in range(24)]
    text = "\n".join(rows) + "\n"
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)

    def fresh(text: str):
        return fresh_check(workspace, source, ELSEWHERE_DATASET, text)

    found = model.findings()
    assert found == fresh(model.text)
    assert [finding.code for finding in found] == ["RAG202"] and len(found[0].covers) == 23
    added = "".join('{"id": "other%d", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}\n' % n for n in range(30))
    model.edit(Position(24, 0), Position(24, 0), added)
    found = model.findings()
    assert found == fresh(model.text)
    assert [finding.code for finding in found] == ["RAG202"] * 23 and not any(finding.covers for finding in found)
    model.edit(Position(24, 0), Position(54, 0), "")
    assert model.findings() == fresh(model.text) and len(model.findings()) == 1
    # One row more elsewhere: still folded, saying the new count; a repeat more above every other
    # line: each row of the group is on a line one further down.
    model.edit(Position(24, 0), Position(24, 0), '{"id": "one-more", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}\n')
    found = model.findings()
    assert found == fresh(model.text) and "of the 25 rows" in found[0].message
    model.edit(Position(0, 0), Position(0, 0), '{"id": "same", "input": {"query": "first"}, "expect": {"relevant": ["src/a.py"]}}\n')
    found = model.findings()
    assert found == fresh(model.text) and len(found[0].covers) == 24


def test_a_folded_finding_kept_through_hundreds_of_lines_added_above_its_rows_reads_as_a_fresh_check(tmp_path: Path) -> None:
    """Rows added one by one among the repeats of one id (an editing session), each edit shown, leave the
    folded finding of those repeats as a fresh check makes it: its members are read as they are, not
    through a move per edit."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = ['{"id": "same", "input": {"query": "q%d"}, "expect": {"relevant": ["src/a.py"]}}' % n for n in range(1300)]
    model = DatasetModel(workspace, ELSEWHERE_DATASET, "\n".join(rows) + "\n")
    model.shown(2)
    for n in range(600):
        model.edit(Position(650, 0), Position(650, 0), '{"id": "o%d", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}\n' % n)
        model.shown(2)
    found = model.findings()
    assert found == fresh_check(workspace, source, ELSEWHERE_DATASET, model.text)
    (folded,) = [finding for finding in found if finding.covers]
    assert len(folded.covers.lines) == 1299 and folded.covers.lines[-1] == 1899


def test_typing_in_rows_of_one_id_shows_what_a_fresh_check_shows(tmp_path: Path) -> None:
    """Typing in the rows of a hundred that share one id makes their folded finding again at each keystroke,
    alike: what an editor is shown stays what a fresh check shows, and its folded finding covers the rows as
    they now are (the fix of every repeat lands on the id of the row typed in)."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = ['{"id": "same", "input": {"query": "q%d"}, "expect": {"relevant": ["src/a.py"]}}' % n for n in range(100)]
    rows[3] = '{"id": "other", "input": {"query": "q"}, "expect": {"relevant": ["src/b.py", "src/b.py"]}}'
    model = DatasetModel(workspace, ELSEWHERE_DATASET, "\n".join(rows) + "\n")
    for line, column, typed in [(50, 36, "x"), (50, 37, "y"), (60, 0, " "), (2, 36, "z"), (50, 0, "  ")]:
        model.edit(Position(line, column), Position(line, column), typed)
        shown = model.shown(2)
        expected = shown_in_editor(fresh_check(workspace, source, ELSEWHERE_DATASET, model.text), 2)
        # The model's folded finding holds its members (an editor's fix of every repeat reads them).
        assert [for_editor(finding) if finding.covers else finding for finding in shown] == expected
        (folded,) = [finding for finding in shown if finding.covers]
        (repeat,) = [member for member in folded.covers if member.range.start.line == line]
        assert model.lines[line][repeat.range.start.character : repeat.range.end.character] == '"same"'


def test_a_large_group_of_one_id_read_after_later_edits_covers_the_lines_it_was_made_on(tmp_path: Path) -> None:
    """The repeats of one id on a hundred rows fold, their members made only when read: read after lines were
    added above them and after the group itself was edited, each folded finding lists the lines a fresh check
    of its own text lists, and so does the finding made after each edit."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = ['{"id": "same", "input": {"query": "q%d"}, "expect": {"relevant": ["src/a.py"]}}' % n for n in range(100)]
    model = DatasetModel(workspace, ELSEWHERE_DATASET, "\n".join(rows) + "\n")

    def fresh(text: str):
        return fresh_check(workspace, source, ELSEWHERE_DATASET, text)

    made = [(model.findings(), model.text)]  # their members not read yet
    # A row of another id above the group: the folded finding moves with its lines.
    model.edit(Position(0, 0), Position(0, 0), '{"id": "other", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}\n')
    made.append((model.findings(), model.text))
    # A row of the group edited within its line, then one of the group taken out and one put back higher up.
    model.edit(Position(50, 36), Position(50, 36), "x")
    made.append((model.findings(), model.text))
    model.edit(Position(70, 0), Position(71, 0), "")
    model.edit(Position(10, 0), Position(10, 0), rows[7] + "\n")
    made.append((model.findings(), model.text))
    for found, text in made:
        (folded,) = [finding for finding in found if finding.covers]
        assert found == fresh(text)
        assert folded.covers.lines == [member.range.start.line for member in folded.covers]
        assert len(folded.covers.lines) == len(folded.covers) == 99


def test_a_json_document_written_over_many_lines_is_one_finding_not_one_per_line(tmp_path: Path) -> None:
    """A JSON array written with indentation in place of JSON Lines is one RAG002 for the file, in a fresh
    check and in a model alike, that says to write one object per line: no line is read as a row."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = [{"id": f"c{n}", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}} for n in range(30)]
    text = json.dumps(rows, indent=2) + "\n"
    (found,) = checked_alike(workspace, source, text)
    assert found.code == "RAG002" and "one JSON array of 30 rows" in found.message and not found.covers


def test_rows_written_over_many_lines_after_one_written_on_one_are_one_finding_not_one_per_line(tmp_path: Path) -> None:
    """Rows written with indentation after a first row written on its line fail on nearly every line, each
    its own way: the lines that are pieces of a value written over many lines are one cause, one finding
    that says to write one object per line."""
    workspace, source, _ = elsewhere_workspace(tmp_path)
    rows = [{"id": f"c{n}", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}} for n in range(30)]
    text = json.dumps(rows[0]) + "\n" + "\n".join(json.dumps(row, indent=2) for row in rows[1:]) + "\n"
    found = checked_alike(workspace, source, text)
    (folded,) = [finding for finding in found if finding.code == "RAG002"]
    assert "write one object per line" in folded.message
    pieces = text.splitlines()[1:]
    assert len(folded.covers) == len([line for line in pieces if line.strip() and not line.strip().startswith('"src')])


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("/home/dev/repo/{}", "it is the workspace file 'src/a.py' with '/home/dev/repo/' before it"),
        ("repo\\{}", "it is the workspace file 'src/a.py' with 'repo\\\\' before it"),
        (" {} ", "it is the workspace file 'src/a.py' with spaces around it"),
        ("https://github.com/acme/repo/blob/main/{}", "it is the workspace file 'src/a.py' with 'https://github.com/acme/repo/blob/main/' before it"),
        ("{}#L1-40", "it is the id of a chunk of the workspace file 'src/a.py'"),
        ("{}", None),
    ],
)
def test_paths_a_tool_wrote_in_another_form_are_named_as_such_not_as_a_corpus_elsewhere(tmp_path: Path, written: str, said) -> None:
    """When most expected paths are missing because a tool wrote them from another folder or with spaces
    around them, the one RAG203 for the file says which workspace file its example is and how it is written,
    instead of presuming the corpus lives elsewhere (a chunk's id says to match on `id`; a URL is not told to be
    normalized besides); paths that are no workspace file in any form still are."""
    (tmp_path / ".punica" / "evals").mkdir(parents=True)
    (tmp_path / ".punica" / "evals" / "s.suite.yaml").write_text(ELSEWHERE_SUITE)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x\n")
    value = written.format("src/a.py") if said else "kb/a.html"
    rows = [json.dumps({"id": f"c{n}", "input": {"query": "q"}, "expect": {"relevant": [value]}}) for n in range(24)]
    (tmp_path / ELSEWHERE_DATASET).write_text("\n".join(rows) + "\n")
    found = analyze_file(Workspace(tmp_path), ELSEWHERE_DATASET)
    (finding,) = [finding for finding in found if finding.code == "RAG203"]
    assert finding.message.startswith("24 of the 24 expected paths in this dataset (100%) are not workspace files")
    if "://" in written:
        assert [finding.code for finding in found] == ["RAG203"]
    if said is None:
        assert "most likely lives elsewhere" in finding.message
    else:
        assert said in finding.message and "elsewhere" not in finding.message


def test_a_folded_finding_kept_through_typing_fixes_the_lines_as_they_are(tmp_path: Path, monkeypatch) -> None:
    """Typing in a query of a dataset with a cause on every row keeps its folded finding (what an editor
    is shown is spliced, not made again), yet the fix of every occurrence asked for after the edit
    repairs the paths where they now are."""
    monkeypatch.setattr(incremental, "_CHECK_BATCH", 24)
    workspace, source, _ = elsewhere_workspace(tmp_path)
    text = "\n".join(variant_line("not-normal", n) for n in range(60)) + "\n"
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)
    assert model._systemic
    (folded,) = [finding for finding in model.findings() if finding.covers]
    (fix,) = folded.fixes
    assert len(every_occurrence_fix(folded, fix).edits) == 60  # its members are read before the edit
    shown = model.shown_as_placed(5)
    column = model.lines[30].index('"query": "') + len('"query": "')
    model.edit(Position(30, column), Position(30, column), "longer words ")
    # Spliced: the findings shown are the very ones shown before the edit.
    assert [id(finding) for finding in model.shown_as_placed(5).placed] == [id(finding) for finding in shown.placed]
    (kept,) = [finding for finding in model.findings() if finding.covers]
    assert kept is folded
    edits = every_occurrence_fix(kept, fix).edits
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = model.text
    expected = analyze_file(workspace, ELSEWHERE_DATASET)
    (fresh,) = [finding for finding in expected if finding.covers]
    assert edits == every_occurrence_fix(fresh, fresh.fixes[0]).edits
    assert edits[30].range.start.character == model.lines[30].index('"./src')


def test_a_cause_the_first_batch_alone_carries_is_made_on_every_row_as_a_fresh_check(tmp_path: Path, monkeypatch) -> None:
    """A cause on every row of the first batch is presumed to stand on most rows; when the rest of the file
    proves otherwise, every line is checked again and each occurrence is its own finding, as a fresh check has it."""
    monkeypatch.setattr(incremental, "_CHECK_BATCH", 24)
    workspace, source, _ = elsewhere_workspace(tmp_path)
    names = ["not-normal"] * 24 + ["fine", "missing"] * 30
    text = "\n".join(variant_line(name, n) for n, name in enumerate(names)) + "\n"
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = text
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)
    assert model._systemic  # presumed from the first batch
    found = model.findings()
    assert not model._systemic
    assert found == analyze_file(workspace, ELSEWHERE_DATASET)
    assert sum(1 for finding in found if finding.code == "RAG206") == 24 and not any(finding.covers for finding in found)


def test_a_dataset_with_the_same_findings_on_every_row_holds_no_finding_per_row(tmp_path: Path, monkeypatch) -> None:
    """Memory follows the input, not the findings: a dataset of `{}` rows (each missing two keys RAG004 reports
    and the `expect` RAG201 reports) is held as counts, with no finding kept for any row, and still reports one
    finding per cause that covers every occurrence."""
    monkeypatch.setattr(incremental, "_CHECK_BATCH", 64)
    workspace, source, _ = elsewhere_workspace(tmp_path)
    text = "{}\n" * 3000
    source.texts[workspace.absolute(ELSEWHERE_DATASET)] = text
    model = DatasetModel(workspace, ELSEWHERE_DATASET, text)
    found = model.findings()
    assert sum(len(placed or ()) for placed in model._placed) == 0
    assert sorted((finding.code, len(finding.covers)) for finding in found if finding.covers) == [("RAG004", 6000), ("RAG201", 3000)]
    assert found == analyze_file(workspace, ELSEWHERE_DATASET)
