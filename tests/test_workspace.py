"""The workspace: roots, the file index, classification and cross-file facts."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp.core.reading.paths import is_normal, normalize_relative, not_normal_among
from rag_lsp.core.workspace.roots import find_root
from rag_lsp.core.workspace.workspace import DATASET_FILE, MANIFEST_FILE, SUITE_FILE, TARGETS_FILE, Workspace

SUITE = """\
suites:
  - id: code
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {match: id, k: 3}}
    thresholds: {rag.recall: 0.8, rag.mode.semantic: 1}
"""


def write(root: Path, relative: str, text: str = "x\n") -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_root_is_the_nearest_folder_with_punica(tmp_path: Path) -> None:
    """The root is the nearest folder upwards holding .punica/, before the git root."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "project" / ".punica").mkdir(parents=True)
    (tmp_path / "project" / "src").mkdir()
    assert find_root(tmp_path / "project" / "src") == (tmp_path / "project").resolve()
    (tmp_path / "other").mkdir()
    assert find_root(tmp_path / "other") == tmp_path.resolve()


def test_file_index_skips_vcs_environments_dependencies_and_ignored(tmp_path: Path) -> None:
    """The index holds workspace files, not .git, virtualenvs, node_modules or git-ignored files."""
    (tmp_path / ".punica").mkdir()
    for relative in ("src/a.py", ".git/config", ".venv/lib/x.py", "node_modules/p/index.js", "build/out.txt", "docs/b.md", "docs/tmp.log"):
        write(tmp_path, relative)
    write(tmp_path, ".gitignore", "build/\n")
    write(tmp_path, "docs/.gitignore", "*.log\n")
    files = set(Workspace(tmp_path).files())
    assert {"src/a.py", "docs/b.md", ".gitignore", "docs/.gitignore"} <= files
    assert not files & {".git/config", ".venv/lib/x.py", "node_modules/p/index.js", "build/out.txt", "docs/tmp.log"}


def test_files_whose_names_are_not_utf8_are_not_workspace_files(tmp_path: Path) -> None:
    """A file or folder whose name's bytes are not UTF-8 (Linux allows any) is left out: no suite or dataset can name it."""
    write(tmp_path, "docs/a.md")
    try:
        (tmp_path / "docs" / os.fsdecode(b"caf\xe9.md")).write_text("x\n")
        (tmp_path / os.fsdecode(b"old-\xff")).mkdir()
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    (tmp_path / os.fsdecode(b"old-\xff") / "b.md").write_text("x\n")
    assert Workspace(tmp_path).files() == ["docs/a.md"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_named_pipes_are_not_workspace_files_and_never_read(tmp_path: Path) -> None:
    """A named pipe (even one named .gitignore or as a dataset) is no workspace file: the listing, the checks
    and the builtin index never open it, which would wait for a writer forever."""
    write(tmp_path, ".punica/evals/a.suite.yaml", SUITE.replace("match: id, k: 3", "match: path"))
    write(tmp_path, "docs/a.md", "# Deploys\n\nRolling out a release.\n")
    for relative in ("docs/pipe.md", ".gitignore", ".punica/evals/code.jsonl"):
        os.mkfifo(tmp_path / relative)
    done: list[object] = []

    def check_and_search() -> None:
        from rag_lsp.core.checking.analyze import analyze_workspace
        from rag_lsp.core.workspace.suitefacts import target_info
        from rag_lsp.core.running.targets import Request, open_target

        workspace = Workspace(tmp_path)
        done.append(workspace.files())
        done.append([finding.code for findings in analyze_workspace(workspace).values() for finding in findings])
        target = open_target(target_info("vectors.query", {"builtin": {"retrieval": "keyword"}}), workspace, 5.0)
        done.append(target.answer(Request("c", {"query": "rolling out a release"})).hits[0].path)

    worker = threading.Thread(target=check_and_search, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "a named pipe was opened"
    files, codes, first_hit = done
    assert files == [".punica/evals/a.suite.yaml", "docs/a.md"]
    assert "RAG105" in codes
    assert first_hit == "docs/a.md"


def test_files_are_classified_by_path_and_content(tmp_path: Path) -> None:
    """Suites, datasets, manifests and the targets config are told apart; other YAML is not ours."""
    write(tmp_path, ".punica/evals/a.suite.yaml", SUITE)
    write(tmp_path, ".punica/evals/code.jsonl", "")
    write(tmp_path, ".punica/other.yaml", SUITE)
    write(tmp_path, ".punica/metrics/m.yaml", "name: m\n")
    write(tmp_path, ".punica/targets.yaml", "targets: {}\n")
    write(tmp_path, "tools/manifest.yaml", "manifest_version: '1'\nkind: metric\n")
    write(tmp_path, "compose.yaml", "services: {}\n")
    workspace = Workspace(tmp_path)
    assert workspace.discover() == {
        ".punica/evals/a.suite.yaml": SUITE_FILE,
        ".punica/evals/code.jsonl": DATASET_FILE,
        ".punica/metrics/m.yaml": MANIFEST_FILE,
        ".punica/other.yaml": SUITE_FILE,
        ".punica/targets.yaml": TARGETS_FILE,
    }
    assert workspace.kind_of("tools/manifest.yaml") == MANIFEST_FILE
    assert workspace.kind_of("compose.yaml") is None


def test_dataset_use_collects_match_and_k_of_every_suite(tmp_path: Path) -> None:
    """A dataset is read with the match and k of each suite that references it."""
    write(tmp_path, ".punica/evals/a.suite.yaml", SUITE)
    write(tmp_path, ".punica/evals/b.suite.yaml", SUITE.replace("id: code", "id: other").replace("match: id, k: 3", "k: 7"))
    use = Workspace(tmp_path).dataset_use(".punica/evals/code.jsonl")
    assert use.matches == {"id", "path"}
    assert use.ks == {3, 7}
    assert set(use.suites) == {"code", "other"}
    assert "rag_case_v1" in use.accepts


def test_recordings_are_not_datasets(tmp_path: Path) -> None:
    """The file a recorded target replays is JSON Lines but not a dataset."""
    write(tmp_path, ".punica/targets.yaml", "targets:\n  rec: {recorded: .punica/evals/run.jsonl}\n")
    write(tmp_path, ".punica/evals/run.jsonl", '{"id": "a", "hits": [], "mode": "semantic"}\n')
    workspace = Workspace(tmp_path)
    assert workspace.kind_of(".punica/evals/run.jsonl") is None
    assert ".punica/evals/run.jsonl" not in workspace.discover()


def test_normalize_relative_refuses_escapes() -> None:
    """Paths that leave the workspace normalize to None; others to their normal form."""
    assert normalize_relative("./src//a.py") == "src/a.py"
    assert normalize_relative("src\\a.py") == "src/a.py"
    assert normalize_relative("../a.py") is None
    assert normalize_relative("/etc/passwd") is None
    assert normalize_relative("C:/x") is None


def test_symlinks_out_of_the_workspace_are_not_workspace_files(tmp_path: Path) -> None:
    """A symlink pointing outside the root is neither indexed nor read."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    root = tmp_path / "ws"
    (root / ".punica").mkdir(parents=True)
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    workspace = Workspace(root)
    assert "link.txt" not in workspace.files()
    assert "linkdir/secret.txt" not in workspace.files()
    assert workspace.read("link.txt") is None
    assert workspace.read("../outside/secret.txt") is None


def test_suite_globs_take_editor_style_patterns(tmp_path: Path) -> None:
    """Configured globs understand **, * and {a,b} as editors do."""
    from rag_lsp.core.workspace.settings import Settings

    write(tmp_path, ".punica/keep", "")
    write(tmp_path, "evals/deep/x.yml", SUITE)
    write(tmp_path, "evals/y.yaml", SUITE.replace("id: code", "id: y"))
    write(tmp_path, "other/z.yaml", SUITE.replace("id: code", "id: z"))
    workspace = Workspace(tmp_path, Settings(suite_globs=("evals/**/*.y{a,}ml",)))
    assert {suite.id for suite in workspace.suites()} == {"code", "y"}


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(value=st.text(st.sampled_from(list("/.\\:a\n ")), max_size=8))
def test_a_path_is_in_normal_form_exactly_when_normalizing_keeps_it(value: str) -> None:
    """The one-search test for a path in normal form agrees with normalizing it, for every mix of
    slashes, dots, backslashes, drive colons and line breaks."""
    assert is_normal(value) == (normalize_relative(value) == value)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(values=st.lists(st.text(st.sampled_from(list("/.\\:a ")), max_size=6), max_size=8) | st.lists(st.text(st.sampled_from(list("/.\\:a\n")), max_size=6), max_size=8))
def test_values_not_in_normal_form_are_found_together_as_one_by_one(values: list[str]) -> None:
    """One search over many values finds exactly the values that are not in normal form, line breaks
    inside values included."""
    assert not_normal_among(values) == {value for value in values if not is_normal(value)}
