"""``rag-lsp import`` through the real command line: a BEIR folder and TREC qrels (tests/fixtures/import) become a
dataset and a suite that `check` passes and `run` runs with no further configuration."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from workspaces import rag_lsp

# Slow (runs the command line in processes of its own): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "import"
BEIR = FIXTURES / "beir-gateway"
TREC = FIXTURES / "trec"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace: a folder holding .punica/."""
    root = tmp_path / "ws"
    (root / ".punica").mkdir(parents=True)
    return root


def _cases(path: Path) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def _import(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    result = rag_lsp("import", *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_a_beir_folder_becomes_a_suite_that_checks_clean_and_runs(workspace: Path) -> None:
    """A BEIR folder's test split becomes a dataset, a suite with `match: id`, a documents file and a builtin
    target: `check` passes and `run` scores every case by meaning, with no further configuration."""
    result = _import(str(BEIR), "--name", "gateway", cwd=workspace)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (workspace / ".punica/corpora/gateway.jsonl").is_file()
    suite = yaml.safe_load((workspace / ".punica/evals/gateway.suite.yaml").read_text(encoding="utf-8"))["suites"][0]
    assert suite["id"] == "gateway"
    assert suite["dataset"] == ".punica/evals/gateway.jsonl"
    assert suite["options"]["rag"] == {"match": "id", "k": 10}
    targets = yaml.safe_load((workspace / ".punica/targets.yaml").read_text(encoding="utf-8"))["targets"]
    assert targets[suite["target"]["id"]] == {"builtin": {"corpora": {"gateway": {"documents": ".punica/corpora/gateway.jsonl"}}}}
    check = rag_lsp("check", "--format", "json", cwd=workspace)
    assert check.returncode == 0 and json.loads(check.stdout) == [], check.stdout + check.stderr
    run = rag_lsp("run", "--format", "json", cwd=workspace)
    assert run.returncode == 0, run.stdout + run.stderr
    (report,) = json.loads(run.stdout)["suites"]
    assert report["id"] == "gateway" and report["passed"] and not report["broken"]
    assert len(report["cases"]) == 6
    assert {case["mode"] for case in report["cases"]} == {"semantic"}
    assert report["aggregates"]["rag.recall"] >= 0.8


def test_ids_and_grades_are_kept(workspace: Path) -> None:
    """Query ids are case ids, relevant documents (grade > 0) keep their ids and order, grades other than 1 are
    written to expect.grades, a grade of 0 is not relevant, and numeric ids are read as their digits."""
    assert _import(str(BEIR), "--name", "gateway", cwd=workspace).returncode == 0
    cases = _cases(workspace / ".punica/evals/gateway.jsonl")
    assert list(cases) == ["q-throttle", "q-rollback", "q-tamper", "q-retry", "q-quorum", "7"]
    assert cases["q-throttle"]["expect"] == {"relevant": ["doc-buckets"], "grades": {"doc-buckets": 2}}
    assert cases["q-throttle"]["input"] == {"query": "what happens when a tenant sends too many requests"}
    assert cases["q-rollback"]["expect"] == {"relevant": ["doc-deploy"]}
    assert cases["q-quorum"]["expect"] == {
        "relevant": ["doc-quorum", "doc-expiry-old"],
        "grades": {"doc-quorum": 2, "doc-expiry-old": 1},
    }
    assert cases["7"]["expect"] == {"relevant": ["42"]}
    documents = [json.loads(line) for line in (workspace / ".punica/corpora/gateway.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [document["_id"] for document in documents] == ["doc-buckets", "doc-deploy", "doc-audit", "doc-webhooks", "doc-quorum", "42"]
    # Only the keys the builtin target reads; the first of two documents of one id.
    assert documents[0] == {
        "_id": "doc-buckets",
        "title": "Token buckets",
        "text": "Each tenant gets its own token bucket that refills continuously; an empty bucket throttles requests "
        "with 429 Too Many Requests.",
    }


def test_what_is_skipped_is_said_with_counts_and_first_ids(workspace: Path) -> None:
    """The report counts each reason to leave something out and shows the first ids or lines: queries without
    judgments, judgments without a query, queries with nothing relevant, rows that cannot be read; and a relevant
    document the corpus does not hold is kept and said."""
    result = _import(str(BEIR), "--name", "gateway", cwd=workspace)
    out = result.stdout
    assert "1 query without judgments in test.tsv (most often, a query of another split): q-train-only" in out
    assert "1 judged query of test.tsv that is not in the queries file: q-gone" in out
    assert "1 query judged with nothing relevant (every grade ≤ 0; a case needs a relevant document): q-nothing" in out
    assert "1 row of queries.jsonl that cannot be read: queries.jsonl:9:" in out
    assert "1 judgment of test.tsv that cannot be read: test.tsv:12: 'q-retry\\tdoc-webhooks\\tnot-a-number'" in out
    assert "1 document of corpus.jsonl that cannot be read: corpus.jsonl:7:" in out
    assert "1 document of corpus.jsonl given twice (the first kept): doc-buckets" in out
    assert "1 relevant judgment names a document the corpus does not hold" in out and "q-quorum: doc-expiry-old" in out
    assert "6 cases, 7 relevant documents (2 cases graded)" in out


def test_another_split_is_chosen_with_split(workspace: Path) -> None:
    """--split train reads qrels/train.tsv; a split that does not exist names those that do."""
    assert _import(str(BEIR), "--name", "train", "--split", "train", cwd=workspace).returncode == 0
    assert list(_cases(workspace / ".punica/evals/train.jsonl")) == ["q-train-only"]
    result = _import(str(BEIR), "--name", "dev", "--split", "dev", cwd=workspace)
    assert result.returncode == 2
    assert "qrels/dev.tsv (its splits: test, train; choose one with --split)" in result.stderr
    assert not (workspace / ".punica/evals/dev.jsonl").exists()


def test_trec_qrels_with_tsv_queries_and_a_corpus(workspace: Path) -> None:
    """TREC qrels (`qid 0 docid rel`) with TSV queries and a corpus become the same kind of suite, which runs."""
    result = _import(
        str(TREC / "qrels.txt"), "--queries", str(TREC / "queries.tsv"), "--corpus", str(BEIR / "corpus.jsonl"), cwd=workspace
    )
    assert result.returncode == 0, result.stdout + result.stderr
    cases = _cases(workspace / ".punica/evals/qrels.jsonl")
    assert list(cases) == ["q-throttle", "q-rollback", "q-tamper", "q-retry", "q-quorum", "7"]
    assert cases["q-quorum"]["expect"] == {"relevant": ["doc-quorum"], "grades": {"doc-quorum": 3}}
    assert "1 query without judgments in qrels.txt: q-unjudged" in result.stdout
    assert "1 judged query of qrels.txt that is not in the queries file: q-gone" in result.stdout
    assert "1 judgment of qrels.txt that cannot be read: qrels.txt:9: 'this line is short'" in result.stdout
    assert "1 row of queries.tsv that cannot be read: queries.tsv:8: 'no tab on this line'" in result.stdout
    assert "6 cases, 6 relevant documents (2 cases graded)" in result.stdout
    check = rag_lsp("check", "--format", "json", cwd=workspace)
    assert check.returncode == 0 and json.loads(check.stdout) == [], check.stdout
    run = rag_lsp("run", "--suite", "qrels", "--format", "json", cwd=workspace)
    assert run.returncode == 0, run.stdout + run.stderr


def test_one_case_is_counted_as_one(workspace: Path, tmp_path: Path) -> None:
    """What an import wrote is counted in the singular where it is one: one case, one relevant document, one graded."""
    (tmp_path / "one.qrels").write_text("q1 0 d1 2\n", encoding="utf-8")
    (tmp_path / "one.tsv").write_text("q1\tthe one query\n", encoding="utf-8")
    result = _import(str(tmp_path / "one.qrels"), "--queries", str(tmp_path / "one.tsv"), "--target", "vectors.query", cwd=workspace)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "wrote .punica/evals/one.jsonl: 1 case, 1 relevant document (1 case graded)" in result.stdout


def test_trec_qrels_with_jsonl_queries_and_a_target_of_the_team(workspace: Path) -> None:
    """With JSON Lines queries and --target instead of a corpus, the suite asks that target and no corpus or
    target config is written."""
    result = _import(
        str(TREC / "qrels.txt"), "--queries", str(BEIR / "queries.jsonl"), "--target", "vectors.query", "--name", "t", cwd=workspace
    )
    assert result.returncode == 0, result.stdout + result.stderr
    suite = yaml.safe_load((workspace / ".punica/evals/t.suite.yaml").read_text(encoding="utf-8"))["suites"][0]
    assert suite["target"] == {"kind": "capability", "id": "vectors.query"}
    assert not (workspace / ".punica/targets.yaml").exists()
    assert not (workspace / ".punica/corpora").exists()
    assert len(_cases(workspace / ".punica/evals/t.jsonl")) == 6


def test_nothing_is_replaced_without_force(workspace: Path) -> None:
    """A second import of one name changes nothing and exits 2, naming the files; --force replaces them."""
    assert _import(str(BEIR), "--name", "gateway", cwd=workspace).returncode == 0
    dataset = workspace / ".punica/evals/gateway.jsonl"
    dataset.write_text("edited\n", encoding="utf-8")
    again = _import(str(BEIR), "--name", "gateway", cwd=workspace)
    assert again.returncode == 2
    assert ".punica/evals/gateway.jsonl" in again.stderr and "--force" in again.stderr
    assert dataset.read_text(encoding="utf-8") == "edited\n"
    forced = _import(str(BEIR), "--name", "gateway", "--force", cwd=workspace)
    assert forced.returncode == 0, forced.stderr
    assert len(_cases(dataset)) == 6
    # The target was there already, as the import writes it: one target, not two.
    assert (workspace / ".punica/targets.yaml").read_text(encoding="utf-8").count("gateway.search:") == 1


def test_the_target_is_added_to_a_targets_config_that_exists(workspace: Path) -> None:
    """An existing targets config keeps its targets and comments, and gains the imported one; a target of that id
    configured otherwise is never replaced."""
    config = workspace / ".punica/targets.yaml"
    config.write_text(
        "# Our targets.\ntargets:\n    ids.search:\n        command: [python, tools/search.py]\n        fields: [id]\n\n# the end\n",
        encoding="utf-8",
    )
    assert _import(str(BEIR), "--name", "gateway", cwd=workspace).returncode == 0
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# Our targets.\n") and "# the end" in text
    targets = yaml.safe_load(text)["targets"]
    assert targets["ids.search"] == {"command": ["python", "tools/search.py"], "fields": ["id"]}
    assert targets["gateway.search"] == {"builtin": {"corpora": {"gateway": {"documents": ".punica/corpora/gateway.jsonl"}}}}
    check = rag_lsp("check", "--format", "json", cwd=workspace)
    assert json.loads(check.stdout) == [], check.stdout
    config.write_text("targets:\n  other.search:\n    recorded: x.jsonl\n  beir.search: {recorded: y.jsonl}\n", encoding="utf-8")
    clash = _import(str(BEIR), "--name", "beir", cwd=workspace)
    assert clash.returncode == 2
    assert "already configures a target 'beir.search'" in clash.stderr
    assert not (workspace / ".punica/evals/beir.jsonl").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["missing-folder"], "missing-folder: no such file or folder"),
        ([str(TREC / "qrels.txt")], "give its queries with --queries FILE"),
        ([str(TREC / "qrels.txt"), "--queries", str(TREC / "queries.tsv")], "give --corpus FILE"),
        ([str(TREC)], "is not a BEIR folder: it has no corpus.jsonl, no queries.jsonl, no qrels/test.tsv"),
        ([str(BEIR), "--queries", "q.tsv"], "--queries is for TREC qrels"),
        ([str(BEIR), "--name", "Bad Name"], "--name 'Bad Name': use lower-case letters"),
        (
            [str(TREC / "queries.tsv"), "--queries", str(TREC / "queries.tsv"), "--target", "x"],
            "nothing to import from the TREC qrels",
        ),
        ([str(BEIR), "--k", "0"], "--k must be at least 1"),
    ],
)
def test_bad_input_is_a_clear_message_and_exit_2(workspace: Path, args: list[str], said: str) -> None:
    """What cannot be imported says why, exits 2, never with a traceback, and writes nothing."""
    result = _import(*args, cwd=workspace)
    assert result.returncode == 2
    assert said in result.stderr
    assert not (workspace / ".punica" / "evals").exists()


def test_ir_measures_reads_the_trec_run_and_qrels_as_the_run_scores_them(workspace: Path, tmp_path: Path) -> None:
    """`run --format trec` and `--qrels-out` give ir-measures the same recall (R@k), precision (SetP: the share
    of the hits within k that are relevant) and reciprocal rank (RR@k) per case as `run --format json` reports."""
    ir_measures = pytest.importorskip("ir_measures")
    assert _import(str(BEIR), "--name", "gateway", "--k", "3", cwd=workspace).returncode == 0
    run = rag_lsp("run", "--format", "trec", "--qrels-out", str(tmp_path / "qrels.txt"), cwd=workspace)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines and all(len(line.split()) == 6 and line.split()[1] == "Q0" and line.endswith(" gateway") for line in lines)
    (tmp_path / "run.txt").write_text(run.stdout, encoding="utf-8")
    report = json.loads(rag_lsp("run", "--format", "json", cwd=workspace).stdout)["suites"][0]
    ours = {case["id"]: case["scores"] for case in report["cases"]}
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
    assert {(q.query_id, q.doc_id, q.relevance) for q in qrels} >= {("q-throttle", "doc-buckets", 2), ("7", "42", 1)}
    recall, precision, reciprocal = ir_measures.parse_measure("R@3"), ir_measures.parse_measure("SetP"), ir_measures.parse_measure("RR@3")
    theirs: dict[str, dict] = {}
    for metric in ir_measures.iter_calc([recall, precision, reciprocal], qrels, list(ir_measures.read_trec_run(str(tmp_path / "run.txt")))):
        theirs.setdefault(metric.query_id, {})[metric.measure] = metric.value
    assert set(theirs) == set(ours)
    for case, scores in ours.items():
        assert theirs[case][recall] == pytest.approx(scores["rag.recall"], abs=1e-9)
        assert theirs[case][precision] == pytest.approx(scores["rag.precision"], abs=1e-9)
        assert theirs[case][reciprocal] == pytest.approx(scores["rag.mrr"], abs=1e-9)
    # Not every case is perfect at k = 3, or the comparison would say little.
    assert any(scores["rag.recall"] < 1 for scores in ours.values())


def test_what_was_skipped_is_counted_in_words_for_one_and_for_many() -> None:
    """A reason for skipping reads in the singular for one item left out and in the plural for more."""
    from rag_lsp.core.running.importing import Skip

    skip = Skip("judged queries of qrels.txt that are not in the queries file", "judged query of qrels.txt that is not in the queries file")
    skip.add("q-gone")
    assert skip.said() == "1 judged query of qrels.txt that is not in the queries file"
    skip.add("q-lost", 1_499)
    assert skip.said() == "1,500 judged queries of qrels.txt that are not in the queries file"
    assert skip.shown == ["q-gone", "q-lost"]
