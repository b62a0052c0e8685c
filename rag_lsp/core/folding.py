"""One cause, one finding: the findings most rows of a dataset share, folded.

A dataset written by another tool usually carries one defect on every row, for
one cause: every path written `./src/a.py`, a key of the exporting tool on every
row, every case asking `topK: 3`. A hundred thousand copies of one finding hide
the findings that matter and say nothing the first one does not. So when the
findings of one code and one cause (see ``Finding.cause``) stand on most rows of
a dataset, they are reported once: at the first of them, saying how many rows
and lines they cover and the first few, the likely cause, and with one quick
fix that repairs every occurrence (where each has its fix). The folded finding
keeps every finding it stands for (``Finding.covers``): machine outputs list
their lines, and ``rag-lsp check --unfold`` prints each occurrence instead.
Rows that break the pattern keep their own findings.

Folding is a pure function of a file's findings and its row count, so a fresh
check and an edited dataset model fold alike.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from .findings import Finding, Fix, TextEdit
from .text import Range

# A cause folds when its findings stand on more than half of the rows, and on at
# least this many: below it, each finding is read as easily as a summary.
FOLD_FROM_ROWS = 20
# How many of the lines a folded finding covers its message names.
LINES_NAMED = 3


def folded_groups(counts: Iterable[tuple[tuple[str, str], int]], rows: int) -> set[tuple[str, str]]:
    """The (code, cause) pairs whose findings stand on enough of ``rows`` rows
    to fold, given how many lines each stands on."""
    least = max(FOLD_FROM_ROWS, rows // 2 + 1)
    return {key for key, lines in counts if lines >= least}


def fold(findings: list[Finding], rows: int, explain=None) -> list[Finding]:
    """``findings`` of one dataset (in position order) with those of each cause
    that stands on most of its ``rows`` rows folded into one finding, placed
    where the first of them is. ``explain(code, cause)`` gives the likely cause
    in words and the title of the fix of every occurrence (see Rule.folds)."""
    if rows < FOLD_FROM_ROWS or len(findings) < FOLD_FROM_ROWS:
        return findings
    lines: dict[tuple[str, str], set[int]] = defaultdict(set)
    for finding in findings:
        if finding.cause is not None:
            lines[(finding.code, finding.cause)].add(finding.range.start.line)
    folding = folded_groups(((key, len(held)) for key, held in lines.items()), rows)
    if not folding:
        return findings
    members: dict[tuple[str, str], list[Finding]] = {key: [] for key in folding}
    kept: list[Finding] = []
    first_at: dict[tuple[str, str], int] = {}
    for finding in findings:
        key = (finding.code, finding.cause)
        group = members.get(key) if finding.cause is not None else None  # type: ignore[arg-type]
        if group is None:
            kept.append(finding)
            continue
        if not group:
            first_at[key] = len(kept)  # type: ignore[index]
            kept.append(finding)  # replaced below by the folded finding
        group.append(finding)
    for key, group in members.items():
        kept[first_at[key]] = folded(group, len(lines[key]), rows, explain)
    return kept


def folded(members: list[Finding], lines: int, rows: int, explain=None) -> Finding:
    """The one finding that stands for ``members`` (one code, one cause, on
    ``lines`` of the dataset's ``rows`` rows), at the first of them."""
    first = members[0]
    assert first.cause is not None
    why, fix_title = explain(first.code, first.cause) if explain is not None else (None, None)
    named = covered_lines(members, LINES_NAMED)
    where = ", ".join(str(line + 1) for line in named) + (", …" if lines > len(named) else "")
    count = f"{len(members):,} findings on " if len(members) != lines else ""
    message = (
        f"{count}{lines:,} of the {rows:,} rows (lines {where}) share this finding: {first.message}. "
        f"{'Likely cause: ' + why + '. ' if why else ''}Reported once for the file; `rag-lsp check --unfold` lists every occurrence"
    )
    fixes: tuple[Fix, ...] = ()
    edits = [fix.edits for member in members for fix in member.fixes[:1]]
    if fix_title and len(edits) == len(members) and all(edits):
        fixes = (Fix(f"{fix_title} ({len(members):,} places)", _without_overlaps([edit for each in edits for edit in each]), every=True),)
    elif first.fixes:
        fixes = first.fixes[:1]
    return Finding(first.code, first.severity, first.range, message, first.path, fixes, first.related, None, first.cause, tuple(members))


def _without_overlaps(edits: list[TextEdit]) -> tuple[TextEdit, ...]:
    """The edits in position order, each once, none overlapping the one before
    (a client refuses a workspace edit whose edits overlap). The members' edits
    nearly always come in order already (each on its own finding's place): they
    are sorted only when they do not."""
    in_order = all(before.range.start <= after.range.start for before, after in zip(edits, edits[1:]))
    if not in_order:
        edits = sorted(set(edits), key=lambda edit: (edit.range.start, edit.range.end))
    result: list[TextEdit] = []
    end: Range | None = None
    for edit in edits:
        if end is not None and (edit.range.start < end.end or edit == result[-1]):
            continue
        result.append(edit)
        end = edit.range
    return tuple(result)


def covered_lines(members: Iterable[Finding], limit: int | None = None) -> list[int]:
    """The lines ``members`` (in position order) stand on, each once, in order;
    only the first ``limit`` of them, when given (the members are not all
    looked at: a folded finding names its first few lines)."""
    lines: list[int] = []
    for member in members:
        line = member.range.start.line
        if not lines or lines[-1] != line:
            if limit is not None and len(lines) == limit:
                break
            lines.append(line)
    return lines
