"""What an index holds: its files, and the chunks (rows) of each with their vectors."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy

from ..vectors import QuantizedVectors

# What a model's terms of chunks are: their dtype, how many per chunk, and the
# highest id (the one that fills the places of a chunk with fewer).
TermsShape = tuple[numpy.dtype, int, int]


@dataclass(slots=True)
class FileEntry:
    path: str
    size: int
    mtime_ns: int
    # Content hash; "" for a file that holds no text to index (binary, not UTF-8, too large).
    digest: str
    first_row: int
    rows: int


@dataclass
class ChunkIndex:
    """Chunks (rows) of the indexed files, in path order, and their vectors."""

    files: list[FileEntry] = field(default_factory=list)
    # Per row: its file's position in ``files``, its first and last line (1-based).
    row_file: numpy.ndarray = field(default_factory=lambda: numpy.zeros(0, dtype=numpy.int32))
    lines: numpy.ndarray = field(default_factory=lambda: numpy.zeros((0, 2), dtype=numpy.int32))
    # One vector per row, coded (see vectors.py); None when no model embeds the chunks.
    vectors: QuantizedVectors | None = None
    # When the files were looked at (time.time_ns()).
    built_ns: int = 0
    # Chunk texts by row, when a keyword search needs them all.
    texts: list[str] | None = None
    # Per row, its chunk's terms (see StaticModel.embed_chunks), when the model gives them.
    terms: numpy.ndarray | None = None

    @property
    def size(self) -> int:
        return int(self.row_file.shape[0])

    def by_path(self) -> dict[str, FileEntry]:
        return {entry.path: entry for entry in self.files}
