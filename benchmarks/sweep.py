"""Time a k sweep: `rag-lsp run --k 1,3,5,10` beside a run at the suite's one k.

    python benchmarks/sweep.py [--cases 100000] [--repeat 5] [--k 1,3,5,10]

Writes the workspace of benchmarks/run.py (--cases rag cases, a recording of a
retrieval answering 10 hits per case, the suite at k 10), then times the whole
`rag-lsp run` process with and without `--k`, for `--format json` (every case's
figures at every k: the largest output) and `--format text`. The two commands
alternate, and each figure is the best of --repeat runs, so load from other
processes on the machine weighs on both alike. A sweep asks the target once per
case, so it should cost well under 1.5x a single-k run (the goal).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import best_alternating, make_cases, write_workspace
from bytecode import compile_package  # noqa: E402

GOAL = 1.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--k", default="1,3,5,10")
    arguments = parser.parse_args()
    compile_package()
    cases = make_cases(arguments.cases)
    print(f"== rag-lsp run over {arguments.cases:,} recorded cases: one k beside --k {arguments.k} "
          f"(best of {arguments.repeat}) ==")
    worst = 0.0
    with tempfile.TemporaryDirectory() as folder:
        root = write_workspace(Path(folder) / "ws", cases)
        for output in ("json", "text"):
            single_command = [sys.executable, "-m", "rag_lsp", "run", str(root), "--format", output]
            sweep_command = [*single_command, "--k", arguments.k]
            single, sweep = best_alternating([single_command, sweep_command], arguments.repeat)
            ratio = sweep[0] / single[0]
            worst = max(worst, ratio)
            print(f"--format {output:<4}  one k: {single[0]:5.2f} s wall ({single[1]:5.2f} s CPU)   "
                  f"--k {arguments.k}: {sweep[0]:5.2f} s wall ({sweep[1]:5.2f} s CPU)   "
                  f"ratio {ratio:.2f}x wall, {sweep[1] / single[1]:.2f}x CPU  (goal < {GOAL}x)")
    return 0 if worst < GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
