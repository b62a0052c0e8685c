"""Time `rag-lsp import` of a BEIR folder, and the first run of the suite it sets up.

    python benchmarks/importing.py [--documents 5000] [--queries 300] [--repeat 3]

Writes a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) of distinct
documents about the services of an imaginary company, each a title and a few
sentences, and questions that ask about one to three of them in other words;
then, each time into a fresh workspace, `rag-lsp import FOLDER` as a whole
process (the median of --repeat), and `rag-lsp run` of what it wrote with no
further configuration: the first run (its index built, in a cache folder of its
own) and the next (the index read from the cache).

Goal: the import of 5,000 documents and 300 queries in ≤ 5 s; the run works
with no further configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

RAG_LSP = [sys.executable, "-m", "rag_lsp"]

SERVICES = """billing ledger invoices payouts refunds checkout catalog search inventory shipping returns
notifications webhooks gateway approvals audit identity sessions tokens quotas scheduler reports exports
imports backups storage uploads thumbnails pricing coupons loyalty reviews support tickets chat analytics
metrics tracing alerts deployments migrations feature-flags experiments onboarding accounts teams""".split()
ASPECTS = [
    ("retries", "failed calls are retried with exponential backoff, at most {n} times, before the request is parked"),
    ("limits", "each tenant may send {n} requests a minute; past that the service answers 429 and a Retry-After header"),
    ("expiry", "records older than {n} days are archived at night and removed from the hot tables"),
    ("ownership", "the {team} team owns it; pages go to their on-call rotation, escalated after {n} minutes"),
    ("storage", "data lives in a {store} cluster with {n} replicas spread across two zones"),
    ("auth", "callers present a signed token; keys rotate every {n} days and old keys stay valid for a day"),
    ("latency", "the p99 latency budget is {n} ms; slower calls are traced and sampled for review"),
    ("failover", "when the primary fails, a replica is promoted within {n} seconds and writes resume"),
    ("schema", "fields are added, never renamed; a removal waits {n} releases behind a deprecation flag"),
    ("costs", "compute is billed to the owning team monthly, about {n} dollars per million calls"),
]
QUESTIONS = {
    "retries": "how often does {s} try again when a call fails",
    "limits": "what happens when a customer calls {s} too often",
    "expiry": "when is old data of {s} cleaned up",
    "ownership": "who gets paged when {s} breaks",
    "storage": "where does {s} keep its data and how many copies exist",
    "auth": "how do clients of {s} prove who they are",
    "latency": "how fast must {s} answer",
    "failover": "what does {s} do when its main database dies",
    "schema": "can we rename a field in the {s} API",
    "costs": "who pays for running {s}",
}
TEAMS = "atlas borealis cobalt delta ember fjord granite harbor".split()
STORES = "postgres cassandra redis mysql elasticsearch".split()


def write_beir(folder: Path, documents: int, queries: int, seed: int = 7) -> None:
    """A BEIR folder of ``documents`` distinct documents and ``queries`` judged questions."""
    rng = random.Random(seed)
    (folder / "qrels").mkdir(parents=True)
    pairs = [(service, aspect) for service in SERVICES for aspect in ASPECTS]
    docs = []
    for number in range(documents):
        service, (aspect, sentence) = pairs[number % len(pairs)]
        region = number // len(pairs)
        name = f"{service} {aspect} (region {region})"
        facts = sentence.format(n=rng.randint(2, 90), team=rng.choice(TEAMS), store=rng.choice(STORES))
        other_service, (_, other) = rng.choice(pairs)
        text = (
            f"In region {region}, {service}: {facts}. "
            f"This page is part of the {service} runbook; see also how {other_service} handles it: "
            f"{other.format(n=rng.randint(2, 90), team=rng.choice(TEAMS), store=rng.choice(STORES))}."
        )
        docs.append({"_id": f"doc{number:05d}", "title": name.capitalize(), "text": text, "metadata": {}})
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as file:
        for doc in docs:
            file.write(json.dumps(doc) + "\n")
    chosen = rng.sample(range(documents), queries)
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as qfile, open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for number, doc in enumerate(chosen):
            service, (aspect, _) = pairs[doc % len(pairs)]
            region = doc // len(pairs)
            question = QUESTIONS[aspect].format(s=service) + f" in region {region}"
            qfile.write(json.dumps({"_id": f"q{number:04d}", "text": question, "metadata": {}}) + "\n")
            qrels.write(f"q{number:04d}\tdoc{doc:05d}\t2\n")
            # A second, weaker judgment: the same aspect of the service in the next region.
            twin = doc + len(pairs)
            if twin < documents and rng.random() < 0.5:
                qrels.write(f"q{number:04d}\tdoc{twin:05d}\t1\n")


def timed(command: list[str], cwd: Path, env: dict[str, str], expect: tuple[int, ...] = (0,)) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in expect:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rag-lsp-import-") as folder:
        root = Path(folder)
        beir = root / "beir"
        write_beir(beir, arguments.documents, arguments.queries)
        size = sum(path.stat().st_size for path in beir.rglob("*") if path.is_file())
        print(f"BEIR folder: {arguments.documents:,} documents, {arguments.queries:,} queries, {size / 1e6:.1f} MB")
        env = {**os.environ, "RAG_LSP_CACHE_DIR": str(root / "cache")}
        imports = []
        for attempt in range(arguments.repeat):
            workspace = root / f"ws{attempt}"
            (workspace / ".punica").mkdir(parents=True)
            seconds, out = timed([*RAG_LSP, "import", str(beir), "--name", "services"], workspace, env)
            imports.append(seconds)
        print(f"rag-lsp import (whole process, median of {arguments.repeat}): {statistics.median(imports):.2f} s "
              f"(runs: {', '.join(f'{s:.2f}' for s in imports)}; goal ≤ 5 s)")
        print("  " + "\n  ".join(out.strip().splitlines()))
        workspace = root / "ws0"
        first, report = timed([*RAG_LSP, "run", "--format", "json"], workspace, env, (0, 1))
        suite = json.loads(report)["suites"][0]
        second, _ = timed([*RAG_LSP, "run", "--format", "json"], workspace, env, (0, 1))
        means = suite["aggregates"]
        print(f"first rag-lsp run (index built): {first:.2f} s; next run (index cached): {second:.2f} s")
        print(
            f"  suite {suite['id']}: passed {suite['passed']}, {len(suite['cases'])} cases, "
            f"recall@10 {means.get('rag.recall', 0):.3f}, MRR {means.get('rag.mrr', 0):.3f}, "
            f"semantic {means.get('rag.mode.semantic', 0):.2f}"
        )


if __name__ == "__main__":
    main()
