"""Time `rag-lsp check` on gdi_text_v1 datasets written by other tools: one defect on every row.

    python benchmarks/foreign_gdi.py [--rows 100000] [--variants clean,prompt-list,...] [--repeat 3]

benchmarks/foreign.py does this for rag cases over a large workspace; this does
it for the rows `rag.hit_at_k` scores, which other evaluation tools write too:
each row's `prompt` written as a list of strings or as turns without a `role`, a
`task_type` of the tool's own, ids written as numbers, `retrieved_context` as
one string, no `reference_contexts`, a column of the tool's own, and the columns
under another tool's names (`question`, `contexts`). Each variant is the clean
dataset (distinct prompts, references and chunks of a few dozen words) with its
defect on every row; the clean dataset is the anchor.

It prints, per variant, the findings of the defect's code (a folded finding
counts once; `covers` says how many it stands for), `check` as a whole process
(best of --repeat) and the median of its ratios to the clean dataset's, taken
round by round, and the peak memory of the check.

Goals: a handful of findings for the cause; `check` ≤ 1.5x the clean dataset's
time and memory.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bytecode import compile_package  # noqa: E402
from realistic import RAG_LSP, chosen_variants  # noqa: E402

DATASET = ".punica/evals/gdi.jsonl"
SUITE = """suites:
  - id: gdi
    dataset: .punica/evals/gdi.jsonl
    metrics:
      rag.hit_at_k: {k: 5}
    thresholds:
      rag.hit_at_k: 0.7
"""
WORDS = (
    "gateway approval request policy token cache index shard replica billing invoice ledger queue worker retry "
    "timeout schema tenant region quota audit export import session router"
).split()


def clean_rows(count: int) -> list[dict]:
    rng = random.Random(7)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    return [
        {
            "input_id": f"q-{n}",
            "prompt": f"how does {words(5)} work",
            "reference_contexts": [words(8) for _ in range(rng.randint(1, 3))],
            "sut_response": words(10),
            "retrieved_context": [words(8) for _ in range(3)],
            "task_type": "single_turn_rag",
        }
        for n in range(count)
    ]


def _set(key: str, make: Callable[[dict], object]) -> Callable[[dict], None]:
    def apply(row: dict) -> None:
        row[key] = make(row)

    return apply


def _renamed(row: dict) -> None:
    row["question"] = row.pop("prompt")
    row["contexts"] = row.pop("retrieved_context")


# Variant -> (the code of its defect, what it writes on every row).
VARIANTS: dict[str, tuple[str, Callable[[dict], None] | None]] = {
    "clean": ("", None),
    "prompt-list": ("RAG004", _set("prompt", lambda row: [row["prompt"]])),
    "turns-no-role": ("RAG004", _set("prompt", lambda row: [{"content": row["prompt"]}])),
    "task-type": ("RAG004", _set("task_type", lambda row: "rag")),
    "numeric-id": ("RAG004", _set("input_id", lambda row: int(row["input_id"][2:]))),
    "retrieved-string": ("RAG004", _set("retrieved_context", lambda row: " ".join(row["retrieved_context"]))),
    "no-references": ("RAG208", _set("reference_contexts", lambda row: [])),
    "extra-column": ("", _set("source", lambda row: "export-2024-11")),
    "other-names": ("RAG004", _renamed),
}


def written(rows: list[dict], rewrite: Callable[[dict], None] | None) -> str:
    lines = []
    for row in rows:
        row = json.loads(json.dumps(row))
        if rewrite is not None:
            rewrite(row)
        lines.append(json.dumps(row))
    return "\n".join(lines) + "\n"


def checked(root: Path, code: str) -> dict:
    """One `check` of the workspace in a process of its own: its time, peak memory and findings of ``code``."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *RAG_LSP, "check", str(root), "--format", "json"], capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"check exited {done.returncode}:\n{done.stderr[-2000:]}")
    output, _, memory = done.stdout.rstrip("\n").rpartition("\n")
    findings = json.loads(output)
    mine = [finding for finding in findings if finding["code"] == code]
    return {
        "check_s": elapsed,
        "memory_mb": float(memory),
        "cause": len(mine),
        "covered": sum(finding.get("covers", {}).get("findings", 1) for finding in mine),
        "others": len(findings) - len(mine),
    }


# Runs the check as a child and prints its output, then the peak memory (MB) of the children.
_MEASURED = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "sys.stdout.write(done.stdout.rstrip('\\n') + '\\n'); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024); sys.exit(done.returncode)"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    names = chosen_variants(parser, arguments.variants, VARIANTS)
    compile_package()
    rows = clean_rows(arguments.rows)
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="rag-lsp-foreign-gdi-") as folder:
        root = Path(folder)
        (root / ".punica" / "evals").mkdir(parents=True)
        (root / ".punica" / "evals" / "gdi.suite.yaml").write_text(SUITE, encoding="utf-8")
        clean = written(rows, None)
        for name in names:
            code, rewrite = VARIANTS[name]
            text = written(rows, rewrite)
            rounds, anchors = [], []
            for _ in range(arguments.repeat):
                (root / DATASET).write_text(text, encoding="utf-8")
                rounds.append(checked(root, code))
                # Each round followed by one of the clean dataset: the machine's speed drifts.
                (root / DATASET).write_text(clean, encoding="utf-8")
                anchors.append(checked(root, ""))
            best = dict(min(rounds, key=lambda figures: figures["check_s"]))
            for key in ("check_s", "memory_mb"):
                best[f"{key}_ratio"] = statistics.median(ours[key] / theirs[key] for ours, theirs in zip(rounds, anchors))
            results[name] = best
            print(f"  {name}: {best}", flush=True)
    print()
    print(f"{'variant':<18} {'cause':>6} {'covers':>8} {'others':>7} {'check':>7} {'÷clean':>7} {'peak RSS':>9} {'÷clean':>7}")
    for name, figures in results.items():
        print(
            f"{name:<18} {figures['cause']:>6,} {figures['covered']:>8,} {figures['others']:>7,} {figures['check_s']:>6.2f}s "
            f"{figures['check_s_ratio']:>6.2f}x {figures['memory_mb']:>7.0f}MB {figures['memory_mb_ratio']:>6.2f}x"
        )
    print("\ngoals: a handful of findings for the cause; check ≤ 1.5x the clean dataset's time and memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
