"""The workspace's settings file (.punica/rag-lsp.toml, or [tool.rag-lsp] in
pyproject.toml): read alike by `check`, `run` and the server, its problems
reported in it with their ranges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from lspclient import SERVER, diagnostics, edit, open_file, published_when, spans, start
from pytest_lsp import LanguageClient
from workspaces import GOOD_SUITE, make_workspace, rag_lsp

from rag_lsp.core.workspace.config import layered, read_config
from rag_lsp.core.reading.findings import Severity

CONFIG = ".punica/rag-lsp.toml"
# A suite without the rag.mode.semantic threshold: RAG103, a warning.
NO_SEMANTIC_SUITE = GOOD_SUITE.replace("      rag.mode.semantic: 1\n", "")
EMPTY_CASE = '{"id": "empty", "input": {"query": "x"}, "expect": {"relevant": []}}'


def findings_of(text: str, path: str = CONFIG) -> list[tuple[str, str, str]]:
    """(code, "line:col-line:col", message) of each finding of a settings file."""
    return [
        (finding.code, f"{finding.range.start.line}:{finding.range.start.character}-{finding.range.end.line}:{finding.range.end.character}", finding.message)
        for finding in read_config(path, text).findings
    ]


# ---------------------------------------------------------------- reading the file


def test_valid_file_gives_its_values_and_no_finding() -> None:
    """Every setting of a valid file is read, severities and ignores by code."""
    config = read_config(
        CONFIG,
        'suite-globs = ["evals/**/*.yaml"]\nrun-timeout = 5\nbaseline = "runs/main.json"\n'
        '[severity]\nrag103 = "off"\nRAG207 = "warning"\n[per-file-ignores]\n"legacy/**" = ["RAG205"]\n',
    )
    assert config.findings == ()
    assert config.values["suite_globs"] == ("evals/**/*.yaml",)
    assert config.values["run_timeout_s"] == 5.0
    assert config.values["baseline"] == "runs/main.json"
    assert config.values["severity"]["RAG103"] == "off"
    assert config.values["per_file_ignores"] == {"legacy/**": frozenset({"RAG205"})}


def test_unknown_key_is_reported_on_the_key_with_the_closest_name() -> None:
    """A misspelt key is a RAG004 on that key, naming the key it most likely means."""
    ((code, where, message),) = findings_of('[severity]\nRAG103 = "off"\n\n[per-file-ignore]\n"a/**" = ["RAG205"]\n')
    assert (code, where) == ("RAG004", "3:1-3:16")
    assert "did you mean 'per-file-ignores'" in message


def test_bad_value_is_reported_on_the_value_and_left_out() -> None:
    """A value of the wrong type is a finding on that value, and its setting keeps the default."""
    text = 'max-line-bytes = "big"\nrun-concurrency = 2\n'
    ((code, where, message),) = findings_of(text)
    assert (code, where) == ("RAG004", "0:17-0:22")
    assert "expected an integer" in message
    assert read_config(CONFIG, text).values == {"run_concurrency": 2}


def test_a_bad_severity_spoils_only_its_own_code() -> None:
    """A misspelt level is reported with the closest one; the file's other codes still apply."""
    text = '[severity]\nRAG103 = "off"\nRAG207 = "warn"\n'
    ((code, where, message),) = findings_of(text)
    assert (code, where) == ("RAG004", "2:9-2:15")
    assert "did you mean 'warning'" in message
    assert read_config(CONFIG, text).values["severity"] == {"RAG103": "off"}


def test_unknown_code_is_reported() -> None:
    """A code no rule has (in severities or in ignores) is a finding on it."""
    found = findings_of('[severity]\nRAG999 = "off"\n[per-file-ignores]\n"x/**" = ["RAG205", "RAG998"]\n')
    assert [(code, where) for code, where, _ in found] == [("RAG004", "1:0-1:6"), ("RAG004", "3:20-3:28")]
    assert all("no rule has the code" in message for _, _, message in found)


def test_a_code_that_is_not_one_is_named_with_the_code_meant_and_left_out_alone() -> None:
    """`RAG2O6` (a letter O) is not a rule code: the finding says so and names RAG206, and only it leaves its glob's list, whose other codes still apply."""
    text = '[per-file-ignores]\n"evals/**" = ["RAG205", "RAG2O6"]\n\n[severity]\nRAG2O7 = "off"\nRAG103 = "off"\n'
    assert findings_of(text) == [
        ("RAG004", "1:24-1:32", "'RAG2O6' is not a rule code, which is RAG and three digits (did you mean 'RAG206'?)"),
        ("RAG004", "4:0-4:6", "'RAG2O7' is not a rule code, which is RAG and three digits (did you mean 'RAG207'?)"),
    ]
    values = read_config(CONFIG, text).values
    assert values["per_file_ignores"] == {"evals/**": frozenset({"RAG205"})}
    assert values["severity"] == {"RAG103": "off"}


def test_findings_in_inline_tables_are_on_the_entry() -> None:
    """`severity = {...}` and `per-file-ignores = {...}` written inline: each finding is on its own entry, as in a table."""
    text = 'severity = {RAG207 = "of", RAG999 = "off"}\nper-file-ignores = {"legacy/**" = ["RAG205", "RAG997"]}\n'
    assert [(code, where) for code, where, _ in findings_of(text)] == [("RAG004", "0:21-0:25"), ("RAG004", "0:27-0:33"), ("RAG004", "1:45-1:53")]
    pyproject = '[project]\nname = "x"\n\n[tool]\nrag-lsp = {severity = {RAG207 = "of"}}\n'
    assert [(code, where) for code, where, _ in findings_of(pyproject, "pyproject.toml")] == [("RAG004", "4:32-4:36")]


def test_a_key_set_twice_is_rag003_on_the_second() -> None:
    """TOML refuses a key set twice: RAG003 on the second, naming it, with where it was set first; the file's settings are not used."""
    text = 'max-line-bytes = 1000\n# again\nmax-line-bytes = 2000\n'
    assert findings_of(text) == [("RAG003", "2:0-2:14", "'max-line-bytes' is set twice, which TOML does not allow: remove one (the file's settings are not used until then)")]
    (finding,) = read_config(CONFIG, text).findings
    assert [(related.path, str(related.range)) for related in finding.related] == [(CONFIG, "0:0-0:14")]
    assert read_config(CONFIG, text).values == {}


def test_trusted_is_never_read_from_the_file() -> None:
    """`trusted = true` in a workspace file is refused on its key, and grants nothing."""
    text = "trusted = true\n"
    ((code, where, message),) = findings_of(text)
    assert (code, where) == ("RAG004", "0:0-0:7")
    assert "cannot be set by a file of the workspace" in message
    assert "trusted" not in read_config(CONFIG, text).values


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0"])
def test_timeout_must_be_a_finite_positive_number(value: str) -> None:
    """NaN, infinity and zero are not a number of seconds."""
    ((code, _, _),) = findings_of(f"run-timeout = {value}\n")
    assert code == "RAG004"


def test_toml_syntax_error_is_placed_where_the_parser_stopped() -> None:
    """A file that is not TOML is one RAG001 at the parser's line and column."""
    ((code, where, message),) = findings_of('baseline = "runs/main.json"\nseverity = {RAG103 = }\n')
    assert code == "RAG001"
    assert where.startswith("1:")
    assert "TOML is not well-formed" in message


def test_pyproject_table_is_read_and_placed_in_pyproject() -> None:
    """[tool.rag-lsp] of pyproject.toml is read with ranges in that file; other tables are not ours."""
    text = '[project]\nname = "x"\n\n[tool.rag-lsp]\nmax-yaml-depth = 0\n\n[tool.rag-lsp.severity]\nRAG207 = "hint"\n'
    ((code, where, _),) = findings_of(text, "pyproject.toml")
    assert (code, where) == ("RAG004", "4:17-4:18")
    assert read_config("pyproject.toml", text).values == {"severity": {"RAG207": Severity.HINT}}


# ---------------------------------------------------------------- rag-lsp check


def check_json(root: Path, *args: str, cwd: Path | None = None) -> tuple[int, list[dict]]:
    result = rag_lsp("check", *args, "--format", "json", cwd=cwd or root)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else []


def test_check_applies_severities_and_per_file_ignores(tmp_path: Path) -> None:
    """`check` silences the codes the file turns off, and those ignored in the files a glob matches."""
    make_workspace(tmp_path, suite=NO_SEMANTIC_SUITE, dataset=EMPTY_CASE + "\n")
    status, found = check_json(tmp_path)
    assert {finding["code"] for finding in found} == {"RAG103", "RAG200"}
    assert status == 1
    (tmp_path / CONFIG).write_text('[severity]\nRAG103 = "off"\n[per-file-ignores]\n".punica/evals/*.jsonl" = ["RAG200"]\n')
    status, found = check_json(tmp_path)
    assert (status, found) == (0, [])


def test_check_reports_the_file_problems_with_their_place(tmp_path: Path) -> None:
    """The settings file is checked like any other file: its problems are findings at their range."""
    make_workspace(tmp_path)
    (tmp_path / CONFIG).write_text("trusted = true\n")
    status, found = check_json(tmp_path)
    assert status == 1
    assert [(finding["path"], finding["code"], finding["range"]["start"]) for finding in found] == [
        (CONFIG, "RAG004", {"line": 0, "character": 0})
    ]


def test_check_reads_globs_from_pyproject(tmp_path: Path) -> None:
    """Suite globs set in [tool.rag-lsp] of pyproject.toml decide which suites `check` finds."""
    make_workspace(tmp_path)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "more.yaml").write_text(GOOD_SUITE.replace("id: code", "id: more").replace("engines: [rag]", "engines: [rga]"))
    _, found = check_json(tmp_path)
    assert found == []  # not a suite file by the default globs
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.rag-lsp]\nsuite-globs = ["evals/*.yaml", ".punica/**/*.yaml"]\n')
    status, found = check_json(tmp_path)
    assert status == 1
    assert [(finding["path"], finding["code"]) for finding in found] == [("evals/more.yaml", "RAG100")]


def test_globs_written_from_the_root_with_a_leading_dot_slash_match(tmp_path: Path) -> None:
    """`./evals/*.yaml` is `evals/*.yaml`: its suites are found, and a per-file ignore written so silences its files."""
    make_workspace(tmp_path)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "more.yaml").write_text(GOOD_SUITE.replace("id: code", "id: more").replace("engines: [rag]", "engines: [rga]"))
    (tmp_path / ".punica" / "rag-lsp.toml").write_text('suite-globs = ["./evals/*.yaml", ".punica/**/*.yaml"]\n')
    status, found = check_json(tmp_path)
    assert status == 1
    assert [(finding["path"], finding["code"]) for finding in found] == [("evals/more.yaml", "RAG100")]
    (tmp_path / ".punica" / "rag-lsp.toml").write_text('suite-globs = ["./evals/*.yaml", ".punica/**/*.yaml"]\n\n[per-file-ignores]\n"./evals/**" = ["RAG100"]\n')
    assert check_json(tmp_path) == (0, [])


def test_punica_file_wins_over_pyproject(tmp_path: Path) -> None:
    """With both, .punica/rag-lsp.toml is in force and pyproject.toml's table is not read."""
    make_workspace(tmp_path, suite=NO_SEMANTIC_SUITE)
    (tmp_path / "pyproject.toml").write_text('[tool.rag-lsp.severity]\nRAG103 = "error"\n')
    (tmp_path / CONFIG).write_text('[severity]\nRAG103 = "hint"\n')
    _, found = check_json(tmp_path)
    assert [(finding["code"], finding["severity"]) for finding in found] == [("RAG103", "hint")]


def test_show_settings_names_each_origin(tmp_path: Path) -> None:
    """--show-settings prints every setting in force with where it comes from."""
    make_workspace(tmp_path)
    (tmp_path / CONFIG).write_text('max-line-bytes = 2048\n[severity]\nRAG207 = "off"\n')
    result = rag_lsp("check", "--show-settings", cwd=tmp_path / "src")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "settings file: .punica/rag-lsp.toml" in lines
    assert 'max-line-bytes = 2048  (.punica/rag-lsp.toml)' in lines
    assert 'severity = {"RAG207" = "off"}  (.punica/rag-lsp.toml)' in lines
    assert 'max-yaml-depth = 64  (default)' in lines


def test_check_from_a_subfolder_checks_the_whole_workspace(tmp_path: Path) -> None:
    """With no PATH, `check` run in a subfolder reports the workspace's findings, not "0 files checked"."""
    make_workspace(tmp_path, dataset=EMPTY_CASE + "\n")
    (tmp_path / "docs").mkdir()
    result = rag_lsp("check", cwd=tmp_path / "docs")
    assert result.returncode == 1, result.stdout
    assert "RAG200" in result.stdout


def test_a_folder_holding_punica_below_the_root_is_checked_and_run_as_its_own_workspace(tmp_path: Path) -> None:
    """In a repository whose eval workspaces live in subfolders (each with .punica/ and its own settings), `check` and `run` at the repository's root read each suite in its own workspace: its dataset path resolves there, its settings apply there, and nothing is reported twice."""
    (tmp_path / ".git").mkdir()
    for name in ("search", "search/legacy"):
        make_workspace(tmp_path / name, dataset=EMPTY_CASE + "\n")
    (tmp_path / "search" / "legacy" / ".punica" / "rag-lsp.toml").write_text('[severity]\nRAG200 = "warning"\n')
    status, found = check_json(tmp_path)
    assert status == 1
    assert sorted((finding["code"], finding["severity"]) for finding in found) == [("RAG200", "error"), ("RAG200", "warning")]
    result = rag_lsp("run", "--format", "json", cwd=tmp_path)
    suites = json.loads(result.stdout)["suites"]
    assert [(suite["id"], suite["broken"], len(suite["cases"])) for suite in suites] == [("code", True, 1), ("code", True, 1)]


def test_check_of_a_workspace_with_nothing_to_check_exits_2(tmp_path: Path) -> None:
    """A workspace without suites, datasets, manifests or settings says so and exits 2."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    result = rag_lsp("check", cwd=tmp_path / "docs")
    assert result.returncode == 2
    assert "nothing to check" in result.stderr


def test_paths_holding_nothing_are_skipped_quietly(tmp_path: Path) -> None:
    """PATHs that are none of ours (as pre-commit passes them) pass, as before."""
    make_workspace(tmp_path, dataset=EMPTY_CASE + "\n")
    (tmp_path / "notes.yaml").write_text("a: 1\n")
    result = rag_lsp("check", "notes.yaml", "src/app.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- one workspace, three shells


SHARED_CONFIG = """\
suite-globs = ["evals/*.yaml"]
[severity]
RAG103 = "off"
RAG205 = "error"
"""
SHARED_SUITE = GOOD_SUITE.replace("      rag.mode.semantic: 1\n", "").replace("id: code", "id: shared")
REPEATED_CASE = '{"id": "app", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py", "src/app.py"]}}'


def shared_workspace(root: Path) -> tuple[Path, Path]:
    """A workspace whose suite is found only by the file's globs, with a finding the
    file makes an error and one it turns off."""
    make_workspace(root, suite="suites: []\n", dataset=REPEATED_CASE + "\n")
    (root / "evals").mkdir()
    suite = root / "evals" / "shared.yaml"
    suite.write_text(SHARED_SUITE)
    (root / CONFIG).write_text(SHARED_CONFIG)
    return suite, root / ".punica" / "evals" / "code.jsonl"


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.mark.slow
async def test_check_run_and_server_honour_the_same_file(client: LanguageClient, tmp_path: Path) -> None:
    """`check`, `run` and the server all find the suite by the file's globs and give its severities."""
    suite, dataset = shared_workspace(tmp_path)

    status, found = check_json(tmp_path)
    assert status == 1
    assert [(finding["path"], finding["code"], finding["severity"]) for finding in found] == [
        (".punica/evals/code.jsonl", "RAG205", "error")
    ]

    run = rag_lsp("run", "--format", "json", cwd=tmp_path)
    assert [suite_result["id"] for suite_result in json.loads(run.stdout)["suites"]] == ["shared"], run.stderr

    await start(client, tmp_path)
    suite_uri = open_file(client, suite)
    dataset_uri = open_file(client, dataset)
    assert await diagnostics(client, suite_uri, 1) == []  # RAG103 is off
    (repeated,) = await diagnostics(client, dataset_uri, 1)
    assert (repeated.code, repeated.severity) == ("RAG205", types.DiagnosticSeverity.Error)


@pytest.mark.slow
async def test_server_rereads_the_file_as_it_is_edited(client: LanguageClient, tmp_path: Path) -> None:
    """Typing in the settings file re-checks the workspace with the new settings, and reports the file's own problems."""
    make_workspace(tmp_path, suite=NO_SEMANTIC_SUITE)
    config = tmp_path / CONFIG
    config.write_text('[severity]\nRAG103 = "off"\n')
    await start(client, tmp_path)
    suite_uri = open_file(client, tmp_path / ".punica" / "evals" / "code.suite.yaml")
    assert await diagnostics(client, suite_uri, 1) == []
    config_uri = config.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=config_uri, language_id="toml", version=1, text=config.read_text()))
    )
    assert await diagnostics(client, config_uri, 1) == []
    # "off" -> "of": the level is refused in the file, and RAG103 comes back in the suite.
    edit(client, config_uri, 2, 1, 12, 13, "")
    (problem,) = await diagnostics(client, config_uri, 2)
    assert problem.code == "RAG004"
    assert "did you mean 'off'" in problem.message
    back = await published_when(client, suite_uri, lambda items: [str(item.code) for item in items] == ["RAG103"])
    assert spans(back)[0][0] == "RAG103"


@pytest.mark.slow
async def test_completion_and_hover_in_the_settings_file(client: LanguageClient, tmp_path: Path) -> None:
    """The server completes setting keys, codes and levels in the settings file, and documents them on hover."""
    make_workspace(tmp_path)
    config = tmp_path / CONFIG
    text = 'max-l\n[severity]\nRAG203 = "o\n'
    config.write_text(text)
    await start(client, tmp_path)
    uri = config.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="toml", version=1, text=text)))

    keys = await client.text_document_completion_async(types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(0, 5)))
    labels = [item.label for item in (keys.items if isinstance(keys, types.CompletionList) else keys)]
    assert "max-line-bytes" in labels
    assert "trusted" not in labels

    levels = await client.text_document_completion_async(types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(2, 11)))
    assert [item.label for item in (levels.items if isinstance(levels, types.CompletionList) else levels)] == list(
        ("error", "warning", "information", "hint", "off")
    )

    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, 2)))
    assert hover is not None
    assert "missing-expected-path" in hover.contents.value


def test_editor_settings_apply_on_top_code_by_code() -> None:
    """An editor's severity for one code keeps the file's other codes; its other values replace the file's; trust never comes from the file."""
    config = read_config(CONFIG, 'max-line-bytes = 2048\n[severity]\nRAG103 = "off"\nRAG207 = "off"\n')
    settings = layered(config, {"severity": {"RAG207": Severity.HINT}, "max_line_bytes": 4096, "trusted": True})
    assert settings.severity == {"RAG103": "off", "RAG207": Severity.HINT}
    assert settings.max_line_bytes == 4096
    assert settings.trusted is True
    assert layered(read_config(CONFIG, "trusted = true\n")).trusted is False
