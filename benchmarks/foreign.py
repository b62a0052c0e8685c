"""Time rag-lsp on datasets written by other tools: one defect on every row.

    python benchmarks/foreign.py [--cases 100000] [--variants clean,dot-slash,...] [--repeat 3]
                                 [--edits 40] [--server-runs 1] [--skip-server]

A team's first step is to point rag-lsp at the dataset it already has. Such a
dataset usually carries one defect on every row, for one cause: paths written
`./src/a.py` or with `\\`, a key of the exporting tool on every row, ids written
as numbers, `expect.relevant` written as one string, every case asking
`topK: 3` while the suite scores 5 hits, cases asking for a corpus of the
team's own service while the suite still names the builtin target, grades
written as fractions, expected values written as objects, an empty `corpora`,
a value listed twice, one id for every case, paths written from the folder of
the machine that wrote them, a document of a knowledge base the workspace
does not hold beside the workspace files, rows printed as Python values, a
comma after each row, each row encoded twice (a JSON string holding it), or
the whole dataset written as one JSON document (an
indented array, or indented objects one after the other) or as a CSV table (one
finding for the file, no row read, so none of the rows' own findings either).
Each variant
is the ``tree-20k`` workload of benchmarks/workloads.py (a nested tree of 20,000
files, 100,000 cases, 3% near-miss typos and 1% other defects) with one such
defect written on every row; the clean dataset is the anchor (grades written as
fractions are weighed against the same grades written as integers: a grade for
every expected path makes a dataset half as large again).

For each variant it prints, beside the clean dataset's figures: the findings of
the defect that `rag-lsp check --format json` reports (a folded finding counts
once, its `covers` says how many findings it stands for; findings of the
defect's code beyond those the clean dataset holds count too: its cut-off lines
are RAG002 as well), the other findings (which the defect must leave as they are), `check` as a whole
process (best of --repeat) and its ratio to the clean dataset's (the median
of the ratios of rounds taken in turn with it), and the
server over stdio: `didOpen` to the first diagnostics, edit latency (median and
p95) and peak memory.

Goals: a defect on every row gives a handful of findings for its cause, the
other findings unchanged; `check` ≤ 1.5 s and ≤ 1.5x the clean dataset; open
≤ 1 s; edit p50 ≤ 10 ms; peak RSS ≤ 250 MB.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bytecode import compile_package  # noqa: E402
from realistic import RAG_LSP, chosen_variants, server_figures, timed  # noqa: E402
from workloads import DATASET, SUITE, Workload, tree  # noqa: E402

Rewrite = Callable[[dict], None]


def _paths(rewrite: Callable[[str], str]) -> Rewrite:
    def apply(case: dict) -> None:
        relevant = case.get("expect", {}).get("relevant")
        if isinstance(relevant, list):
            case["expect"]["relevant"] = [rewrite(value) if isinstance(value, str) else value for value in relevant]

    return apply


def _extra_key(case: dict) -> None:
    case["source"] = "export-2024-11"


def _relevant_as_string(case: dict) -> None:
    relevant = case.get("expect", {}).get("relevant")
    if isinstance(relevant, list) and relevant and isinstance(relevant[0], str):
        case["expect"]["relevant"] = relevant[0]


def _top_k_below_k(case: dict) -> None:
    case["input"]["topK"] = 3


def _unserved_corpus(case: dict) -> None:
    case["input"]["corpora"] = ["issues"]


def _numeric_id(case: dict) -> None:
    identifier = case.get("id")
    if isinstance(identifier, str) and identifier.startswith("case-") and identifier[5:].isdigit():
        case["id"] = int(identifier[5:])


def _fraction_grades(case: dict) -> None:
    relevant = case.get("expect", {}).get("relevant")
    if isinstance(relevant, list):
        case["expect"]["grades"] = {path: 0.5 for path in relevant if isinstance(path, str)}


def _integer_grades(case: dict) -> None:
    relevant = case.get("expect", {}).get("relevant")
    if isinstance(relevant, list):
        case["expect"]["grades"] = {path: 2 for path in relevant if isinstance(path, str)}


def _objects_in_relevant(case: dict) -> None:
    relevant = case.get("expect", {}).get("relevant")
    if isinstance(relevant, list):
        case["expect"]["relevant"] = [{"path": path} for path in relevant]


def _empty_corpora(case: dict) -> None:
    case["input"]["corpora"] = []


def _repeated_value(case: dict) -> None:
    relevant = case.get("expect", {}).get("relevant")
    if isinstance(relevant, list) and relevant:
        relevant.append(relevant[0])


def _one_id(case: dict) -> None:
    case["id"] = "query"


def _misspelt_expect(case: dict) -> None:
    if "expect" in case:
        case["expected"] = case.pop("expect")


def _questions_only(case: dict) -> None:
    case.pop("expect", None)


def _partly_elsewhere(case: dict) -> None:
    """Beside its workspace files, a document of a knowledge base the workspace does not hold."""
    relevant = case.get("expect", {}).get("relevant")
    if isinstance(relevant, list):
        relevant.append(f"kb/{case.get('id')}.html")


def _python_values(line: str) -> str:
    """The row as Python prints a dict (single quotes), not as JSON."""
    return repr(json.loads(line))


_python_values.whole_line = True  # type: ignore[attr-defined]


def _comma_after(line: str) -> str:
    """The row with a comma after it, as the lines of a JSON array."""
    return line + ","


_comma_after.whole_line = True  # type: ignore[attr-defined]


def _array_row(line: str) -> str:
    """The row as a one-element JSON array, as a tool writing a table's rows does."""
    return f"[{line}]"


_array_row.whole_line = True  # type: ignore[attr-defined]


def _key_written_twice(line: str) -> str:
    """The row with its first key written twice, as a tool that exports a
    field of its own under a name the row already has does."""
    return line.replace('{"id": ', '{"id": "exported", "id": ', 1)


_key_written_twice.whole_line = True  # type: ignore[attr-defined]


def _encoded_twice(line: str) -> str:
    """The row as a JSON string holding it (`json.dumps` of a line already JSON)."""
    return json.dumps(line)


_encoded_twice.whole_line = True  # type: ignore[attr-defined]


def _rows_of(lines: list[str]) -> list:
    """The rows of the lines that are JSON (a cut-off line is left out: a
    dataset written anew as one document or table cannot hold it)."""
    rows = []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return rows


def _indented_array(lines: list[str]) -> list[str]:
    """The rows as one JSON array written with indentation (`json.dump(rows,
    file, indent=2)`), not JSON Lines."""
    return json.dumps(_rows_of(lines), indent=2).split("\n")


_indented_array.whole_file = True  # type: ignore[attr-defined]


def _indented_objects(lines: list[str]) -> list[str]:
    """Each row written with indentation, one after the other (`jq .`)."""
    return "\n".join(json.dumps(row, indent=2) for row in _rows_of(lines)).split("\n")


_indented_objects.whole_file = True  # type: ignore[attr-defined]


def _saved_as_utf16(lines: list[str]) -> list[str]:
    """The rows as they are, saved in UTF-16 (what Windows PowerShell 5 writes
    with `>`); an editor reads them as text, so the server is sent the same."""
    return lines


_saved_as_utf16.whole_file = True  # type: ignore[attr-defined]
_saved_as_utf16.encoding = "utf-16"  # type: ignore[attr-defined]


def _csv_table(lines: list[str]) -> list[str]:
    """The rows as a spreadsheet exports them: a CSV table of id, query and the
    expected paths joined by `;`."""
    out = io.StringIO()
    table = csv.writer(out, lineterminator="\n")
    table.writerow(["id", "query", "relevant"])
    for case in _rows_of(lines):
        try:
            relevant = case["expect"]["relevant"]
            table.writerow([case["id"], case["input"]["query"], ";".join(map(str, relevant)) if isinstance(relevant, list) else relevant])
        except (KeyError, TypeError):
            continue
    return out.getvalue().rstrip("\n").split("\n")


_csv_table.whole_file = True  # type: ignore[attr-defined]


# Variant -> (the code of its defect, what it writes on every row: on the row's
# object, or, marked ``whole_line``, on the line's text, or, marked
# ``whole_file``, the whole dataset written anew).
VARIANTS: dict[str, tuple[str, Rewrite | None]] = {
    "clean": ("", None),
    "dot-slash": ("RAG206", _paths(lambda path: "./" + path)),
    "backslash": ("RAG206", _paths(lambda path: path.replace("/", "\\"))),
    "extra-key": ("RAG004", _extra_key),
    "relevant-string": ("RAG004", _relevant_as_string),
    "topk-below-k": ("RAG207", _top_k_below_k),
    "unserved-corpus": ("RAG004", _unserved_corpus),
    "numeric-id": ("RAG004", _numeric_id),
    "integer-grades": ("", _integer_grades),
    "fraction-grades": ("RAG004", _fraction_grades),
    "objects-in-relevant": ("RAG004", _objects_in_relevant),
    "empty-corpora": ("RAG004", _empty_corpora),
    "repeated-value": ("RAG205", _repeated_value),
    "one-id": ("RAG202", _one_id),
    "misspelt-expect": ("RAG004", _misspelt_expect),
    "questions-only": ("RAG201", _questions_only),
    "absolute-paths": ("RAG203", _paths(lambda path: "/home/dev/repo/" + path)),
    "partly-elsewhere": ("RAG203", _partly_elsewhere),
    "python-values": ("RAG002", _python_values),  # type: ignore[dict-item]
    "comma-after": ("RAG002", _comma_after),  # type: ignore[dict-item]
    "array-rows": ("RAG004", _array_row),  # type: ignore[dict-item]
    "repeated-key": ("RAG003", _key_written_twice),  # type: ignore[dict-item]
    "encoded-twice": ("RAG004", _encoded_twice),  # type: ignore[dict-item]
    "indented-array": ("RAG002", _indented_array),  # type: ignore[dict-item]
    "indented-objects": ("RAG002", _indented_objects),  # type: ignore[dict-item]
    "csv-table": ("RAG002", _csv_table),  # type: ignore[dict-item]
    "utf-16": ("RAG002", _saved_as_utf16),  # type: ignore[dict-item]
}


# A variant whose defect comes with data of its own (a grade for every expected
# path) is weighed against the same data written right, not against the clean
# dataset, which is a third smaller: the anchor runs with it.
ANCHORS = {"fraction-grades": "integer-grades"}


def rewritten(lines: list[str], rewrite: Rewrite | None) -> list[str]:
    """The dataset's lines with ``rewrite`` applied to every row that is JSON
    (a cut-off line stays as it was)."""
    if rewrite is None:
        return lines
    if getattr(rewrite, "whole_file", False):
        return rewrite(lines)  # type: ignore[arg-type,return-value]
    out = []
    for line in lines:
        try:
            case = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if not (isinstance(case, dict) and isinstance(case.get("input"), dict)):
            out.append(json.dumps(case))
        elif getattr(rewrite, "whole_line", False):
            out.append(rewrite(json.dumps(case)))  # type: ignore[arg-type,func-returns-value]
        else:
            rewrite(case)
            out.append(json.dumps(case))
    return out


def check_figures(root: Path, code: str) -> dict[str, float]:
    """One `check` of the workspace: its time and what it found."""
    elapsed, output = timed([*RAG_LSP, "check", str(root), "--format", "json"], (0, 1))
    findings = json.loads(output)
    codes = Counter(finding["code"] for finding in findings)
    covered = sum(finding.get("covers", {}).get("findings", 1) for finding in findings if finding["code"] == code)
    return {
        "check_s": elapsed,
        "cause": codes.get(code, 0) if code else 0,
        "folded": sum(1 for finding in findings if finding["code"] == code and "covers" in finding) if code else 0,
        "covered": covered if code else 0,
        "others": sum(count for each, count in codes.items() if each != code),
        "codes": dict(codes),
    }


def measured_round(workload: Workload, name: str, lines: list[str], arguments: argparse.Namespace, round: int) -> dict:
    """One round of a dataset: `check` (in the first --repeat rounds) and a fresh
    server (in the first --server-runs), with the dataset written first."""
    encoding = getattr(VARIANTS[name][1], "encoding", "utf-8")
    (workload.root / DATASET).write_text("\n".join(lines) + "\n", encoding=encoding)
    figures: dict = {}
    if round < arguments.repeat:
        figures.update(check_figures(workload.root, VARIANTS[name][0]))
    if not arguments.skip_server and round < arguments.server_runs:
        variant = Workload(name, workload.root, "", workload.cases, workload.files, lines=list(lines))
        figures.update(server_figures(variant, arguments.edits, 1))
    return figures


def summarized(rounds: list[dict], anchors: list[dict]) -> dict:
    """A dataset's figures from its rounds (`check` the best, the server's the
    median) and, beside its anchor's rounds, the median of the ratios round by round."""
    checked = [figures for figures in rounds if "check_s" in figures]
    served = [figures for figures in rounds if "open_s" in figures]
    summary = dict(min(checked, key=lambda figures: figures["check_s"]))
    for key in ("open_s", "median_ms", "p95_ms", "memory_mb", "diagnostics"):
        if served:
            summary[key] = statistics.median(figures[key] for figures in served)
    ratios = {}
    for key in ("check_s", "open_s", "memory_mb"):
        pairs = [(ours[key], theirs[key]) for ours, theirs in zip(rounds, anchors) if key in ours and key in theirs]
        ratios[key] = statistics.median(ours / theirs for ours, theirs in pairs) if pairs else 1.0
    summary["ratios"] = ratios
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--server-runs", type=int, default=1)
    parser.add_argument("--skip-server", action="store_true")
    arguments = parser.parse_args()
    arguments.rounds = max(arguments.repeat, 0 if arguments.skip_server else arguments.server_runs)
    names = chosen_variants(parser, arguments.variants, VARIANTS)
    for name, anchor in ANCHORS.items():
        if name in names and anchor not in names:
            names.insert(names.index(name), anchor)
    compile_package()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="rag-lsp-foreign-") as folder:
        started = time.perf_counter()
        workload = tree(Path(folder) / "tree", cases=arguments.cases)
        clean = list(workload.lines)
        print(f"tree-20k: {workload.files:,} files, {workload.cases:,} cases; written in {time.perf_counter() - started:.0f} s", flush=True)
        # The suite scores 5 hits (its `k`); the topK variant asks for 3.
        (workload.root / ".punica" / "evals" / "bench.suite.yaml").write_text(SUITE.format(k=5), encoding="utf-8")
        anchors_lines = {anchor: rewritten(clean, VARIANTS[anchor][1]) for anchor in {"clean", *ANCHORS.values()} if anchor in names}
        for name in names:
            anchor = ANCHORS.get(name, "clean")
            lines = anchors_lines.get(name) or rewritten(clean, VARIANTS[name][1])
            rounds: list[dict] = []
            anchors: list[dict] = []
            for round in range(arguments.rounds):
                rounds.append(measured_round(workload, name, lines, arguments, round))
                # Each round of a variant is followed by one of its anchor: the
                # machine's speed drifts over minutes, a ratio taken round by round does not.
                if name != anchor:
                    anchors.append(measured_round(workload, anchor, anchors_lines[anchor], arguments, round))
            results[name] = figures = summarized(rounds, anchors)
            print(f"  {name}: {figures}", flush=True)
        shutil.rmtree(workload.root, ignore_errors=True)
    report(results)
    return 0


def report(results: dict[str, dict[str, float]]) -> None:
    print()
    print(f"{'variant':<20} {'cause':>6} {'covers':>8} {'others':>7} {'check':>7} {'÷anchor':>7} "
          f"{'open':>6} {'÷anchor':>7} {'edit p50':>9} {'edit p95':>9} {'peak RSS':>9} {'÷anchor':>7}")
    for name, figures in results.items():
        ratios = figures.get("ratios", {})
        # The findings of the defect's code the dataset holds without it (the
        # workload's own: a cut-off line is RAG002 too, a path written `./`
        # RAG206) are others, not the defect's, unless the defect's findings
        # took them in (a folded finding, a summary of paths that are elsewhere).
        code = VARIANTS[name][0]
        before = results["clean"]["codes"].get(code, 0) if code else 0
        folded = int(figures.get("folded", 0))
        raw = int(figures["cause"])
        cause = raw if raw <= before else folded + max(0, raw - folded - before)
        row = [
            f"{name:<20}",
            f"{cause:>6,}",
            f"{int(figures['covered']):>8,}",
            f"{int(figures['others']) + raw - cause:>7,}",
            f"{figures['check_s']:>6.2f}s",
            f"{ratios.get('check_s', 1.0):>6.2f}x",
        ]
        if "open_s" in figures:
            row += [
                f"{figures['open_s']:>5.2f}s",
                f"{ratios.get('open_s', 1.0):>6.2f}x",
                f"{figures['median_ms']:>7.1f}ms",
                f"{figures['p95_ms']:>7.1f}ms",
                f"{figures['memory_mb']:>7.0f}MB",
                f"{ratios.get('memory_mb', 1.0):>6.2f}x",
            ]
        print(" ".join(row))
    print("\ncause: the defect's findings (folded, and those of its code beyond the clean dataset's); covers: the findings they stand for")
    print("÷anchor: the median of the ratios round by round, each round of a variant followed by one of its anchor; "
          "the anchor is the clean dataset, except: " + "; ".join(f"{name} against {anchor}" for name, anchor in ANCHORS.items()))
    print("goals: a handful of findings for the cause, the others unchanged; check ≤ 1.5 s and ≤ 1.5x the anchor; "
          "open ≤ 1 s and ≤ 1.5x the anchor; edit p50 ≤ 10 ms; peak RSS ≤ 250 MB and ≤ 1.5x the anchor")


if __name__ == "__main__":
    raise SystemExit(main())
