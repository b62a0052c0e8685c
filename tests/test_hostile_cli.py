"""Hostile and broken input through the command line, as CI runs it: every case
ends with a clear message and an exit code, never a traceback, an internal
error, a hang, a read outside the workspace through a setting, or a file of the
user's replaced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from workspaces import make_workspace

# Slow: each test runs the command line on hostile input in a process of its own.
pytestmark = pytest.mark.slow

# Nothing here may take long: a hang is a failure, not a slow test.
TIMEOUT = 60


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``rag-lsp`` run as a process in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "rag_lsp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        env={**os.environ, **(env or {})},
    )


def assert_clean(result: subprocess.CompletedProcess[str], *codes: int) -> None:
    """The process ended with one of ``codes`` and said nothing of its insides."""
    assert result.returncode in codes, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    for stream in (result.stdout, result.stderr):
        assert "Traceback" not in stream, stream[-3000:]
        assert "internal error" not in stream, stream[-3000:]


def make_deep_folders(root: Path, depth: int) -> Path:
    """Folders ``d/d/.../d`` ``depth`` deep under ``root`` (made one at a time:
    pathlib's and os's own ways recurse); the deepest."""
    path = str(root)
    for _ in range(depth):
        path += "/d"
        os.mkdir(path)
    return Path(path)


def remove_deep_folders(root: Path) -> None:
    """Remove what make_deep_folders made under ``root`` (and the files in it),
    deepest first: the temporary folders' own clean-up recurses."""
    path = str(root / "d")
    while os.path.isdir(path + "/d"):
        path += "/d"
    while path != str(root):
        for name in os.listdir(path):
            if name != "d":
                os.unlink(os.path.join(path, name))
        os.rmdir(path)
        path = os.path.dirname(path)


def deep_toml(depth: int = 500) -> str:
    return "x = " + "[" * depth + "]" * depth + "\n"


def settings(root: Path, text: str) -> Path:
    path = root / ".punica" / "rag-lsp.toml"
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- nesting


def test_deep_settings_file_is_a_finding_and_the_rest_is_checked(tmp_path: Path) -> None:
    """A settings file nested 500 deep is RAG005 on that file; the other files are still checked, and run works on defaults."""
    root = make_workspace(tmp_path, dataset='{"id": "a", "input": {"query": "q"}, "expect": {"relevant": []}}\n')
    settings(root, deep_toml())
    result = cli("check", "--format", "json", cwd=root)
    assert_clean(result, 1)
    found = {(item["path"], item["code"]) for item in json.loads(result.stdout)}
    assert (".punica/rag-lsp.toml", "RAG005") in found
    assert (".punica/evals/code.jsonl", "RAG200") in found
    assert_clean(cli("run", cwd=root), 0, 1)


def test_deep_pyproject_table_is_a_finding(tmp_path: Path) -> None:
    """A pyproject.toml whose [tool.rag-lsp] is nested 500 deep is RAG005, not a crash."""
    root = make_workspace(tmp_path)
    (root / "pyproject.toml").write_text("[tool.rag-lsp]\n" + deep_toml(), encoding="utf-8")
    result = cli("check", "--format", "json", cwd=root)
    assert_clean(result, 1)
    assert ("pyproject.toml", "RAG005") in {(item["path"], item["code"]) for item in json.loads(result.stdout)}


def test_deep_settings_of_a_nested_workspace_leave_the_outer_check_whole(tmp_path: Path) -> None:
    """A nested workspace whose settings file is nested 500 deep does not break the outer check."""
    root = make_workspace(tmp_path / "outer")
    inner = make_workspace(root / "inner")
    settings(inner, deep_toml())
    result = cli("check", cwd=root)
    assert_clean(result, 0, 1)
    assert "RAG005" in result.stdout


def test_yaml_depth_setting_is_capped(tmp_path: Path) -> None:
    """max-yaml-depth = 1000 is refused with a finding (the cap applies), and a suite nested 600 deep is RAG005."""
    root = make_workspace(tmp_path)
    settings(root, "max-yaml-depth = 1000\n")
    (root / ".punica" / "deep.suite.yaml").write_text("suites: " + "[" * 600 + "]" * 600 + "\n", encoding="utf-8")
    result = cli("check", "--format", "json", cwd=root)
    assert_clean(result, 1)
    found = {(item["path"], item["code"]) for item in json.loads(result.stdout)}
    assert (".punica/rag-lsp.toml", "RAG004") in found
    assert (".punica/deep.suite.yaml", "RAG005") in found
    assert_clean(cli("run", cwd=root), 0, 1, 2)


def test_baseline_nested_deep_is_a_usage_error(tmp_path: Path) -> None:
    """A baseline JSON nested 100,000 deep is refused with a message and exit code 2."""
    root = make_workspace(tmp_path)
    (root / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = cli("run", "--baseline", "deep.json", cwd=root)
    assert_clean(result, 2)
    assert "baseline" in result.stderr


def test_folders_nested_990_deep(tmp_path: Path) -> None:
    """Folders nested 990 deep are walked by check and run without a crash."""
    root = make_workspace(tmp_path)
    deep = make_deep_folders(root, 990)
    try:
        (deep / "x.txt").write_text("x\n", encoding="utf-8")
        assert_clean(cli("check", cwd=root), 0, 1)
        assert_clean(cli("run", cwd=root), 0, 1)
    finally:
        remove_deep_folders(root)


def test_damaged_meta_json_is_a_cache_miss(tmp_path: Path) -> None:
    """A meta.json nested 1,000 deep, or linked to /dev/zero, is a cache miss: the run rebuilds the index."""
    cache = tmp_path / "cache"
    env = {"RAG_LSP_CACHE_DIR": str(cache)}
    root = make_workspace(tmp_path / "w")
    assert_clean(cli("run", cwd=root, env=env), 0)
    (meta,) = cache.glob("index-v*/*/meta.json")
    meta.write_text("[" * 1000, encoding="utf-8")
    assert_clean(cli("run", cwd=root, env=env), 0)
    assert json.loads(meta.read_text(encoding="utf-8"))["rows"] >= 1
    meta.unlink()
    meta.symlink_to("/dev/zero")
    assert_clean(cli("run", cwd=root, env=env), 0)


# ---------------------------------------------------------------- paths a setting or flag names


@pytest.mark.parametrize("kind", ["fifo", "device", "outside", "folder"])
def test_baseline_setting_reads_only_regular_workspace_files(tmp_path: Path, kind: str) -> None:
    """A baseline setting naming a FIFO, a device, a file outside the workspace or a folder is refused, at once, with exit 2."""
    root = make_workspace(tmp_path / "w")
    (tmp_path / "outside.json").write_text('{"suites": []}', encoding="utf-8")
    named = {"fifo": "pipe", "device": "/dev/zero", "outside": "../outside.json", "folder": "src"}[kind]
    if kind == "fifo":
        os.mkfifo(root / "pipe")
    settings(root, f"baseline = {json.dumps(named)}\n")
    result = cli("run", cwd=root)
    assert_clean(result, 2)
    assert "baseline" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_baseline_flag_reads_only_regular_files(tmp_path: Path, kind: str) -> None:
    """--baseline naming a FIFO, /dev/zero or a folder is refused at once with exit 2."""
    root = make_workspace(tmp_path)
    named = {"fifo": "pipe", "device": "/dev/zero", "folder": "src"}[kind]
    if kind == "fifo":
        os.mkfifo(root / "pipe")
    result = cli("run", "--baseline", named, cwd=root)
    assert_clean(result, 2)
    assert "baseline" in result.stderr


def test_record_refuses_a_symlink_and_keeps_it(tmp_path: Path) -> None:
    """--record naming a link is refused with why; the link and the file it leads to are unchanged."""
    root = make_workspace(tmp_path)
    (root / "2024.jsonl").write_text("old\n", encoding="utf-8")
    (root / "latest.jsonl").symlink_to("2024.jsonl")
    result = cli("run", "--record", "latest.jsonl", cwd=root)
    assert_clean(result, 2)
    assert "symbolic link" in result.stderr
    assert (root / "latest.jsonl").is_symlink()
    assert (root / "2024.jsonl").read_text(encoding="utf-8") == "old\n"


def test_record_refuses_a_fifo_and_a_device(tmp_path: Path) -> None:
    """--record naming a FIFO or /dev/full is refused with exit 2; neither is replaced."""
    root = make_workspace(tmp_path)
    os.mkfifo(root / "pipe")
    result = cli("run", "--record", "pipe", cwd=root)
    assert_clean(result, 2)
    assert "named pipe" in result.stderr
    assert (root / "pipe").is_fifo()
    result = cli("run", "--record", "/dev/full", cwd=root)
    assert_clean(result, 2)
    assert Path("/dev/full").is_char_device()


def test_record_replaces_a_regular_file(tmp_path: Path) -> None:
    """--record over an earlier recording replaces it, and leaves no partial file."""
    root = make_workspace(tmp_path)
    (root / "rec.jsonl").write_text("old\n", encoding="utf-8")
    assert_clean(cli("run", "--record", "rec.jsonl", cwd=root), 0)
    assert '"id":"app"' in (root / "rec.jsonl").read_text(encoding="utf-8")
    assert not [path for path in root.iterdir() if path.name.endswith(".partial")]


# ---------------------------------------------------------------- findings on every row


def test_a_dataset_of_empty_rows_is_one_finding_per_cause(tmp_path: Path) -> None:
    """300,000 lines of `{}` (900 KB; three findings a row): `check --format json` gives one finding per cause,
    each covering every occurrence and line, where each occurrence was a finding kept in memory."""
    root = make_workspace(tmp_path)
    dataset = root / ".punica" / "evals" / "code.jsonl"
    dataset.write_text("{}\n" * 300_000, encoding="utf-8")
    result = cli("check", "--format", "json", str(dataset), cwd=root)
    assert_clean(result, 1)
    folded = {(item["code"], item["covers"]["findings"], len(item["covers"]["lines"])) for item in json.loads(result.stdout) if "covers" in item}
    assert folded == {("RAG004", 600_000, 300_000), ("RAG201", 300_000, 300_000)}
    assert len(json.loads(result.stdout)) == 2


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("{\n}" + " \n" * 1_000_000 + "x\n", 1_000_001),  # a brace, then a million blank lines
        ("[\n" + "\n" * 3_000_000 + "[", 3_000_001),  # a document left open by millions of blank lines
        ("[" * 1_000_000, 0),  # an array nested a million deep
    ],
    ids=["brace-then-blank-lines", "open-array-then-blank-lines", "nested-a-million-deep"],
)
def test_a_dataset_that_begins_like_a_json_document_and_is_none_is_one_finding(tmp_path: Path, text: str, line: int) -> None:
    """A dataset that begins as a JSON document does and then is no JSON a decoder can read (millions of blank
    lines, nesting no decoder follows) is one RAG002 at once, where the document breaks."""
    root = make_workspace(tmp_path)
    dataset = root / ".punica" / "evals" / "code.jsonl"
    dataset.write_text(text, encoding="utf-8")
    result = cli("check", "--format", "json", str(dataset), cwd=root)
    assert_clean(result, 1)
    (finding,) = json.loads(result.stdout)
    assert finding["code"] == "RAG002" and finding["range"]["start"]["line"] == line and "not JSON Lines" in finding["message"]


# ---------------------------------------------------------------- values and the environment


@pytest.mark.parametrize("value", ["٣", "1_0", "1,٣", "99999999999999999999"])
def test_k_takes_ascii_digits_only(tmp_path: Path, value: str) -> None:
    """--k accepts k written in the digits 0-9 only, of a sane length."""
    root = make_workspace(tmp_path)
    result = cli("run", "--k", value, cwd=root)
    assert_clean(result, 2)
    assert "--k" in result.stderr


def test_deleted_current_folder(tmp_path: Path) -> None:
    """Run from a folder that was deleted, check says so with exit 2."""
    gone = tmp_path / "gone"
    gone.mkdir()
    process = subprocess.run(
        [sys.executable, "-c", "import os, sys; os.rmdir(sys.argv[1]); from rag_lsp.cli import main; sys.exit(main(['check']))", str(gone)],
        cwd=gone,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert_clean(process, 2)
    assert "current folder" in process.stderr


def test_cache_dir_of_no_user(tmp_path: Path) -> None:
    """RAG_LSP_CACHE_DIR='~nouser/x' gives a warning and a run without a cache, no traceback."""
    root = make_workspace(tmp_path)
    result = cli("run", cwd=root, env={"RAG_LSP_CACHE_DIR": "~nosuchuserhere/x"})
    assert_clean(result, 0)
    assert "RAG_LSP_CACHE_DIR" in result.stderr


def test_settings_file_linked_from_outside_is_refused_and_checked(tmp_path: Path) -> None:
    """A settings file that is a link out of the workspace is RAG005 in check (named or not), and its values do not apply to run."""
    root = make_workspace(tmp_path / "w")
    (tmp_path / "outside.toml").write_text("run-concurrency = 0\n", encoding="utf-8")
    (root / ".punica" / "rag-lsp.toml").symlink_to(tmp_path / "outside.toml")
    for args in (("check",), ("check", ".punica/rag-lsp.toml")):
        result = cli(*args, "--format", "json", cwd=root)
        assert_clean(result, 1)
        found = [item for item in json.loads(result.stdout) if item["path"] == ".punica/rag-lsp.toml"]
        assert [item["code"] for item in found] == ["RAG005"], found
        assert "outside the workspace" in found[0]["message"]
    result = cli("run", cwd=root)
    assert_clean(result, 0)
    assert "out of range" not in result.stderr


@pytest.mark.parametrize(
    ("setting", "value"),
    [("run-timeout", "1e10"), ("run-concurrency", "100000000"), ("max-yaml-depth", "100000")],
)
def test_numeric_settings_past_their_cap_are_findings(tmp_path: Path, setting: str, value: str) -> None:
    """A timeout, a concurrency or a YAML depth past its cap is RAG004 in check; run uses the default and answers."""
    root = make_workspace(tmp_path)
    settings(root, f"{setting} = {value}\n")
    result = cli("check", "--format", "json", cwd=root)
    assert_clean(result, 1)
    assert [(item["path"], item["code"]) for item in json.loads(result.stdout) if item["severity"] == "error"] == [
        (".punica/rag-lsp.toml", "RAG004")
    ]
    assert_clean(cli("run", cwd=root), 0)


def test_target_timeout_past_its_cap_is_a_finding(tmp_path: Path) -> None:
    """An http target's timeout_s of 1e10 is RAG004 in check, not an OverflowError in run."""
    root = make_workspace(tmp_path)
    (root / ".punica" / "targets.yaml").write_text(
        "targets:\n  vectors.query:\n    http: {url: 'http://127.0.0.1:9/q', timeout_s: 1.0e+10}\n", encoding="utf-8"
    )
    result = cli("check", "--format", "json", cwd=root)
    assert_clean(result, 1)
    assert (".punica/targets.yaml", "RAG004") in {(item["path"], item["code"]) for item in json.loads(result.stdout)}
    assert_clean(cli("run", cwd=root), 1, 2)


def test_chunking_overlap_that_reads_each_line_thousands_of_times_is_refused(tmp_path: Path) -> None:
    """chunking {size: 10000, overlap: 9999} is RAG004 in check, and run refuses the suite at once."""
    root = make_workspace(tmp_path)
    (root / ".punica" / "targets.yaml").write_text(
        "targets:\n  vectors.query:\n    builtin: {chunking: {unit: lines, size: 10000, overlap: 9999}}\n", encoding="utf-8"
    )
    (root / "src" / "big.txt").write_text("line\n" * 12_000, encoding="utf-8")
    result = cli("check", "--format", "json", cwd=root)
    assert_clean(result, 1)
    (finding,) = [item for item in json.loads(result.stdout) if item["code"] == "RAG004"]
    assert "at most 9,000" in finding["message"]
    run = cli("run", cwd=root)
    assert_clean(run, 1)
    assert "at most 9,000" in run.stdout + run.stderr


def test_glob_that_would_backtrack_is_matched_at_once(tmp_path: Path) -> None:
    """suite-globs = ["**a**a**a**a**a**a**b"] against YAML files named with 100 a's (a glob is matched against
    the files that may be suites): check ends in seconds, where a backtracking matcher took minutes."""
    root = make_workspace(tmp_path)
    settings(root, 'suite-globs = ["**a**a**a**a**a**a**b", ".punica/**/*.yaml"]\n')
    for folder in (root, root / ".punica"):
        (folder / ("a" * 100)).write_text("x\n", encoding="utf-8")
        (folder / ("a" * 100 + ".yaml")).write_text("x: 1\n", encoding="utf-8")
    assert_clean(cli("check", cwd=root), 0, 1)


def test_failed_cache_save_leaves_no_arrays_behind(tmp_path: Path) -> None:
    """When the index cannot be saved (its meta.json is a folder), no chunks-*.npy is left in the cache."""
    cache = tmp_path / "cache"
    env = {"RAG_LSP_CACHE_DIR": str(cache)}
    root = make_workspace(tmp_path / "w")
    assert_clean(cli("run", cwd=root, env=env), 0)
    (meta,) = cache.glob("index-v*/*/meta.json")
    for path in meta.parent.iterdir():
        path.unlink()
    meta.mkdir()
    for _ in range(2):
        assert_clean(cli("run", cwd=root, env=env), 0)
    assert not list(meta.parent.glob("*.npy"))
