"""The cold index with rag-lsp's own tokenizer beside the same build with the ``tokenizers`` package.

    python benchmarks/tokenizer.py --write ROOT [--files 6000]
    python benchmarks/tokenizer.py ROOT [--pairs 5]
    python benchmarks/tokenizer.py ROOT --once own|tokenizers

``--write`` writes a workspace of --files files of real text under ROOT, as
``benchmarks/index.py`` writes its large one (the same generator, the same seed).

Without ``--once``: --pairs pairs of cold builds of ROOT, each build in a fresh
process with an empty cache (``benchmarks/index.py``'s step: the default
target's index brought up to date), the own tokenizer's and the other's in
turn, the first of a pair changing side every pair. It prints each pair and
the medians: the whole step, the index alone, and their ratios taken pair by
pair (the machine's speed drifts; a ratio of two builds run side by side in
time is what can be compared).

``--once own`` is one such build; ``--once tokenizers`` is the same build with
the model's tokenizer read by the ``tokenizers`` package (a test dependency of
rag-lsp) instead, as rag-lsp read it before it had its own: the
``tokenizers`` tokenizer then goes through ``embedding.TokenIds``' own path for
it (spaces marked with ``str.replace``, each distinct line of a batch
tokenized once, in Rust on the tokenizer thread without the interpreter's
lock). Each prints one line of JSON.

Measured: see docs/development.md (the own tokenizer).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

KINDS = ("own", "tokenizers")


def with_tokenizers_package() -> None:
    """Read the models' tokenizers with the ``tokenizers`` package from now on
    (in this process), as rag-lsp did before it had its own."""
    from tokenizers import Tokenizer

    from rag_lsp.core.search.embedding import loading

    def read(files: Any) -> Any:
        tokenizer = Tokenizer.from_file(str(files.tokenizer))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return tokenizer

    loading._tokenizer = read


def once(root: Path, kind: str) -> dict:
    """One cold build of ``root`` in this process, with a fresh cache."""
    from bytecode import compile_package

    compile_package()
    started = time.perf_counter()
    if kind == "tokenizers":
        with_tokenizers_package()
    patched = time.perf_counter() - started
    from index import step

    with tempfile.TemporaryDirectory() as cache:
        os.environ["RAG_LSP_CACHE_DIR"] = cache
        result = step(root, None, False)
    result["import_s"] += patched
    result["seconds"] += patched
    result["kind"] = kind
    return result


def in_child(root: Path, kind: str) -> dict:
    command = [sys.executable, __file__, str(root), "--once", kind]
    done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    if done.returncode != 0:
        raise SystemExit(f"the {kind} build of {root} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def paired(root: Path, pairs: int) -> None:
    rows = []
    for number in range(pairs):
        order = KINDS if number % 2 == 0 else KINDS[::-1]
        built = {kind: in_child(root, kind) for kind in order}
        own, other = built["own"], built["tokenizers"]
        rows.append((own, other))
        print(
            f"pair {number + 1}: own {own['seconds']:.2f} s (index {own['index_s']:.2f} s, model {own['model_s']:.3f} s), "
            f"tokenizers {other['seconds']:.2f} s (index {other['index_s']:.2f} s, model {other['model_s']:.3f} s): "
            f"{own['seconds'] / other['seconds']:.3f} x",
            flush=True,
        )
    chunks = {row[0]["chunks"] for row in rows} | {row[1]["chunks"] for row in rows}
    print(f"\n{rows[0][0]['files']:,} files, chunks {sorted(chunks)}; medians of {pairs} pairs:")
    for key, name in (("seconds", "step"), ("index_s", "index"), ("model_s", "model")):
        own = statistics.median(row[0][key] for row in rows)
        other = statistics.median(row[1][key] for row in rows)
        ratios = sorted(row[0][key] / row[1][key] for row in rows)
        print(
            f"  {name:<6} own {own:7.3f} s   tokenizers {other:7.3f} s   "
            f"ratio {statistics.median(ratios):.3f} x (pairs {ratios[0]:.3f}–{ratios[-1]:.3f})"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--write", action="store_true", help="write the workspace under ROOT")
    parser.add_argument("--files", type=int, default=6000)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--once", choices=KINDS)
    arguments = parser.parse_args()
    root = arguments.root.resolve()
    if arguments.write:
        from index import write_large

        (root / ".punica").mkdir(parents=True, exist_ok=True)
        print(f"wrote {arguments.files:,} files, {write_large(root, arguments.files) / 1e6:.1f} MB of real text, under {root}")
        return 0
    if not root.is_dir():
        parser.error(f"{root} is not a folder (write one with --write)")
    if arguments.once is not None:
        print(json.dumps(once(root, arguments.once)))
        return 0
    paired(root, arguments.pairs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
