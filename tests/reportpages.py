"""A workspace for the HTML report's tests: two suites over recorded answers,
with cases that miss (below k, not returned), a broken line, metadata to slice
by, and case ids a page must show as text, never as markup."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

HOSTILE_IDS = ("<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>", "a&amp;b \"quoted\" 'x'")

TARGETS = "targets:\n  recorded:\n    recorded: .punica/runs/answers.jsonl\n"
SUITES = """suites:
  - id: support
    target: {kind: capability, id: recorded}
    dataset: .punica/evals/support.jsonl
    engines: [rag]
    options:
      rag: {match: id, k: 3}
    thresholds:
      rag.recall: 0.5
      rag.mrr: 0.3
  - id: "billing <b>bold</b>"
    target: {kind: capability, id: recorded}
    dataset: .punica/evals/billing.jsonl
    engines: [rag]
    options:
      rag: {match: id, k: 3}
    thresholds:
      rag.recall: 0.99
"""


def _cases(prefix: str, count: int) -> list[tuple[str, list[str], dict[str, Any] | None, list[str]]]:
    cases = []
    for number in range(count):
        relevant = [f"doc-{number}", f"doc-{number + 1}"]
        # Every third case finds one of its two only at rank 5 (past k = 3), every
        # fifth does not get the second at all.
        if number % 5 == 0:
            hits = [relevant[0], "other-a", "other-b"]
        elif number % 3 == 0:
            hits = ["other-a", relevant[0], "other-b", "other-c", relevant[1]]
        else:
            hits = [relevant[1], relevant[0], "other-a"]
        cases.append((f"{prefix}-{number:03d}", relevant, {"lang": "de" if number % 2 else "en"}, hits))
    return cases


def report_workspace(root: Path, count: int = 30, hostile: bool = True) -> Path:
    """Two suites of ``count`` cases (and, with ``hostile``, cases with the ids
    of HOSTILE_IDS in the first one, and a broken line in the second)."""
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / ".punica" / "runs").mkdir()
    (root / ".punica" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / ".punica" / "evals" / "cases.suite.yaml").write_text(SUITES, encoding="utf-8")
    answers = []
    for dataset, prefix in (("support", "q"), ("billing", "bill")):
        cases = _cases(prefix, count)
        if hostile and dataset == "support":
            cases += [(case_id, ["doc-1"], None, ["other-a", "doc-1"]) for case_id in HOSTILE_IDS]
        rows = []
        for case_id, relevant, metadata, hits in cases:
            row: dict[str, Any] = {"id": case_id, "input": {"query": case_id}, "expect": {"relevant": relevant}}
            if metadata is not None:
                row["metadata"] = metadata
            rows.append(json.dumps(row) + "\n")
            answers.append(json.dumps({"id": case_id, "hits": [{"id": hit} for hit in hits], "mode": "semantic"}) + "\n")
        if hostile and dataset == "billing":
            rows.append('{"id": "no-expectation", "input": {"query": "x"}}\n')
        (root / ".punica" / "evals" / f"{dataset}.jsonl").write_text("".join(rows), encoding="utf-8")
    (root / ".punica" / "runs" / "answers.jsonl").write_text("".join(answers), encoding="utf-8")
    return root


def page_data(page: str) -> dict:
    """The cases a page holds: the JSON of its ``cases-data`` element."""
    found = re.search(r'<script type="application/json" id="cases-data">(.*?)</script>', page, re.S)
    assert found, "no cases-data element"
    return json.loads(found.group(1))
