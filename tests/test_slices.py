"""Slices: a suite's means per value of a metadata key, as functions and through ``rag-lsp run --by``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from workspaces import rag_lsp

from rag_lsp.core.running.slices import NONE, NotAMetadataKey, metadata_key, slice_cases, slice_names, value_at


@dataclass
class Case:
    metadata: dict[str, Any] | None
    scores: dict[str, float] | None


def test_a_list_value_puts_the_case_in_each_of_its_slices() -> None:
    """Tags ["billing", "auth", "billing"] are the slices billing and auth, once each."""
    assert slice_names(["billing", "auth", "billing"]) == ["billing", "auth"]


def test_a_case_without_the_key_is_in_the_none_slice() -> None:
    """No metadata, no such key, null, or an empty list: the slice (none)."""
    for metadata in (None, {}, {"lang": None}, {"lang": []}):
        assert slice_names(value_at(metadata, "lang")) == [NONE]


def test_values_that_are_not_strings_are_named_by_their_json() -> None:
    """A number, a boolean or an object names its slice as JSON writes it."""
    assert slice_names(3) == ["3"]
    assert slice_names(True) == ["true"]
    assert slice_names({"b": 1, "a": 2}) == ['{"a": 2, "b": 1}']


def test_a_dotted_key_reads_nested_metadata_unless_the_key_exists_as_written() -> None:
    """metadata.source.kind reads {"source": {"kind": ...}}; a key "source.kind" itself wins."""
    assert value_at({"source": {"kind": "tickets"}}, "source.kind") == "tickets"
    assert value_at({"source.kind": "faq", "source": {"kind": "tickets"}}, "source.kind") == "faq"
    assert value_at({"source": "tickets"}, "source.kind") is None


def test_each_slice_has_its_case_count_and_means_over_its_scored_cases() -> None:
    """Means over the scored cases of the slice; a broken case counts in `cases`, not in `scored`; (none) sorts last."""
    cases = [
        Case({"tags": ["billing", "auth"]}, {"rag.recall": 1.0}),
        Case({"tags": ["billing"]}, {"rag.recall": 0.5}),
        Case({"tags": ["billing"]}, None),
        Case(None, {"rag.recall": 0.0}),
    ]
    slices = slice_cases(cases, "tags")
    assert list(slices) == ["auth", "billing", NONE]
    assert slices["billing"].to_json() == {"cases": 3, "scored": 2, "aggregates": {"rag.recall": 0.75}}
    assert slices["auth"].to_json() == {"cases": 1, "scored": 1, "aggregates": {"rag.recall": 1.0}}
    assert slices[NONE].to_json() == {"cases": 1, "scored": 1, "aggregates": {"rag.recall": 0.0}}


@pytest.mark.parametrize("written", ["lang", "metadata", "metadata.", "Metadata.lang", "input.query"])
def test_a_key_outside_metadata_is_refused(written: str) -> None:
    """Only metadata.KEY names a slice key."""
    with pytest.raises(NotAMetadataKey, match="metadata.KEY"):
        metadata_key(written)


# ---------------------------------------------------------------- the command line

TARGETS = "targets:\n  recorded:\n    recorded: .punica/runs/answers.jsonl\n"
SUITE = """suites:
  - id: support
    target: {kind: capability, id: recorded}
    dataset: .punica/evals/cases.jsonl
    engines: [rag]
    options:
      rag: {match: id}
    thresholds:
      rag.recall: 0.5
      rag.mode.semantic: 1
"""


def workspace(root: Path) -> Path:
    """Four questions, two tagged billing: the billing ones are the ones the search misses."""
    cases = [
        ("refund", ["refunds"], {"tags": ["billing"], "lang": "en"}, ["x", "y"]),
        ("invoice", ["invoices"], {"tags": ["billing", "account"], "lang": "de"}, ["invoices"]),
        ("login", ["sso"], {"tags": ["account"], "lang": "en"}, ["sso"]),
        ("status", ["status"], None, ["status"]),
    ]
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / ".punica" / "runs").mkdir()
    (root / ".punica" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / ".punica" / "evals" / "support.suite.yaml").write_text(SUITE, encoding="utf-8")
    rows, answers = [], []
    for case_id, relevant, metadata, hits in cases:
        row: dict[str, Any] = {"id": case_id, "input": {"query": case_id}, "expect": {"relevant": relevant}}
        if metadata is not None:
            row["metadata"] = metadata
        rows.append(json.dumps(row) + "\n")
        answers.append(json.dumps({"id": case_id, "hits": [{"id": hit} for hit in hits], "mode": "semantic"}) + "\n")
    (root / ".punica" / "evals" / "cases.jsonl").write_text("".join(rows), encoding="utf-8")
    (root / ".punica" / "runs" / "answers.jsonl").write_text("".join(answers), encoding="utf-8")
    return root


def test_json_gives_each_suite_its_slices(tmp_path: Path) -> None:
    """--by metadata.tags --format json: per suite, slices -> metadata.tags -> value -> cases, scored, aggregates."""
    result = rag_lsp("run", "--by", "metadata.tags", "--by", "metadata.lang", "--format", "json", cwd=workspace(tmp_path))
    assert result.returncode == 0, result.stderr
    suite = json.loads(result.stdout)["suites"][0]
    tags = suite["slices"]["metadata.tags"]
    assert list(tags) == ["account", "billing", NONE]
    assert tags["billing"]["cases"] == 2 and tags["billing"]["aggregates"]["rag.recall"] == 0.5
    assert tags["account"]["aggregates"]["rag.recall"] == 1.0
    assert tags[NONE] == {"cases": 1, "scored": 1, "aggregates": tags[NONE]["aggregates"]}
    assert suite["aggregates"]["rag.recall"] == 0.75
    assert {name: part["cases"] for name, part in suite["slices"]["metadata.lang"].items()} == {"de": 1, "en": 2, NONE: 1}


def test_text_shows_each_slice_beside_the_whole_suite(tmp_path: Path) -> None:
    """The text report has a table per --by: the suite's means, then each slice with its case count."""
    result = rag_lsp("run", "--by", "metadata.tags", cwd=workspace(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("  by metadata.tags")
    table = [line.split() for line in lines[start + 1 : start + 6]]
    assert table[0][:3] == ["slice", "cases", "recall"]
    assert table[1][:3] == ["(all)", "4", "0.75"]
    assert table[2][:3] == ["account", "2", "1.00"]
    assert table[3][:3] == ["billing", "2", "0.50"]
    assert table[4][:3] == ["(none)", "1", "1.00"]


def test_without_by_the_report_has_no_slices(tmp_path: Path) -> None:
    """The report keeps its keys when no slice is asked for."""
    result = rag_lsp("run", "--format", "json", cwd=workspace(tmp_path))
    assert "slices" not in json.loads(result.stdout)["suites"][0]


@pytest.mark.parametrize(
    "arguments, said",
    [
        (["--by", "lang"], "--by 'lang' does not name a metadata key"),
        (["--by", "metadata."], "--by 'metadata.' does not name a metadata key"),
        (["--by", "metadata.lang", "--format", "junit"], "--by gives slices in the text and json reports, not in --format junit"),
    ],
)
def test_bad_by_is_a_usage_error(tmp_path: Path, arguments: list[str], said: str) -> None:
    """A --by that names no metadata key, or a format with no place for slices: a clear message, exit 2, no traceback."""
    result = rag_lsp("run", *arguments, cwd=workspace(tmp_path))
    assert result.returncode == 2
    assert said in result.stderr
    assert "Traceback" not in result.stderr
