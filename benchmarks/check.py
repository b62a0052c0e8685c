"""Time `rag-lsp check` on synthetic datasets, beside check-jsonschema.

    python benchmarks/check.py [--sizes 1000,10000,100000] [--repeat 3]

For each size it writes a workspace (one suite, one dataset of that many rag
cases with about 1% defects, the files the cases expect) and times the whole
`rag-lsp check` process. In the same run it times check-jsonschema validating the
same rows the fastest way a user of that tool can: the JSON Lines turned into one
JSON array, checked against a schema of what every rag case must hold (an `id`,
`input.query`, and `expect.relevant` as a non-empty list of strings; see
CASE_SCHEMA) (`pip install check-jsonschema`).
Times are the best of --repeat runs; the last column is how many times faster
rag-lsp is. check-jsonschema only validates the schema; rag-lsp also runs every
rule (duplicate ids, missing files, ...), so the comparison is conservative.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bytecode import compile_package

REPO = Path(__file__).resolve().parent.parent
SUITE = """\
suites:
  - id: bench
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/bench.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 5}}
    thresholds:
      rag.recall: 0.8
      rag.mode.semantic: 1
"""
FILES = [f"src/module_{n}.py" for n in range(40)] + [f"docs/topic_{n}.md" for n in range(20)]


def case_line(index: int, rng: random.Random) -> str:
    """One rag case; about 1% of them carry one of the defects rag-lsp reports."""
    relevant = rng.sample(FILES, rng.randint(1, 3))
    case = {
        "id": f"case-{index}",
        "input": {"query": f"how does component {index % 97} handle request {index}", "corpora": ["code"], "topK": 10},
        "expect": {"relevant": relevant},
    }
    roll = rng.random()
    if roll < 0.002:
        case["expect"]["relevant"] = []  # RAG200
    elif roll < 0.004:
        case["expect"]["relevant"] = ["src/missing.py"]  # RAG203
    elif roll < 0.006:
        case["id"] = f"case-{max(index - 1, 0)}"  # RAG202
    elif roll < 0.008:
        case["expect"]["relevant"] = ["./" + relevant[0]]  # RAG206
    elif roll < 0.010:
        return json.dumps(case)[:-1]  # RAG002
    return json.dumps(case)


def write_workspace(root: Path, size: int) -> Path:
    rng = random.Random(size)
    (root / ".punica" / "evals").mkdir(parents=True)
    for relative in FILES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(f"# {relative}\n")
    (root / ".punica" / "evals" / "bench.suite.yaml").write_text(SUITE)
    lines = [case_line(index, rng) for index in range(size)]
    (root / ".punica" / "evals" / "bench.jsonl").write_text("\n".join(lines) + "\n")
    return root


def best_time(command: list[str], repeat: int, expect_codes: tuple[int, ...]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if result.returncode not in expect_codes:
            raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{result.stderr[-2000:]}")
        best = min(best, elapsed)
    return best


# The schema check-jsonschema is given: what every rag case must hold (an
# `id`, `input.query`, and `expect.relevant` as a non-empty list of strings),
# the yardstick the speed goal names. The full rag case schema
# (schemas/rag-case.schema.json) costs check-jsonschema more time, and would
# flatter the ratio.
CASE_SCHEMA = {
    "type": "object",
    "required": ["id", "input", "expect"],
    "properties": {
        "id": {"type": "string"},
        "input": {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}},
        "expect": {
            "type": "object",
            "required": ["relevant"],
            "properties": {"relevant": {"type": "array", "minItems": 1, "items": {"type": "string"}}},
        },
    },
}


def check_jsonschema_inputs(root: Path) -> tuple[Path, Path]:
    """The dataset as one JSON array, and the schema of a rag case's required
    keys (CASE_SCHEMA) wrapped as an array schema."""
    rows = []
    for line in (root / ".punica" / "evals" / "bench.jsonl").read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # check-jsonschema cannot read a broken line at all
    data = root / "bench.json"
    data.write_text(json.dumps(rows))
    schema = root / "bench.schema.json"
    schema.write_text(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array", "items": CASE_SCHEMA}))
    return data, schema


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    compile_package()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    rag_lsp = [sys.executable, "-m", "rag_lsp", "check"]
    other = shutil.which("check-jsonschema")
    print(f"{'cases':>8}  {'rag-lsp check':>14}  {'check-jsonschema':>17}  {'ratio':>6}")
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            root = write_workspace(Path(folder) / f"ws-{size}", size)
            ours = best_time([*rag_lsp, str(root)], arguments.repeat, (1,))
            if other is None:
                print(f"{size:>8}  {ours:>13.2f}s  {'(not installed)':>17}")
                continue
            data, schema = check_jsonschema_inputs(root)
            theirs = best_time([other, "--schemafile", str(schema), str(data)], arguments.repeat, (0, 1))
            print(f"{size:>8}  {ours:>13.2f}s  {theirs:>16.2f}s  {theirs / ours:>5.1f}x")
    if other is None:
        print("check-jsonschema is not installed: pip install check-jsonschema", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
