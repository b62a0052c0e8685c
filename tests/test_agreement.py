"""``rag-lsp check`` and ``rag-lsp run`` give one verdict: whatever stops a run
(a suite it refuses, a case it breaks) ``check`` reports first, at the same
place (file and line), with the same code.

Each known disagreement is a test through both commands; a property test then
holds the two together on generated workspaces (suites and datasets with
generated slips), run through the command line in this process.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest
from inprocess import run_in_process
from workspaces import make_workspace, rag_lsp


# Slow (check and run held to each other on generated workspaces): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

EVALS = ".punica/evals"
SUITE_FILE = f"{EVALS}/code.suite.yaml"
GDI_FILE = f"{EVALS}/gdi.jsonl"


def check_json(root: Path) -> list[dict]:
    result = rag_lsp("check", "--format", "json", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def run_json(root: Path) -> dict[str, dict]:
    result = rag_lsp("run", "--format", "json", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return {suite["id"]: suite for suite in json.loads(result.stdout)["suites"]}


def at(findings: list[dict], path: str, line: int) -> set[str]:
    """The codes of the error findings on ``line`` (0-based) of ``path``."""
    return {f["code"] for f in findings if f["path"] == path and f["range"]["start"]["line"] == line and f["severity"] == "error"}


def refused_at(suite: dict) -> set[tuple[int, str]]:
    """(0-based line, code) of each finding a refused suite names."""
    return {(int(line) - 1, code) for line, code in re.findall(r"line (\d+): (RAG\d{3})", suite["error"] or "")}


def gdi_row(row_id: str, **columns: object) -> dict:
    row = {"input_id": row_id, "prompt": "how is a token verified", "reference_contexts": ["tokens are verified against the key"],
           "sut_response": "against the key", "retrieved_context": ["tokens are verified against the key", "noise"]}
    row.update(columns)
    return {key: value for key, value in row.items() if value is not None}


def gdi_suite(suite_id: str, config: str, threshold: str = "0.5") -> str:
    return (
        f"  - id: {suite_id}\n    dataset: {GDI_FILE}\n    metrics:\n      rag.hit_at_k: {config}\n"
        f"    thresholds: {{rag.hit_at_k: {threshold}}}\n"
    )


def gdi_workspace(root: Path, suites: list[str], rows: list[str]) -> Path:
    make_workspace(root, suite="suites:\n" + "".join(suites), dataset="")
    (root / GDI_FILE).write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    (root / EVALS / "code.jsonl").unlink()
    return root


def test_a_metric_config_run_refuses_is_a_check_finding_on_its_line(tmp_path: Path) -> None:
    """`k: 5.0`, an unknown `topk: 5` and `t1: .nan` are RAG108 findings of check on their lines, and the reason run refuses each suite."""
    suites = [
        gdi_suite("float-k", "{k: 5.0}"),
        gdi_suite("typo", "{topk: 5}"),
        gdi_suite("nan", "{t1: .nan}"),
        gdi_suite("fine", "{k: 5}"),
    ]
    gdi_workspace(tmp_path, suites, [json.dumps(gdi_row("q1"))])
    findings = check_json(tmp_path)
    ran = run_json(tmp_path)
    for number, suite_id in enumerate(("float-k", "typo", "nan")):
        line = 4 + 5 * number
        assert at(findings, SUITE_FILE, line) == {"RAG108"}, suite_id
        assert refused_at(ran[suite_id]) == {(line, "RAG108")}, ran[suite_id]
    float_k, typo, nan = (next(f for f in findings if f["range"]["start"]["line"] == 4 + 5 * n) for n in range(3))
    assert "expected an integer, got 5.0: write 5" in float_k["message"]
    assert "unknown key 'topk' (did you mean 'k'?)" in typo["message"]
    assert ".nan is not a number" in nan["message"]
    assert ran["fine"]["error"] is None
    assert ran["fine"]["passed"]


def broken_at(suite: dict) -> dict[str, str]:
    """The code each broken case of a suite that ran is broken with, by case id."""
    found = {}
    for case in suite["cases"]:
        if case["broken"]:
            codes = re.findall(r"\((RAG\d{3})\)", case["broken"])
            found[case["id"]] = codes[-1] if codes else "no code"
    return found


def test_a_gdi_row_run_breaks_is_a_check_finding_on_its_line(tmp_path: Path) -> None:
    """A repeated input_id (RAG202), a row without prompt or sut_response (RAG004), and one without or with empty reference_contexts (RAG208): check reports each row, and run breaks it with that code."""
    rows = [
        gdi_row("q1"),
        gdi_row("q1"),
        gdi_row("no-prompt", prompt=None),
        gdi_row("no-response", sut_response=None),
        gdi_row("no-references", reference_contexts=None),
        gdi_row("empty-references", reference_contexts=[]),
        gdi_row("fine"),
    ]
    gdi_workspace(tmp_path, [gdi_suite("hits", "{k: 5}")], [json.dumps(row) for row in rows])
    findings = check_json(tmp_path)
    (suite,) = run_json(tmp_path).values()
    expected = {"q1": "RAG202", "no-prompt": "RAG004", "no-response": "RAG004", "no-references": "RAG208", "empty-references": "RAG208"}
    assert broken_at(suite) == expected
    for line, code in enumerate(["", "RAG202", "RAG004", "RAG004", "RAG208", "RAG208", ""]):
        assert at(findings, GDI_FILE, line) == ({code} if code else set()), line
    assert [case["id"] for case in suite["cases"]][-1] == "fine"
    assert suite["cases"][-1]["scores"] == {"rag.hit_at_k": 1.0}


def test_a_byte_that_is_not_utf8_breaks_only_its_line(tmp_path: Path) -> None:
    """One byte that is not UTF-8 is RAG002 on its own line in check, and breaks only that row in run, as a cut-off JSON line does."""
    rows = [json.dumps(gdi_row("q1")).encode(), json.dumps(gdi_row("caf\u00e9"), ensure_ascii=False).encode("latin-1"), json.dumps(gdi_row("q3"))[:-9].encode()]
    gdi_workspace(tmp_path, [gdi_suite("hits", "{k: 5}")], [])
    (tmp_path / GDI_FILE).write_bytes(b"\n".join([*rows, json.dumps(gdi_row("q4")).encode()]) + b"\n")
    findings = check_json(tmp_path)
    suite = run_json(tmp_path)["hits"]
    assert suite["error"] is None
    assert [at(findings, GDI_FILE, line) for line in range(4)] == [set(), {"RAG002"}, {"RAG002"}, set()]
    byte = next(f for f in findings if f["range"]["start"]["line"] == 1)
    assert byte["range"]["start"]["character"] == rows[1].index(b"\xe9")
    assert "byte 0xe9 is not valid UTF-8" in byte["message"]
    assert broken_at(suite) == {"line 2": "RAG002", "line 3": "RAG002"}
    assert [case["id"] for case in suite["cases"] if case["scores"]] == ["q1", "q4"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_dataset_in_utf16_or_utf32_is_one_finding_and_its_rows_are_read(tmp_path: Path, encoding: str) -> None:
    """A dataset saved in UTF-16 or UTF-32 (Windows PowerShell 5 writes UTF-16 with `>`), with a byte order
    mark or without, is one RAG002 for the file in check, not one per line: its rows are read in that
    encoding, by check (a slip on a row is its own finding) and by run (its cases score) alike."""
    gdi_workspace(tmp_path, [gdi_suite("hits", "{k: 5}")], [])
    rows = [json.dumps(gdi_row("caf\u00e9"), ensure_ascii=False), json.dumps(gdi_row("q2"))[:-9], json.dumps(gdi_row("q3"))]
    (tmp_path / GDI_FILE).write_bytes(("\n".join(rows) + "\n").encode(encoding))
    findings = check_json(tmp_path)
    suite = run_json(tmp_path)["hits"]
    mark = {"utf-16": "UTF-16LE", "utf-16-be": "UTF-16BE", "utf-32": "UTF-32LE"}[encoding]
    (read_in,) = [finding for finding in findings if finding["path"] == GDI_FILE and "not UTF-8" in finding["message"]]
    assert read_in["code"] == "RAG002" and read_in["range"]["start"] == {"line": 0, "character": 0}
    assert f"the file is {mark} text" in read_in["message"] and "save the file as UTF-8" in read_in["message"]
    assert [at(findings, GDI_FILE, line) for line in range(3)] == [{"RAG002"}, {"RAG002"}, set()]
    assert len([finding for finding in findings if finding["path"] == GDI_FILE]) == 2
    assert broken_at(suite) == {"line 2": "RAG002"}
    assert [case["id"] for case in suite["cases"] if case["scores"]] == ["caf\u00e9", "q3"]


def test_a_dataset_in_windows_1252_is_one_finding_whatever_byte_each_row_holds(tmp_path: Path) -> None:
    """Rows saved in Windows-1252 (each with its own accented letter) are one RAG002 for the file, which names
    the likely encoding and the letter its first byte is there; run breaks each such row, as check lists
    each with --unfold."""
    gdi_workspace(tmp_path, [gdi_suite("hits", "{k: 5}")], [])
    rows = [json.dumps(gdi_row(f"caf{letter}{n}"), ensure_ascii=False).encode("cp1252") for n, letter in enumerate("éèüöàçñ" * 4)]
    (tmp_path / GDI_FILE).write_bytes(b"\n".join([*rows, json.dumps(gdi_row("plain")).encode()]) + b"\n")
    (folded,) = [finding for finding in check_json(tmp_path) if finding["path"] == GDI_FILE]
    assert folded["code"] == "RAG002" and "28 of the 29 rows" in folded["message"]
    assert "byte 0xe9 is not valid UTF-8 (in Windows-1252 it is 'é')" in folded["message"]
    assert "most likely Windows-1252 or Latin-1" in folded["message"]
    unfolded = json.loads(rag_lsp("check", "--format", "json", "--unfold", cwd=tmp_path).stdout)
    assert [finding["range"]["start"]["line"] for finding in unfolded if finding["path"] == GDI_FILE] == list(range(28))
    suite = run_json(tmp_path)["hits"]
    assert [case["id"] for case in suite["cases"] if case["scores"]] == ["plain"]


def test_a_large_dataset_in_utf16_is_one_finding_from_the_model_that_reads_it(tmp_path: Path) -> None:
    """A dataset in UTF-16 large enough to be read by a dataset model gives check the same one RAG002 for the
    file, and its rows' own findings, as a small one does."""
    gdi_workspace(tmp_path, [gdi_suite("hits", "{k: 5}")], [])
    rows = [json.dumps(gdi_row(f"q{n}")) for n in range(400)]
    rows[300] = rows[300][:-9]
    (tmp_path / GDI_FILE).write_bytes(("\n".join(rows) + "\n").encode("utf-16"))
    assert (tmp_path / GDI_FILE).stat().st_size > 100_000
    findings = [finding for finding in check_json(tmp_path) if finding["path"] == GDI_FILE]
    assert [(finding["code"], finding["range"]["start"]["line"]) for finding in findings] == [("RAG002", 0), ("RAG002", 300)]
    assert "the file is UTF-16LE text" in findings[0]["message"]


def test_a_number_read_as_infinity_is_refused_by_check_and_run(tmp_path: Path) -> None:
    """1e400 in a dataset row is RAG004 in check and a row broken with RAG004 in run (gdi rows, and rag cases whose input the builtin target reads)."""
    gdi_workspace(tmp_path, [gdi_suite("hits", "{k: 5}")], [json.dumps(gdi_row("q1")), json.dumps(gdi_row("q2"))[:-1] + ', "score": 1e400}'])
    cases = [
        '{"id": "fine", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}}',
        '{"id": "huge", "input": {"query": "app", "topK": 1e400}, "expect": {"relevant": ["src/app.py"]}}',
        '{"id": "huger", "input": {"query": "app", "boost": [-2e999]}, "expect": {"relevant": ["src/app.py"]}}',
    ]
    (tmp_path / EVALS / "code.jsonl").write_text("\n".join(cases) + "\n", encoding="utf-8")
    (tmp_path / SUITE_FILE).write_text(
        (tmp_path / SUITE_FILE).read_text(encoding="utf-8")
        + "  - id: code\n    target: {kind: capability, id: vectors.query}\n    dataset: .punica/evals/code.jsonl\n"
        "    engines: [rag]\n    thresholds: {rag.recall: 0.5, rag.mode.semantic: 0}\n",
        encoding="utf-8",
    )
    findings = check_json(tmp_path)
    ran = run_json(tmp_path)
    assert at(findings, GDI_FILE, 1) == {"RAG004"}
    assert broken_at(ran["hits"]) == {"q2": "RAG004"}
    assert [at(findings, f"{EVALS}/code.jsonl", line) for line in range(3)] == [set(), {"RAG004"}, {"RAG004"}]
    assert broken_at(ran["code"]) == {"huge": "RAG004", "huger": "RAG004"}
    huge = next(case for case in ran["code"]["cases"] if case["id"] == "huge")
    assert "`input.topK`" in huge["broken"]
    assert "infinity" in huge["broken"]


@pytest.mark.parametrize("timeout", [".inf", "0", "-1", '"5"'])
def test_a_timeout_that_is_no_number_of_seconds_is_a_finding_and_no_run_guesses(tmp_path: Path, timeout: str) -> None:
    """`timeout_s` of infinity, 0, -1 or a string is RAG004 in check; run refuses the suite that uses the target instead of waiting for ever or for a timeout of its own."""
    make_workspace(tmp_path)
    (tmp_path / ".punica" / "targets.yaml").write_text(
        f"targets:\n  vectors.query:\n    command: [python, -c, 'import time; time.sleep(600)']\n    timeout_s: {timeout}\n",
        encoding="utf-8",
    )
    findings = check_json(tmp_path)
    assert at(findings, ".punica/targets.yaml", 3) == {"RAG004"}
    suite = run_json(tmp_path)["code"]
    assert suite["broken"]
    assert "timeout_s" in suite["error"]
    assert suite["cases"] == []


# ---------------------------------------------------------------- generated workspaces

RAG_DATA = f"{EVALS}/rag.jsonl"
GDI_DATA = f"{EVALS}/gdi.jsonl"
IDS = ["a", "b", "c", "d", "e", "f"]

# What a suite says: right values, and slips (a suite with one is not run).
RAG_OPTIONS = ["match: path", "k: 5", "match: id, k: 2"]
RAG_SLIPS = ["k: 5.0", "k: .inf", "k: 0", "kk: 5", "match: url"]
HIT_CONFIGS = ["k: 3", "t1: 0.5", "language: de", "k: 2, coverage: 0.4"]
HIT_SLIPS = ["k: 3.0", "topk: 3", "t1: .nan", "t2: -.inf", "coverage: 2", "weight: .inf"]
THRESHOLDS = ["0.5", "0"]
THRESHOLD_SLIPS = [".nan", "-.inf", "80"]


def rag_rows(row_id: str) -> list[bytes]:
    """A rag case and its slips, as dataset lines."""
    relevant = '{"relevant": ["src/app.py"]}'
    rows = [
        f'{{"id": "{row_id}", "input": {{"query": "app"}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app", "topK": 3}}, "expect": {{"relevant": ["src/app.py", "docs/b.md"]}}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app"}}, "expect": {{"relevant": []}}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app"}}, "expect": {{}}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app"}}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app"}}, "expect": {{"relevant": "src/app.py"}}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app"}}, "expect": {{"relevant": ["src/app.py", 7]}}}}',
        f'{{"id": "{row_id}", "input": "app", "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app", "topK": 1e400}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app"}}, "expect": {relevant}, "note": -1e999}}',
        f'{{"id": "{row_id}", "input": {{"query": "app", "seed": {2 ** 70}}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app", "seed": {"9" * 4400}}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app", "deep": {"[" * 300 + "]" * 300}}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app", "deep": {"[" * 990 + "]" * 990}}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app", "deep": {"[" * 900 + "1e400" + "]" * 900}}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"corpora": ["code"]}}, "expect": {relevant}}}',
        f'{{"id": 7, "input": {{"query": "app"}}, "expect": {relevant}}}',
        f'{{"input": {{"query": "app"}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "app"}}, "expect": {relevant}',
        f'{{"id": "{row_id}", "input": {{"query": NaN}}, "expect": {relevant}}}',
        '["not", "an", "object"]',
        f'{{"id": "{row_id}", "id": "{row_id}", "input": {{"query": "app"}}, "expect": {relevant}}}',
        f'{{"id": "{row_id}", "input": {{"query": "{"app " * 2100}"}}, "expect": {relevant}}}',
    ]
    return [row.encode() for row in rows] + [
        f'{{"id": "{row_id}\xe9", "input": {{"query": "app"}}, "expect": {relevant}}}'.encode("latin-1"),
        f'{{"id": "{row_id}\xe9", "input": {{"query": "app", "seed": {"9" * 4400}}}, "expect": {relevant}}}'.encode("latin-1"),
    ]


def gdi_rows(row_id: str) -> list[bytes]:
    """A gdi_text_v1 row and its slips, as dataset lines."""
    rows = [
        gdi_row(row_id),
        gdi_row(row_id, retrieved_context=["noise"]),
        gdi_row(row_id, prompt=None),
        gdi_row(row_id, sut_response=None),
        gdi_row(row_id, retrieved_context=None),
        gdi_row(row_id, reference_contexts=None),
        gdi_row(row_id, reference_contexts=[]),
        gdi_row(row_id, reference_contexts="tokens"),
        gdi_row(row_id, prompt=[{"role": "user", "content": "how"}]),
        gdi_row(row_id, prompt=[{"role": "robot", "content": "how"}]),
        gdi_row(row_id, input_id=5),
        {"id": row_id, "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}},
    ]
    lines = [json.dumps(row).encode() for row in rows]
    lines.append(json.dumps(gdi_row(row_id))[:-1].encode() + b', "score": 1e400}')
    lines.append(json.dumps(gdi_row(row_id))[:-1].encode() + b', "seed": ' + b"9" * 4400 + b"}")
    lines.append(json.dumps(gdi_row(row_id))[:-1].encode() + b', "deep": ' + b"[" * 990 + b"]" * 990 + b"}")
    lines.append(json.dumps(gdi_row(row_id))[:-2].encode())
    lines.append(json.dumps(gdi_row(row_id + "\u00e9"), ensure_ascii=False).encode("latin-1"))
    lines.append(json.dumps(gdi_row(row_id + "\u00e9"), ensure_ascii=False)[:-1].encode("latin-1") + b', "seed": ' + b"9" * 4400 + b"}")
    lines.append(b'{"input_id": "' + row_id.encode() + b'", ' + json.dumps(gdi_row(row_id))[1:].encode())
    lines.append(json.dumps(gdi_row(row_id, sut_response="against the key " * 600)).encode())
    return lines


@st.composite
def workspaces(draw: st.DrawFn) -> dict[str, bytes]:
    """A suite file of a few rag and gdi suites, with slips, over two datasets with slips."""
    suites = []
    for number in range(draw(st.integers(1, 3))):
        # At most one slip a suite, in about one suite of three: the others run.
        slip = draw(st.sampled_from(["", "", "", "", "", "options", "threshold", "other"]))
        threshold = draw(st.sampled_from(THRESHOLD_SLIPS if slip == "threshold" else THRESHOLDS))
        if draw(st.booleans()):
            # A misspelt engine, or a metric beside the engine: no dataset fits both.
            other = draw(st.sampled_from(["    engines: [rga]\n", "    engines: [rag]\n    metrics: {rag.hit_at_k: }\n"]))
            engines = other if slip == "other" else "    engines: [rag]\n"
            options = draw(st.sampled_from(RAG_SLIPS if slip == "options" else RAG_OPTIONS))
            suites.append(
                f"  - id: r{number}\n    target: {{kind: capability, id: vectors.query}}\n    dataset: {RAG_DATA}\n"
                f"{engines}    options:\n      rag: {{{options}}}\n"
                f"    thresholds:\n      rag.recall: {threshold}\n      rag.mode.semantic: 0\n"
            )
        else:
            config = draw(st.sampled_from(HIT_SLIPS if slip == "options" else HIT_CONFIGS))
            dataset = f"{EVALS}/missing.jsonl" if slip == "other" else GDI_DATA
            suites.append(gdi_suite(f"g{number}", f"{{{config}}}", threshold).replace(GDI_FILE, dataset))
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))

    def dataset(rows: Any) -> bytes:
        # Most rows are right (the first two forms of each), so shapes hold and ids repeat.
        kinds = st.one_of(st.integers(0, 1), st.integers(0, len(rows("a")) - 1))
        lines = draw(st.lists(st.builds(lambda row_id, index: rows(row_id)[index], st.sampled_from(IDS), kinds), max_size=8))
        blank = draw(st.sampled_from([[], [b""], [b"   "], ["\u00a0\u3000".encode()], [b"\x1f"]]))
        return ending.join([*lines[:2], *blank, *lines[2:]]) + ending

    return {
        # Rows above the limit are refused (RAG005) without being read; those of 4,400 digits are within it.
        ".punica/rag-lsp.toml": b"max-line-bytes = 8192\n",
        SUITE_FILE: ("suites:\n" + "".join(suites)).encode(),
        RAG_DATA: dataset(rag_rows),
        GDI_DATA: dataset(gdi_rows),
        "src/app.py": b"print('app')\n",
        "docs/b.md": b"# B\n",
    }


def in_process(*command: str) -> tuple[int, str]:
    """``rag-lsp COMMAND`` in this process, which neither fails nor logs an error."""
    ran = run_in_process(list(command))
    assert ran.code in (0, 1), ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr
    assert "internal error" not in ran.stderr, ran.stderr
    assert not ran.errors, [record.getMessage() for record in ran.errors]
    return ran.code, ran.stdout


def dataset_lines(data: bytes) -> list[int]:
    """The 0-based numbers of a dataset's non-blank lines: a run has one case for each."""
    lines = data.decode("utf-8", "replace").split("\n")
    return [number for number, line in enumerate(lines) if line.removesuffix("\r") and not line.removesuffix("\r").isspace()]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=workspaces())
def test_whatever_stops_a_run_check_reports_at_that_place_with_that_code(files: dict[str, bytes]) -> None:
    """On generated workspaces, every suite run refuses names check's findings (line and code) in its
    suite file, and every case it breaks has a check finding of its code on its dataset line; only
    a target's own failure to answer (RAG405) is the run's alone."""
    with tempfile.TemporaryDirectory(prefix="rag-lsp-agree-") as scratch:
        root = Path(scratch).resolve()
        (root / ".punica").mkdir()
        for relative, data in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(data)
        findings = json.loads(in_process("check", "--format", "json", str(root))[1])
        document = json.loads(in_process("run", "--format", "json", str(root))[1])
    for suite in document["suites"]:
        if suite["error"] is not None:
            named = refused_at(suite)
            assert named, f"{suite['id']} is refused for no finding of check: {suite['error']}"
            for line, code in named:
                assert code in at(findings, SUITE_FILE, line), (suite["id"], line, code, findings)
            continue
        path = RAG_DATA if suite["id"].startswith("r") else GDI_DATA
        lines = dataset_lines(files[path])
        assert len(suite["cases"]) == len(lines)
        for case, line in zip(suite["cases"], lines):
            if not case["broken"]:
                continue
            code = re.search(r"\((RAG\d{3})\)$", case["broken"])
            if code is None:
                # The builtin target could not answer (an input without a query, say): RAG405.
                assert path == RAG_DATA, case
                assert "RAG" not in case["broken"], case
                continue
            assert code.group(1) in at(findings, path, line), (suite["id"], case, line, [f for f in findings if f["path"] == path])
        # The other way for repeated ids, which the run judges in its own loop over the rows:
        # every line check reports as a repeat is a case the run breaks as one.
        for case, line in zip(suite["cases"], lines):
            if "RAG202" in at(findings, path, line):
                assert case["broken"] is not None, (suite["id"], case, line)
                assert case["broken"].endswith("(RAG202)"), (suite["id"], case, line)


def test_a_manifest_whose_config_schema_refers_to_nothing_is_rag301_in_check_and_run(tmp_path: Path) -> None:
    """A workspace rag.hit_at_k manifest whose config_schema has a $ref to nothing (beside another schema error) is RAG301 at that $ref in check, and the reason, by the same code, that run cannot score a suite whose config reaches it."""
    gdi_workspace(tmp_path, [gdi_suite("hits", "{k: 3, style: plain}")], [json.dumps(gdi_row("q1"))])
    builtin = (Path(__file__).parent.parent / "schemas" / "manifests" / "rag.hit_at_k.yaml").read_text(encoding="utf-8")
    manifest = tmp_path / ".punica" / "metrics" / "hit.yaml"
    manifest.parent.mkdir()
    broken = builtin.replace("      title: Coverage\n      type: number\n", "      title: Coverage\n      type: numbr\n")
    broken = broken.replace("  properties:\n", "  properties:\n    style: {$ref: '#/definitions/Style'}\n", 1)
    assert broken.count("numbr") == 1 and broken.count("#/definitions/Style") == 1
    manifest.write_text(broken, encoding="utf-8")
    lines = broken.splitlines()
    findings = check_json(tmp_path)
    assert at(findings, ".punica/metrics/hit.yaml", lines.index("    style: {$ref: '#/definitions/Style'}")) == {"RAG301"}
    assert at(findings, ".punica/metrics/hit.yaml", lines.index("      type: numbr")) == {"RAG301"}
    assert not [f for f in findings if f["path"] == SUITE_FILE]
    refused = run_json(tmp_path)["hits"]
    assert refused["error"].endswith("(RAG301)") and "'/definitions/Style' points to nothing" in refused["error"]


def test_a_manifest_default_that_is_no_number_is_refused_by_check_and_run(tmp_path: Path) -> None:
    """A workspace rag.hit_at_k manifest whose t1 default is `.nan` is RAG302 in check, and RAG108 on the suite that would score with it, the reason run refuses it; a default k of 3.0 is an integer to both."""
    gdi_workspace(tmp_path, [gdi_suite("hits", "{}")], [json.dumps(gdi_row("q1", retrieved_context=["noise", "noise", "noise", "tokens are verified against the key"]))])
    builtin = (Path(__file__).parent.parent / "schemas" / "manifests" / "rag.hit_at_k.yaml").read_text(encoding="utf-8")
    manifest = tmp_path / ".punica" / "metrics" / "hit.yaml"
    manifest.parent.mkdir()
    manifest.write_text(builtin.replace("      default: 0.7\n", "      default: .nan\n"), encoding="utf-8")
    line = manifest.read_text(encoding="utf-8").splitlines().index("      default: .nan")
    findings = check_json(tmp_path)
    assert at(findings, ".punica/metrics/hit.yaml", line) == {"RAG302"}
    assert at(findings, SUITE_FILE, 4) == {"RAG108"}
    refused = run_json(tmp_path)["hits"]
    assert refused_at(refused) == {(4, "RAG108")}
    assert "default of 't1'" in refused["error"]
    manifest.write_text(builtin.replace("      default: 5\n", "      default: 3.0\n"), encoding="utf-8")
    assert not [f for f in check_json(tmp_path) if f["severity"] == "error"]
    scored = run_json(tmp_path)["hits"]
    assert scored["error"] is None
    assert scored["cases"][0]["scores"] == {"rag.hit_at_k": 0.0}
