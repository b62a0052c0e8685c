"""``rag-lsp check`` through the real command line."""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

import pytest
import yaml
from workspaces import GOOD_SUITE, make_workspace, rag_lsp

# Slow (runs the command line in processes of its own): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

REPO = Path(__file__).parent.parent
EXAMPLES = REPO / "examples"
CAUGHT = REPO / "examples-caught"

EMPTY_CASE = '{"id": "a", "input": {"query": "x"}, "expect": {"relevant": []}}'
EMPTY_COLUMN = EMPTY_CASE.index("[]") + 1  # 1-based column of the empty list





def test_every_check_format_offered_is_one_written() -> None:
    """`check --format` offers exactly the formats the formatter writes (named apart so the
    command line is read without importing the checks)."""
    from rag_lsp.cli.check import FORMAT_NAMES
    from rag_lsp.cli.formats import FORMATS

    assert sorted(FORMAT_NAMES) == sorted(FORMATS)


def test_clean_workspace_passes(tmp_path: Path) -> None:
    """A workspace without findings exits 0 and says all checks passed."""
    make_workspace(tmp_path)
    result = rag_lsp("check", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "All checks passed (2 files checked)."


def test_the_readme_example_suite_and_dataset_check_clean(tmp_path: Path) -> None:
    """The README's complete suite file and dataset line, written where it says, check clean and name every key they use."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "\n## A suite and its dataset, in full\n" in readme
    section = readme.split("## A suite and its dataset, in full", 1)[1].split("\n## ", 1)[0]
    suite = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    line = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    (tmp_path / ".punica" / "evals").mkdir(parents=True)
    (tmp_path / ".punica" / "evals" / "gateway.suite.yaml").write_text(suite, encoding="utf-8")
    (tmp_path / ".punica" / "evals" / "gateway.jsonl").write_text(line, encoding="utf-8")
    for relative in json.loads(line)["expect"]["relevant"]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("approvals\n", encoding="utf-8")
    result = rag_lsp("check", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("All checks passed"), result.stdout + result.stderr

    def keys(value: object) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {key for item in value.values() for key in keys(item)}
        if isinstance(value, list):
            return {key for item in value for key in keys(item)}
        return set()

    # Every key, as `key`, `key: ...` or `parent.key` (metric names are keys too,
    # but the metrics section explains them).
    for key in keys(yaml.safe_load(suite)) | keys(json.loads(line)):
        if key != "rag" and not key.startswith("rag."):
            assert re.search(rf"[`.]{re.escape(key)}[`:. ]", section), f"the README does not explain {key!r}"


def test_the_examples_pass_their_checks(tmp_path: Path) -> None:
    """examples/, the README's main job, has no finding: exit 0 and all checks passed."""
    result = rag_lsp("check", str(EXAMPLES), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "All checks passed (3 files checked)."


def test_examples_text_output_reads_like_a_compiler(tmp_path: Path) -> None:
    """Findings print as path:line:col: severity CODE message, then a summary; exit 1."""
    result = rag_lsp("check", str(CAUGHT), cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    pattern = re.compile(r"^\S+:\d+:\d+: (error|warning|information|hint) RAG\d{3} .+$")
    findings = [line for line in lines[:-1] if not line.startswith("    ")]
    assert findings, lines
    assert all(pattern.match(line) for line in findings), lines
    assert re.match(r"^Found \d+ errors?.* in \d+ files? \(\d+ files checked\)\.$", lines[-1])
    assert "broken.jsonl" in result.stdout
    assert "gateway.jsonl" not in result.stdout
    assert "Traceback" not in result.stderr


def test_json_output_follows_the_spec(tmp_path: Path) -> None:
    """--format json prints one array of {path, range, severity, code, message}, paths relative to the root."""
    result = rag_lsp("check", str(CAUGHT), "--format", "json", cwd=tmp_path)
    findings = json.loads(result.stdout)
    assert findings
    for finding in findings:
        assert set(finding) == {"path", "range", "severity", "code", "message"}
        assert finding["path"].startswith(".punica/")
        assert finding["severity"] in ("error", "warning", "information", "hint")
        assert re.fullmatch(r"RAG\d{3}", finding["code"])
        assert set(finding["range"]) == {"start", "end"}


def test_json_columns_are_utf16(tmp_path: Path) -> None:
    """A finding after an astral character is placed in UTF-16 units, as LSP ranges are."""
    make_workspace(tmp_path, dataset='{"id": "😀", "input": {"query": "x"}, "expect": {"relevant": []}}\n')
    result = rag_lsp("check", "--format", "json", cwd=tmp_path)
    (finding,) = json.loads(result.stdout)
    line = '{"id": "😀", "input": {"query": "x"}, "expect": {"relevant": []}}'
    code_points = line.index("[]")
    assert finding["code"] == "RAG200"
    assert finding["range"]["start"] == {"line": 0, "character": code_points + 1}


def test_sarif_output(tmp_path: Path) -> None:
    """--format sarif is SARIF 2.1.0 with rule metadata and 1-based regions."""
    make_workspace(tmp_path, dataset=EMPTY_CASE + "\n")
    result = rag_lsp("check", "--format", "sarif", cwd=tmp_path)
    sarif = json.loads(result.stdout)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["name"] == "rag-lsp"
    assert any(rule["id"] == "RAG200" for rule in run["tool"]["driver"]["rules"])
    (found,) = run["results"]
    assert found["ruleId"] == "RAG200"
    assert found["level"] == "error"
    region = found["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 1
    assert region["startColumn"] == EMPTY_COLUMN
    assert region["endColumn"] == EMPTY_COLUMN + 2
    assert found["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ".punica/evals/code.jsonl"


def test_sarif_uris_are_percent_encoded(tmp_path: Path) -> None:
    """A suite file whose path holds a space, `#`, `%` and a non-ASCII letter is named in SARIF by a URI reference that reads back as that path."""
    make_workspace(tmp_path)
    folder = tmp_path / ".punica" / "evals" / "my evals#1"
    folder.mkdir()
    (folder / "100% fertig ü.suite.yaml").write_text(GOOD_SUITE.replace("code.jsonl", "missing.jsonl").replace("id: code", "id: other"), encoding="utf-8")
    result = rag_lsp("check", "--format", "sarif", cwd=tmp_path)
    (found,) = json.loads(result.stdout)["runs"][0]["results"]
    uri = found["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == ".punica/evals/my%20evals%231/100%25%20fertig%20%C3%BC.suite.yaml"
    assert urllib.parse.unquote(urllib.parse.urlsplit(uri).path) == ".punica/evals/my evals#1/100% fertig ü.suite.yaml"


def test_github_annotations(tmp_path: Path) -> None:
    """--format github prints one workflow command per finding."""
    make_workspace(tmp_path, dataset=EMPTY_CASE + "\n")
    result = rag_lsp("check", "--format", "github", cwd=tmp_path)
    first = result.stdout.splitlines()[0]
    expected = (
        f"::error file=.punica/evals/code.jsonl,line=1,col={EMPTY_COLUMN},endLine=1,endColumn={EMPTY_COLUMN + 2},"
        "title=RAG200 (nothing-relevant)::the case declares nothing relevant"
    )
    assert first.startswith(expected)
    assert result.returncode == 1


def test_fail_on_levels(tmp_path: Path) -> None:
    """Warnings fail only with --fail-on warning (or lower); never never fails."""
    make_workspace(tmp_path, suite=GOOD_SUITE.replace("      rag.mode.semantic: 1\n", ""))
    assert rag_lsp("check", cwd=tmp_path).returncode == 0
    assert rag_lsp("check", "--fail-on", "warning", cwd=tmp_path).returncode == 1
    assert rag_lsp("check", "--fail-on", "hint", cwd=tmp_path).returncode == 1
    make_workspace(tmp_path / "broken", dataset="{not json\n")
    assert rag_lsp("check", "--fail-on", "never", cwd=tmp_path / "broken").returncode == 0


def test_explain_prints_the_rule_documentation(tmp_path: Path) -> None:
    """--explain CODE prints the rule's documented sections; an unknown code exits 2."""
    result = rag_lsp("check", "--explain", "rag200", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("RAG200 (nothing-relevant, error)")
    assert "## Why is this bad?" in result.stdout
    unknown = rag_lsp("check", "--explain", "RAG999", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "unknown code" in unknown.stderr


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    """A path that does not exist exits 2 with one clear line, no traceback."""
    result = rag_lsp("check", str(tmp_path / "nope"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"rag-lsp: {tmp_path / 'nope'}: no such file or folder"


def test_files_that_are_not_ours_are_skipped(tmp_path: Path) -> None:
    """pre-commit passes every YAML and JSON Lines file: one that is no suite, dataset or manifest (training data, say) is skipped; a JSON Lines file of cases is a dataset wherever it is."""
    make_workspace(tmp_path)
    (tmp_path / "docker-compose.yaml").write_text("services: {web: {image: nginx}}\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text('{"input": "2 + 2", "output": "4"}\n{"text": "hello", "label": 1}\n')
    result = rag_lsp("check", "docker-compose.yaml", "data/train.jsonl", ".punica/evals/code.suite.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "1 file checked" in result.stdout

    (tmp_path / "data" / "draft.jsonl").write_text('\n{"id": "new", "input": {"query": "q"}, "expect": {"relevant": []}}\n')
    # A case still being typed is not JSON yet, but its keys say it is a case.
    (tmp_path / "data" / "typing.jsonl").write_text('{"id": "new", "expect": {"relevant": [\n')
    result = rag_lsp("check", "--format", "json", "data/train.jsonl", "data/draft.jsonl", "data/typing.jsonl", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert [(finding["path"], finding["code"]) for finding in json.loads(result.stdout)] == [("data/draft.jsonl", "RAG200"), ("data/typing.jsonl", "RAG002")]


def test_bad_bytes_get_findings_not_tracebacks(tmp_path: Path) -> None:
    """Invalid UTF-8 and binary data are findings with exit 1, never a crash."""
    make_workspace(tmp_path)
    (tmp_path / ".punica" / "evals" / "code.jsonl").write_bytes(b'{"id": "\xff"}\n\x00\x01\x02\n')
    (tmp_path / ".punica" / "evals" / "code.suite.yaml").write_bytes(GOOD_SUITE.encode() + b"# \xfe\n")
    result = rag_lsp("check", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    codes = {finding["code"] for finding in json.loads(result.stdout)}
    assert {"RAG001", "RAG002"} <= codes
    assert "Traceback" not in result.stderr


def test_pre_commit_hook_runs_check() -> None:
    """The pre-commit hook calls rag-lsp check on YAML and JSON Lines files and on the settings files."""
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "rag-lsp-check"
    assert hook["entry"] == "rag-lsp check"
    assert re.search(hook["files"], "a/b.suite.yaml")
    assert re.search(hook["files"], "x.jsonl")
    # The settings file is checked too: a commit must not break it unseen.
    assert re.search(hook["files"], ".punica/rag-lsp.toml")
    assert re.search(hook["files"], "pyproject.toml")
    assert not re.search(hook["files"], "other.toml")


def _dot_slash_case(n: int) -> str:
    return json.dumps({"id": f"c{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": ["./src/app.py"]}})


def test_a_cause_on_most_rows_is_one_finding_that_every_output_can_unfold(tmp_path: Path) -> None:
    """A dataset whose 30 rows write their path from `./` gives one RAG206: the text names the rows and
    the likely cause, JSON gives the count and every line it covers, SARIF every line as properties
    and related places, and `--unfold` prints each occurrence; the one row that breaks the pattern
    (an empty list) keeps its own finding."""
    rows = [_dot_slash_case(n) for n in range(30)] + [EMPTY_CASE.replace('"a"', '"empty"')]
    make_workspace(tmp_path, dataset="\n".join(rows) + "\n")
    text = rag_lsp("check", cwd=tmp_path)
    assert text.returncode == 1, text.stderr
    (folded_line,) = [line for line in text.stdout.splitlines() if "RAG206" in line]
    assert "30 of the 31 rows (lines 1, 2, 3, …) share this finding" in folded_line
    assert "written from `./`" in folded_line and "--unfold" in folded_line
    assert "RAG200" in text.stdout

    findings = json.loads(rag_lsp("check", "--format", "json", cwd=tmp_path).stdout)
    (folded,) = [finding for finding in findings if finding["code"] == "RAG206"]
    assert folded["covers"] == {"findings": 30, "lines": list(range(30))}
    assert folded["range"]["start"]["line"] == 0
    assert [finding["code"] for finding in findings if finding["code"] != "RAG206"] == ["RAG200"]

    sarif = json.loads(rag_lsp("check", "--format", "sarif", cwd=tmp_path).stdout)
    (result,) = [result for result in sarif["runs"][0]["results"] if result["ruleId"] == "RAG206"]
    assert result["properties"] == {"covers": 30, "coveredLines": list(range(1, 31))}
    assert [place["physicalLocation"]["region"]["startLine"] for place in result["relatedLocations"]] == list(range(1, 31))

    unfolded = json.loads(rag_lsp("check", "--unfold", "--format", "json", cwd=tmp_path).stdout)
    each = [finding for finding in unfolded if finding["code"] == "RAG206"]
    assert [finding["range"]["start"]["line"] for finding in each] == list(range(30))
    assert all("covers" not in finding and "./src/app.py" in finding["message"] for finding in each)


def test_paths_missing_from_most_cases_are_one_finding_that_unfold_lists_path_by_path(tmp_path: Path) -> None:
    """A dataset whose 25 cases each expect a page of a knowledge base this workspace does not hold
    gives one RAG203 that says `--unfold` lists each; `--unfold` gives one RAG203 per missing path."""
    rows = [json.dumps({"id": f"c{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": [f"kb/page-{n}.html"]}}) for n in range(25)]
    make_workspace(tmp_path, dataset="\n".join(rows) + "\n")
    text = rag_lsp("check", cwd=tmp_path)
    assert text.returncode == 0, text.stderr  # a warning only
    (once,) = [line for line in text.stdout.splitlines() if "RAG203" in line]
    assert "25 of the 25 expected paths in this dataset (100%)" in once and "--unfold" in once

    unfolded = json.loads(rag_lsp("check", "--unfold", "--format", "json", cwd=tmp_path).stdout)
    each = [finding for finding in unfolded if finding["code"] == "RAG203"]
    assert [finding["range"]["start"]["line"] for finding in each] == list(range(25))
    assert all(f"'kb/page-{line}.html' is not a file in the workspace" in finding["message"] for line, finding in enumerate(each))


def test_the_explanation_of_a_rule_says_what_folding_is(tmp_path: Path) -> None:
    """`--explain` of a rule whose findings fold says when they are reported once and how to list each."""
    result = rag_lsp("check", "--explain", "RAG206", cwd=tmp_path)
    assert result.returncode == 0
    assert "most rows" in result.stdout and "--unfold" in result.stdout
