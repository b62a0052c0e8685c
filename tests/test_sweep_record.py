"""Sweeping k from one retrieval, and recording a run's answers to replay them (`--k`, `--record`)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from workspaces import make_workspace, rag_lsp

from rag_lsp.core.running.runner import Runner
from rag_lsp.core.running.scorer import figures_from_answer, score_case, score_case_at
from rag_lsp.core.workspace.workspace import Workspace

# Slow (runs the command line in processes of its own): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SUITE = """\
suites:
  - id: code
    target: {{kind: capability, id: rec}}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {{rag: {{match: path{k}}}}}
    thresholds:
      rag.recall: 0.5
      rag.mode.semantic: 1
"""
TARGETS = "targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n"
FILES = [f"src/f{n}.py" for n in range(12)]
KS = (1, 2, 3, 5, 10)


def suite_at(k: int | None) -> str:
    return SUITE.format(k="" if k is None else f", k: {k}")


def random_workspace(root: Path, count: int = 400, seed: int = 7) -> None:
    """Cases with 1–3 relevant files (some listed twice) and recorded answers of 0–12 hits, where a
    value may come back twice and some hits (sometimes every hit) lack the `path` field."""
    rng = random.Random(seed)
    cases, answers = [], []
    for index in range(count):
        relevant = rng.sample(FILES, rng.randint(1, 3))
        if rng.random() < 0.1:
            relevant.append(relevant[0])
        cases.append(json.dumps({"id": f"c{index}", "input": {"query": "q"}, "expect": {"relevant": relevant}}))
        hits = []
        no_field = rng.random() < 0.05
        for _ in range(rng.randint(0, 12)):
            if no_field or rng.random() < 0.15:
                hits.append({"id": f"doc-{rng.randint(0, 99)}"})
            else:
                hits.append({"path": rng.choice(FILES)})
        answers.append(json.dumps({"id": f"c{index}", "hits": hits, "mode": rng.choice(["semantic", "keyword"])}))
    make_workspace(root, suite=suite_at(None), dataset="\n".join(cases) + "\n")
    (root / ".punica" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / ".punica" / "runs").mkdir()
    (root / ".punica" / "runs" / "rec.jsonl").write_text("\n".join(answers) + "\n", encoding="utf-8")


def run_at(root: Path, k: int | None, ks: tuple[int, ...] = ()):
    (root / ".punica" / "evals" / "code.suite.yaml").write_text(suite_at(k), encoding="utf-8")
    workspace = Workspace(root)
    (suite,) = workspace.suites()
    with Runner(workspace, allow_exec=False, keep_hits=False) as runner:
        return runner.run_suite(suite, ks=ks)


def test_score_case_at_equals_score_case_at_each_k() -> None:
    """The scorer's sweep gives, at every k, exactly score_case's figures at that k (None where broken)."""
    rng = random.Random(3)
    names = ["a", "b", "c", "d", None]
    for _ in range(3000):
        expected = rng.sample("abcdef", rng.randint(0, 3))
        values = [rng.choice(names) for _ in range(rng.randint(0, 12))]
        mode = rng.choice(["semantic", "keyword", None])
        at = score_case_at(expected, values, mode, KS)
        assert at == {k: score_case(expected, values, mode, "path", k).scores for k in KS}, (expected, values)


def test_the_whole_answer_gives_the_figures_at_any_k() -> None:
    """A case's whole-answer ranks, kept at whatever k it was scored, give exactly score_case's figures at every k (None where broken)."""
    rng = random.Random(5)
    names = ["a", "b", "c", "d", None]
    for _ in range(3000):
        expected = rng.sample("abcdef", rng.randint(1, 3))
        values = [rng.choice(names) for _ in range(rng.randint(0, 12))]
        mode = rng.choice(["semantic", "keyword", None])
        answer = score_case(expected, values, mode, "path", rng.choice([None, 1, 2, 4, 10])).answer
        semantic = 1.0 if mode == "semantic" else 0.0
        at = figures_from_answer(answer.ranks, answer.hits, answer.first_with_field, semantic, KS)
        assert at == {k: score_case(expected, values, mode, "path", k).scores for k in KS}, (expected, values)


@pytest.mark.parametrize("suite_k", [None, 10, 4])
def test_a_sweep_equals_separate_runs_at_each_k(tmp_path: Path, suite_k: int | None) -> None:
    """Each case's figures and each suite mean at every swept k equal a run at that k; the suite's own figures and thresholds stay at its k."""
    random_workspace(tmp_path)
    swept = run_at(tmp_path, suite_k, KS)
    assert swept.ks == KS
    assert set(swept.at_k) == set(KS)
    for k in KS:
        alone = run_at(tmp_path, k)
        assert swept.at_k[k] == alone.aggregates, k
        by_id = {case.id: case for case in alone.cases}
        for case in swept.cases:
            assert case.at_k[k] == by_id[case.id].scores, (k, case.id)
        # Broken at a small k, scored at a larger one: both happen in this data.
    assert any(case.at_k[1] is None and case.at_k[10] is not None for case in swept.cases)
    plain = run_at(tmp_path, suite_k)
    assert swept.aggregates == plain.aggregates
    assert swept.thresholds == plain.thresholds
    assert [(c.id, c.scores, c.missed, c.ranks) for c in swept.cases] == [(c.id, c.scores, c.missed, c.ranks) for c in plain.cases]




def test_k_sweep_in_the_json_and_text_reports(tmp_path: Path) -> None:
    """--k adds `at_k` per suite and per case to the JSON (SPEC keys kept) and a column per k to the text tables."""
    random_workspace(tmp_path, count=30)
    (tmp_path / ".punica" / "evals" / "code.suite.yaml").write_text(suite_at(10), encoding="utf-8")
    result = rag_lsp("run", "--format", "json", "--k", "5,1,3,3", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    (suite,) = json.loads(result.stdout)["suites"]
    assert {"id", "passed", "broken", "aggregates", "thresholds", "cases"} <= set(suite)
    assert list(suite["at_k"]) == ["1", "3", "5"]
    assert set(suite["at_k"]["5"]) == set(suite["aggregates"])
    scored = [case for case in suite["cases"] if case["scores"] is not None]
    assert scored
    assert all(list(case["at_k"]) == ["1", "3", "5"] for case in suite["cases"])
    assert all(case["at_k"]["5"]["rag.retrieved"] <= 5 for case in scored if case["at_k"]["5"])
    text = rag_lsp("run", "--k", "1,3", cwd=tmp_path).stdout
    assert "recall@1" in text
    assert "recall@3" in text
    assert "@3" in text.split("metric", 1)[1]


@pytest.mark.parametrize("value", ["0", "1,x", ",", "-3"])
def test_bad_k_is_a_usage_error(tmp_path: Path, value: str) -> None:
    """--k takes integers of at least 1; anything else exits 2 with a message."""
    make_workspace(tmp_path)
    result = rag_lsp("run", f"--k={value}", cwd=tmp_path)
    assert result.returncode == 2
    assert "--k" in result.stderr


SEARCH = """\
import hashlib, json, sys
files = ["src/app.py", "src/b.py", "docs/a.md", "docs/b.md", "src/c.py"]
for line in sys.stdin:
    query = json.loads(line)["query"]
    if query == "offline":
        print(json.dumps({"error": "index offline"}), flush=True)
        continue
    digest = hashlib.sha256(query.encode()).digest()
    hits = []
    for rank in range(digest[0] % 7):
        path = files[digest[rank + 1] % len(files)]
        hit = {"path": path, "id": path + "#" + str(rank), "corpus": "code", "score": round(1 - rank / 10, 3),
               "text": "chunk " + str(rank) + " of " + path, "extra": "ignored"}
        if query == "nofield":
            del hit["path"]
        hits.append(hit)
    print(json.dumps({"hits": hits, "mode": "semantic" if digest[9] % 3 else "keyword"}), flush=True)
"""


def live_workspace(root: Path) -> None:
    queries = [f"question {n}" for n in range(25)] + ["offline", "nofield"]
    cases = [
        json.dumps({"id": f"q{n}", "input": {"query": query}, "expect": {"relevant": ["src/app.py", "docs/a.md"]}})
        for n, query in enumerate(queries)
    ]
    cases.append(json.dumps({"id": "empty", "input": {"query": "x"}, "expect": {"relevant": []}}))
    suite = GOOD = suite_at(3).replace("id: rec", "id: live")
    make_workspace(root, suite=GOOD, dataset="\n".join(cases) + "\n")
    (root / "tools").mkdir()
    (root / "tools" / "search.py").write_text(SEARCH, encoding="utf-8")
    (root / ".punica" / "targets.yaml").write_text(
        f"targets:\n  live:\n    command: [{json.dumps(sys.executable)}, tools/search.py]\n", encoding="utf-8"
    )
    assert suite


def test_record_then_replay_gives_identical_figures(tmp_path: Path) -> None:
    """--record leaves the run's report unchanged, and a recorded target over the file reports the very same figures, failures included."""
    live_workspace(tmp_path)
    plain = rag_lsp("run", "--format", "json", "--k", "1,5", cwd=tmp_path)
    recording = rag_lsp("run", "--format", "json", "--k", "1,5", "--record", ".punica/runs/live.jsonl", cwd=tmp_path)
    assert "Traceback" not in recording.stderr
    assert recording.stdout == plain.stdout
    assert recording.returncode == plain.returncode == 1
    assert "recorded 26 answers and 1 failure to .punica/runs/live.jsonl" in recording.stderr
    lines = [json.loads(line) for line in (tmp_path / ".punica" / "runs" / "live.jsonl").read_text().splitlines()]
    # One line per case the target was asked, answers as {id, hits, mode} with every hit field rag-lsp reads.
    assert len(lines) == 27
    assert {"id", "hits", "mode"} == set(lines[0])
    assert {"id": "q25", "error": "index offline"} in lines
    assert all("extra" not in hit for line in lines for hit in line.get("hits", []))
    assert any(hit.get("text") for line in lines for hit in line.get("hits", []))
    (tmp_path / ".punica" / "targets.yaml").write_text("targets:\n  live:\n    recorded: .punica/runs/live.jsonl\n")
    replay = rag_lsp("run", "--format", "json", "--k", "1,5", cwd=tmp_path)
    assert replay.stdout == plain.stdout
    (suite,) = json.loads(replay.stdout)["suites"]
    by_id = {case["id"]: case for case in suite["cases"]}
    assert by_id["q25"]["broken"] == "the target reported an error: index offline"
    assert "`path` field" in by_id["q26"]["broken"]
    assert by_id["empty"]["broken"]


def test_record_per_target_and_failed_runs(tmp_path: Path) -> None:
    """{target} in --record gives a file per target; a run that stops with a usage error, or in which no target answered, writes nothing."""
    live_workspace(tmp_path)
    result = rag_lsp("run", "--record", "out/{target}.jsonl", "--case", "q1", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert [json.loads(line)["id"] for line in (tmp_path / "out" / "live.jsonl").read_text().splitlines()] == ["q1"]
    failed = rag_lsp("run", "--record", "other.jsonl", "--case", "q1", "--case", "nope", cwd=tmp_path)
    assert failed.returncode == 2
    assert not (tmp_path / "other.jsonl").exists()
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".partial")]
    refused = rag_lsp("run", "--no-exec", "--record", "out/{target}.jsonl", cwd=tmp_path)
    assert refused.returncode == 1
    assert "nothing recorded to out/live.jsonl" in refused.stderr
    assert [json.loads(line)["id"] for line in (tmp_path / "out" / "live.jsonl").read_text().splitlines()] == ["q1"]


def test_aggregate_means_cases_with_the_same_or_different_metrics() -> None:
    """Means are over the cases that have each metric, whether every case has the same metrics or not."""
    from rag_lsp.core.running.scorer import aggregate

    same = [{"a": 0.1, "b": 1.0}, None, {"a": 0.2, "b": 0.0}]
    assert aggregate(same) == ({"a": (0.1 + 0.2) / 2, "b": 0.5}, 2)
    mixed = [{"a": 1.0, "b": 1.0}, {"a": 0.0, "c": 1.0}, {"a": 0.5}]
    assert aggregate(mixed) == ({"a": 0.5, "b": 1.0, "c": 1.0}, 3)
