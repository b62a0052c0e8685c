"""How the builtin target cuts a file into the chunks it searches and answers.

```yaml
chunking: {unit: lines, size: 60, overlap: 12}  # windows of 60 lines, 12 shared with the next
chunking: {unit: file}                           # one chunk per file
```

A chunk is a range of 1-based lines, both ends included; its hit ``id`` is
``path#L<first>-<last>``, or the path alone when the unit is the file. Windows
start every ``size - overlap`` lines, and the last one ends at the file's last
line: a file of 100 lines in windows of 60 with 12 shared is lines 1–60 and 49–100.
Windows holding only blank lines are left out: there is nothing in them to find.

The default, windows of 60 lines sharing 12, is measured by
``benchmarks/chunking.py``: paraphrased questions over prose (the Python language
reference, 48 questions), over code (the standard library, 50) and over manual
pages of command-line tools (68), the right file among the first three hits. By
meaning (with the nearest chunks ranked again token by token), windows of 40
and 60 lines find it most often (0.77 on the reference, 0.90 on code, 0.75–0.76
on manual pages), windows of 10 and 20 lines and whole files less often (0.67–0.74
on the reference), and windows of 80 lines lose on code and manual pages (0.84,
0.69): a window must hold enough of a passage for its vector to say what the
passage is about, and a whole file is not a passage a person reads as a hit.
Each chunk's vector also carries its file's context (``index.contextual``), which
is what lets a window of a long file be found by what the file is about. The
overlap, a fifth of the window, keeps a passage cut by a window's edge whole in
one of the two windows.

Between 40 and 60 lines, 60 cuts a workspace into fewer chunks: its index is
built faster and each query scans less. Windows of 20 lines cut it into three
times as many: over 20,000 files (``benchmarks/index.py``) the first index took
38.8 s instead of 27–35 and a query 10.4 ms instead of 2, past what a workspace
of that size is promised (30 s, 5 ms). A team whose files answer in short
passages can choose ``size: 20`` and compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

LINES = "lines"
FILE = "file"
UNITS = (LINES, FILE)
DEFAULT_SIZE = 60
DEFAULT_OVERLAP = 12
# A window larger than this is a whole file in all but name, and its vector an
# average over so many words that it finds nothing in particular.
MAX_SIZE = 10_000
# The most windows one line may fall in: an overlap close to the size would make
# windows start every line or so, and a file be read size / (size - overlap) times.
MAX_WINDOWS_PER_LINE = 10


class ChunkingError(ValueError):
    """A ``chunking`` value that cannot be used; the message says why."""


@dataclass(frozen=True)
class Chunking:
    unit: str = LINES
    size: int = DEFAULT_SIZE
    overlap: int = DEFAULT_OVERLAP

    @classmethod
    def from_config(cls, value: Any) -> Chunking:
        """The chunking a target's ``chunking`` option names (None: the default)."""
        if value is None:
            return cls()
        if not isinstance(value, dict):
            raise ChunkingError("`chunking` must be a mapping, e.g. {unit: lines, size: 60, overlap: 12} or {unit: file}")
        unknown = sorted(str(key) for key in value if key not in ("unit", "size", "overlap"))
        if unknown:
            raise ChunkingError(f"`chunking` has no option {', '.join(map(repr, unknown))}; it takes unit, size and overlap")
        unit = value.get("unit", LINES)
        if unit not in UNITS:
            raise ChunkingError(f"`chunking.unit` must be `lines` or `file`, not {unit!r}")
        if unit == FILE:
            if "size" in value or "overlap" in value:
                raise ChunkingError("`chunking: {unit: file}` takes no `size` or `overlap`: the whole file is one chunk")
            return cls(FILE, 0, 0)
        written = value.get("size", DEFAULT_SIZE)
        size = _whole(written)
        if size is None or not 1 <= size <= MAX_SIZE:
            raise ChunkingError(f"`chunking.size` must be a whole number of lines from 1 to {MAX_SIZE:,}, not {written!r}")
        written = value.get("overlap", size // 5)
        overlap = _whole(written)
        if overlap is None or not 0 <= overlap < size:
            raise ChunkingError(f"`chunking.overlap` must be a whole number of lines from 0 to size − 1 ({size - 1}), not {written!r}")
        problem = overlap_problem(size, overlap)
        if problem is not None:
            raise ChunkingError(problem)
        return cls(LINES, size, overlap)

    def describe(self) -> str:
        return "whole files" if self.unit == FILE else f"{self.size} lines, {self.overlap} shared"

    def as_config(self) -> dict[str, Any]:
        return {"unit": FILE} if self.unit == FILE else {"unit": LINES, "size": self.size, "overlap": self.overlap}


def max_overlap(size: int) -> int:
    """The largest overlap windows of ``size`` lines may have (see MAX_WINDOWS_PER_LINE)."""
    return size - -(-size // MAX_WINDOWS_PER_LINE)


def overlap_problem(size: int, overlap: int) -> str | None:
    """Why windows of ``size`` lines sharing ``overlap`` would cost too much, or None."""
    if 0 <= overlap < size and overlap > max_overlap(size):
        return (
            f"`overlap` ({overlap:,}) leaves windows of {size:,} lines starting every {size - overlap:,} lines: each line "
            f"would be read in {-(-size // (size - overlap)):,} chunks; keep `overlap` at most {max_overlap(size):,} "
            f"(a line in at most {MAX_WINDOWS_PER_LINE} chunks)"
        )
    return None


def _whole(value: Any) -> int | None:
    """A whole number as the targets schema reads one (JSON Schema's integers:
    20 and 20.0 alike, which `rag-lsp check` accepts), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def line_ranges(lines: list[str], chunking: Chunking) -> list[tuple[int, int]]:
    """The chunks of a file given as its lines: (first, last) 1-based, both included."""
    count = len(lines)
    if count == 0:
        return []
    if chunking.unit == FILE:
        return [(1, count)] if any(line.strip() for line in lines) else []
    size, step = chunking.size, chunking.size - chunking.overlap
    ranges: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + size, count)
        if any(line.strip() for line in lines[start:end]):
            ranges.append((start + 1, end))
        if end >= count:
            return ranges
        start += step


def chunk_ids(paths: Sequence[str], firsts: Sequence[int], lasts: Sequence[int], chunking: Chunking) -> list[str]:
    """Hits' ``id``: ``path#L<first>-<last>``, or the path for a whole file (a
    case's hits at a time: a run makes a million of them)."""
    if chunking.unit == FILE:
        return list(paths)
    return [f"{path}#L{first}-{last}" for path, first, last in zip(paths, firsts, lasts)]
