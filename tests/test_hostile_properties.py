"""Properties of each cause of failure under hostile input (hypothesis): input
nested to any depth in every format read, every kind of path a setting or a
flag names, and numeric settings at their extremes, never raise, hang or read
what is not a regular workspace file."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp.core.workspace.config import read_config
from rag_lsp.core.workspace.files import _GlobAutomaton, _glob_regex, glob_match
from rag_lsp.core.running.report import BaselineError, load_baseline, parse_report
from rag_lsp.core.reading.safefiles import Refused, read_regular, read_regular_pieces, writable_target
from rag_lsp.core.reading import sources
from rag_lsp.core.workspace.settings import MAX_RUN_CONCURRENCY, MAX_RUN_TIMEOUT_S, MAX_YAML_DEPTH, editor_values
from rag_lsp.core.workspace.chunking import MAX_WINDOWS_PER_LINE, Chunking, ChunkingError, line_ranges
from rag_lsp.core.search.index import IndexCache
from rag_lsp.core.reading.yamltree import YamlLimits, parse_yaml

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

depths = st.integers(min_value=0, max_value=5000)
openers = st.sampled_from(["[", "{\"a\":", "{a = "])


def nested_json(depth: int, opener: str) -> str:
    if opener.startswith("{a"):
        opener = "{\"a\":"
    closer = "]" if opener == "[" else "}"
    return opener * depth + "1" + closer * depth if opener != "[" else "[" * depth + "]" * depth


# ---------------------------------------------------------------- nesting


@pytest.mark.slow  # hundreds of nested documents
@FAST
@given(depths, st.sampled_from(["array", "table"]))
def test_toml_of_any_depth_is_read_or_refused(depth: int, shape: str) -> None:
    """A settings file nested to any depth gives findings, never an exception."""
    value = "[" * depth + "]" * depth if shape == "array" else "{a = " * depth + "1" + "}" * depth
    found = read_config(".punica/rag-lsp.toml", f"x = {value}\n")
    assert all(finding.code.startswith("RAG") for finding in found.findings)


@FAST
@given(depths)
def test_yaml_of_any_depth_is_read_or_refused(depth: int) -> None:
    """YAML nested to any depth under the highest depth limit is parsed or refused with RAG005."""
    document = parse_yaml("suites: " + "[" * depth + "]" * depth + "\n", YamlLimits(MAX_YAML_DEPTH, 200_000))
    if depth >= MAX_YAML_DEPTH:
        assert any(problem.code in ("RAG001", "RAG005") for problem in document.problems)
    else:
        document.to_python(YamlLimits(MAX_YAML_DEPTH, 200_000))


@FAST
@given(depths, openers)
def test_baseline_of_any_depth_is_a_report_or_a_baseline_error(depth: int, opener: str) -> None:
    """A baseline JSON nested to any depth is a BaselineError, never another exception."""
    with pytest.raises(BaselineError):
        parse_report(nested_json(depth, opener))


@FAST
@given(depths, openers)
def test_index_meta_of_any_depth_is_a_cache_miss(tmp_path_factory: pytest.TempPathFactory, depth: int, opener: str) -> None:
    """A meta.json nested to any depth is a cache miss with a reason."""
    cache = IndexCache(tmp_path_factory.mktemp("cache"), {"k": 1})
    cache.folder.mkdir(parents=True, exist_ok=True)
    cache.meta_path.write_text(nested_json(depth, opener), encoding="utf-8")
    index, why = cache.load(8)
    assert index is None and why


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depths)
def test_dataset_line_of_any_depth_is_a_finding(tmp_path_factory: pytest.TempPathFactory, depth: int) -> None:
    """A JSON Lines row nested to any depth is checked: findings, never an exception."""
    from rag_lsp.core.checking.analyze import analyze_file  # noqa: PLC0415
    from rag_lsp.core.workspace.workspace import Workspace  # noqa: PLC0415

    root = tmp_path_factory.mktemp("w")
    (root / ".punica" / "evals").mkdir(parents=True)
    line = '{"id": "a", "input": {"query": ' + "[" * depth + "]" * depth + '}, "expect": {"relevant": []}}'
    (root / ".punica" / "evals" / "d.jsonl").write_text(line + "\n", encoding="utf-8")
    assert analyze_file(Workspace(root), ".punica/evals/d.jsonl")


# ---------------------------------------------------------------- paths


def _path_of_kind(root: Path, kind: str) -> Path:
    path = root / f"named-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        return Path("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "link-out":
        path.symlink_to("/dev/zero")
    elif kind == "link-in":
        (root / "target.json").write_text("{}", encoding="utf-8")
        path.symlink_to(root / "target.json")
    elif kind == "dangling":
        path.symlink_to(root / "nowhere")
    elif kind == "file":
        path.write_text("{}", encoding="utf-8")
    return path


KINDS = ["fifo", "device", "folder", "link-out", "link-in", "dangling", "file", "missing"]


@pytest.mark.parametrize("pieces", [False, True], ids=["whole", "in-pieces"])
@pytest.mark.parametrize("kind", KINDS)
def test_only_regular_files_are_read(tmp_path: Path, kind: str, pieces: bool) -> None:
    """read_regular (and read_regular_pieces) reads a regular file (or a link to one) and refuses every other
    kind, without waiting on it (opening a FIFO to read waits for a writer: the read runs on a thread that must end)."""
    path = _path_of_kind(tmp_path, kind)
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(b"".join(read_regular_pieces(path, 100, 1)) if pieces else read_regular(path, 100))
        except Refused as refused:
            outcome.append(refused)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    assert not reader.is_alive(), "read_regular waited on a special file"
    if kind in ("file", "link-in"):
        assert outcome == [b"{}"]
    else:
        assert len(outcome) == 1 and isinstance(outcome[0], Refused)


@pytest.mark.parametrize("kind", KINDS)
def test_only_regular_files_or_nothing_are_replaced(tmp_path: Path, kind: str) -> None:
    """Only a regular file, or no file, may be replaced by a written one: links, pipes, devices and folders are refused."""
    path = _path_of_kind(tmp_path, kind)
    if kind in ("file", "missing"):
        writable_target(path)
    else:
        with pytest.raises(Refused):
            writable_target(path)


@pytest.mark.parametrize("kind", KINDS)
def test_a_baseline_setting_reads_only_regular_workspace_files(tmp_path: Path, kind: str) -> None:
    """A baseline a workspace names is read only when it is a regular file inside that workspace."""
    path = _path_of_kind(tmp_path, kind)
    if kind in ("file", "link-in"):
        with pytest.raises(BaselineError, match="not a run report"):
            load_baseline(path, tmp_path)
    else:
        with pytest.raises(BaselineError):
            load_baseline(path, tmp_path)


# ---------------------------------------------------------------- numbers at their extremes

extremes = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2**31, 2**63, 10**400, 1e10, 1e308]),
)


@FAST
@given(st.sampled_from(["runTimeout", "runConcurrency", "maxYamlDepth", "maxFileBytes", "maxFindingsShown"]), extremes)
def test_numeric_settings_at_extremes_are_taken_within_their_caps_or_left_out(name: str, value: object) -> None:
    """Any number for a numeric setting is taken within its cap, or left out with a message."""
    values, problems = editor_values({name: value})
    if values:
        taken = next(iter(values.values()))
        assert taken > 0
        assert {"runTimeout": taken <= MAX_RUN_TIMEOUT_S, "runConcurrency": taken <= MAX_RUN_CONCURRENCY, "maxYamlDepth": taken <= MAX_YAML_DEPTH}.get(name, True)
    else:
        assert problems


@FAST
@given(st.integers(min_value=1, max_value=10_000), st.integers(min_value=0, max_value=10_000))
def test_chunking_reads_each_line_a_bounded_number_of_times(size: int, overlap: int) -> None:
    """Any chunking taken puts a line in at most MAX_WINDOWS_PER_LINE chunks."""
    try:
        chunking = Chunking.from_config({"unit": "lines", "size": size, "overlap": overlap})
    except ChunkingError:
        return
    lines = ["x"] * 3 * size
    covered = sum(last - first + 1 for first, last in line_ranges(lines, chunking))
    assert covered <= MAX_WINDOWS_PER_LINE * len(lines)


# ---------------------------------------------------------------- globs

glob_parts = st.lists(st.sampled_from(["a", "b", "/", "*", "**", "**/", "?", "{a,b}", "."]), max_size=12).map("".join)
path_parts = st.lists(st.sampled_from(["a", "b", "/", "."]), max_size=16).map("".join)


@FAST
@given(glob_parts, st.lists(path_parts, max_size=10))
def test_glob_automaton_matches_as_the_glob_regex(glob: str, paths: list[str]) -> None:
    """The automaton used for globs with many wildcards matches exactly the paths the glob's regex matches."""
    try:
        regex = _glob_regex(glob)
    except re.error:
        return
    automaton = _GlobAutomaton(glob)
    for path in paths:
        assert automaton.matches(path) == bool(regex.fullmatch(path))


@FAST
@given(st.integers(min_value=3, max_value=12), st.integers(min_value=50, max_value=400))
def test_globs_match_in_linear_time(stars: int, length: int) -> None:
    """A glob of many ``**`` against a long name that almost matches is decided in one step per character,
    each over at most as many states as the glob has: work linear in the name, where a backtracking matcher
    tries every way of splitting it (the reproduction took minutes)."""
    glob = "**a" * stars + "**b"
    automaton = _GlobAutomaton(glob)
    steps = []
    step = automaton._step

    def counted(states, char):
        steps.append(len(states))
        return step(states, char)

    automaton._step = counted  # type: ignore[method-assign]
    assert not automaton.matches("a" * length)
    assert len(steps) <= length
    assert max(steps) <= len(automaton.program)
    assert not glob_match("a" * length, (glob,))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from(["\n", "\r\n", "a", "é", "漢", "😀", '{"id": 1}', "\ufeff", " "]), max_size=40),
    st.booleans(),
    st.integers(min_value=1, max_value=7),
)
def test_a_file_read_in_pieces_has_the_lines_and_size_of_the_file_read_whole(tmp_path: Path, parts: list[str], bom: bool, piece: int) -> None:
    """A dataset's lines read a few bytes at a time (a character split between two pieces, a byte order mark
    first, lines ending in CRLF, an empty file) are those of its whole text split at "\n", and the size is that
    text's UTF-8 size; a file holding a byte that is not UTF-8 is left to the reading of the whole file."""
    data = ("\ufeff" if bom else "").encode() + "".join(parts).encode()
    path = tmp_path / "d.jsonl"
    path.write_bytes(data)
    import unittest.mock

    with unittest.mock.patch.object(sources, "_PIECE", piece):
        read = sources.read_lines(path, 1 << 20)
        text = sources.decode(data).text
        assert read == (text.split("\n"), len(text.encode()))
        path.write_bytes(data + b"\xff\n{}")
        assert sources.read_lines(path, 1 << 20) is None
        with pytest.raises(Refused):
            sources.read_lines(path, 2)
