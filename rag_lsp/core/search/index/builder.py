"""Keeping an index of a set of workspace files up to date.

Building is the costly part of a semantic run (every chunk through the model), so
an index is updated file by file: a file whose size and modification time are
those it was indexed with keeps its chunks and vectors; one whose content hash is
unchanged (touched, or checked out again) too; only new and changed files are
read, cut and embedded again.

A file is trusted by its size and modification time only when it was last
modified well before the index looked at it; a file written in the same moment
as the index (a filesystem that keeps whole seconds) is hashed again.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy

from ...workspace.chunking import Chunking, line_ranges
from ...workspace.files import text_of
from ..vectors import QuantizedVectors
from .cache import IndexCache
from .chunks import ChunkIndex, FileEntry, TermsShape
from .context import contextual, path_words
from .documents import document_chunks, document_lines, document_text

# A file modified this close to (or after) the moment it was looked at may change
# again within its modification time's granularity: its content is hashed again.
# A time with a fraction of a second comes from a file system that keeps times
# to the tick of the system's clock (milliseconds at most); a time to the whole
# second, from one that may keep them to one or two seconds (FAT, HFS+, ext3).
_RACY_NS = 2_000_000_000
_RACY_FINE_NS = 100_000_000
_SECOND_NS = 1_000_000_000
# The longest text a hit carries; a longer chunk (a whole file) is cut, marked "…".
HIT_TEXT_CHARS = 4000
# Files whose lines are kept for the text of hits, at most.
_LINES_KEPT = 64

Progress = Callable[[int, int], None]
# What an index's ``embed`` gives for its chunks: their vectors, or those and their terms.
Embedded = numpy.ndarray | tuple[numpy.ndarray, numpy.ndarray]


class BuildCancelled(Exception):
    """The build was cancelled (its ``cancel`` event set): the index keeps what it had."""


@dataclass
class Outcome:
    """What a refresh did, for the target's notes."""

    index: ChunkIndex
    changed: int = 0
    # Why the cache was not read or written, when that happened.
    cache_problem: str | None = None


class FileReader:
    """A corpus file's text, or None when it holds none to index."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes

    def read(self, relative: str) -> tuple[bytes, str] | None:
        try:
            with open(os.path.join(self.root, relative), "rb") as file:
                # Asked for what the file holds, and a byte more (that tells a file
                # past the limit): a read of max_bytes + 1 allocates that much for
                # every file, and reading 20,000 small files took three times as long.
                expected = min(os.fstat(file.fileno()).st_size, self.max_bytes) + 1
                data = file.read(expected)
                if len(data) == expected and expected <= self.max_bytes:
                    data += file.read(self.max_bytes + 1 - expected)  # it grew since
        except OSError:
            return None
        if len(data) > self.max_bytes:
            return data, ""
        return data, text_of(data)


def digest_of(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass
class _Segment:
    """One file of a refresh: the rows it keeps from the previous index, or its new chunks."""

    path: str
    size: int
    mtime_ns: int
    digest: str
    kept: FileEntry | None = None
    ranges: list[tuple[int, int]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    vectors: QuantizedVectors | None = None
    terms: numpy.ndarray | None = None


class IndexBuilder:
    """Keeps a :class:`ChunkIndex` of a set of workspace files up to date.

    ``embed`` turns chunk texts into ``dim``-sized unit vectors, or into those
    and the chunks' terms (see StaticModel.embed_chunks; None: the index holds
    no vectors); ``cache`` is where the index persists (None: in memory only).
    """

    # New chunks embedded together (a group, of at most EMBED_FILES files, so
    # that progress moves every few hundred files). The next group is begun
    # (the model's tokenizer thread cuts its texts, see
    # StaticModel.embed_chunks_soon) before the last is finished (pooled on
    # this thread), so the tokenizer, most of a build's time, never waits for
    # the files to be read nor for the pooling.
    EMBED_BATCH = 1024
    EMBED_FILES = 256

    def __init__(
        self,
        root: Path,
        chunking: Chunking,
        max_bytes: int,
        embed: Callable[[list[str]], Embedded] | None = None,
        dim: int = 0,
        cache: IndexCache | None = None,
        embed_paths: Callable[[list[str]], numpy.ndarray] | None = None,
        terms_shape: TermsShape | None = None,
        embed_soon: Callable[[list[str]], Callable[[], Embedded]] | None = None,
        documents: frozenset[str] = frozenset(),
    ) -> None:
        self.root = root
        # The paths read as documents files (see .documents).
        self.documents = documents
        # Per documents file: the content hash it was read with, and its
        # documents' ids by line.
        self._ids: dict[str, tuple[str, dict[int, str]]] = {}
        self.chunking = chunking
        self.reader = FileReader(root, max_bytes)
        self.embed = embed
        # ``embed`` begun, and finished by the function it returns (see
        # StaticModel.embed_chunks_soon): the next group of new chunks is begun
        # before the last is finished.
        self.embed_soon = embed_soon
        # Embeds the words of files' paths, for the context of their chunks (see contextual).
        self.embed_paths = embed_paths
        self.dim = dim
        self.cache = cache
        # What the chunks' terms are, when ``embed`` gives them (see TermsShape).
        self.terms_shape = terms_shape
        self.index: ChunkIndex | None = None
        # What the cache holds now, file by file: whether it must be written again.
        self._saved: tuple | None = None
        self._lines: dict[str, list[str]] = {}

    def refresh(
        self, paths: Iterable[str], progress: Progress | None = None, with_texts: bool = False, cancel: Any = None
    ) -> Outcome:
        """The index of ``paths`` as they are now; only new and changed files are
        read, and only changed ones embedded. ``progress(done, total)`` counts the
        files indexed (read, and embedded when they changed) of those to read;
        ``with_texts`` keeps every chunk's text (for keyword search).
        Once ``cancel`` (a threading.Event) is set, raises BuildCancelled and keeps the
        index it had."""
        started = time.time_ns()
        cache_problem = None
        previous = self.index
        previous_signature = None
        if previous is None and self.cache is not None:
            previous, cache_problem = self.cache.load(self.dim, self.terms_shape)
            self._saved = previous_signature = _signature(previous.files) if previous is not None else None
        held = previous.by_path() if previous is not None else {}
        built_ns = previous.built_ns if previous is not None else 0
        folder = str(self.root) + os.sep
        stats: list[tuple[str, int, int, FileEntry | None]] = []
        for relative in paths:
            try:
                status = os.stat(folder + relative)
            except OSError:
                continue
            entry = held.get(relative)
            mtime_ns = status.st_mtime_ns
            fresh = (
                entry is not None
                and entry.size == status.st_size
                and entry.mtime_ns == mtime_ns
                and mtime_ns < built_ns - (_RACY_FINE_NS if mtime_ns % _SECOND_NS else _RACY_NS)
            )
            stats.append((relative, status.st_size, mtime_ns, entry if fresh else None))
        to_read = sum(1 for *_, kept in stats if kept is None)
        self._lines.clear()
        segments: list[_Segment] = []
        pending: list[_Segment] = []
        pending_rows = 0
        changed = done = 0
        # The group of files whose chunks are being embedded, and how many files it holds.
        embedding: tuple[Callable[[], None], int] | None = None

        def embed_pending() -> None:
            # The pending files' chunks begin, then the group before them is finished.
            nonlocal embedding, done, pending, pending_rows
            begun = (self._embed_soon(pending), len(pending)) if pending else None
            pending, pending_rows = [], 0
            if embedding is not None:
                finish, files = embedding
                finish()
                done += files
                if progress is not None:
                    progress(done, to_read)
            embedding = begun
        for relative, size, mtime_ns, kept in stats:
            if kept is not None:
                segments.append(_Segment(relative, size, mtime_ns, kept.digest, kept))
                continue
            if cancel is not None and cancel.is_set():
                raise BuildCancelled("the run was cancelled while the index was being built")
            read = self.reader.read(relative)
            if read is None:
                done += 1  # gone, or not readable: not indexed
                continue
            data, text = read
            digest = digest_of(data) if text else ""
            old = held.get(relative)
            if old is not None and old.digest == digest:
                segments.append(_Segment(relative, size, mtime_ns, digest, old))  # touched, not changed
                done += 1
                if progress is not None:
                    progress(done, to_read)
                continue
            changed += 1
            if relative in self.documents:
                file_lines = document_lines(text)
                ranges, chunk_texts, ids = document_chunks(file_lines)
                self._ids[relative] = (digest, ids)
            else:
                file_lines = text.splitlines()
                ranges = line_ranges(file_lines, self.chunking) if text else []
                chunk_texts = ["\n".join(file_lines[a - 1 : b]) for a, b in ranges]
            segment = _Segment(relative, size, mtime_ns, digest, None, ranges, chunk_texts)
            segments.append(segment)
            if ranges and len(self._lines) < _LINES_KEPT:
                self._lines[relative] = file_lines
            if self.embed is not None and ranges:
                pending.append(segment)
                pending_rows += len(ranges)
                if pending_rows >= self.EMBED_BATCH or len(pending) >= self.EMBED_FILES:
                    embed_pending()
            else:
                done += 1
                if progress is not None:
                    progress(done, to_read)
        while pending or embedding is not None:
            embed_pending()
        removed = len(held.keys() - {segment.path for segment in segments})
        signature = tuple((s.path, s.size, s.mtime_ns, s.digest) for s in segments)
        if (
            previous is not None
            and not changed
            and not removed
            and signature == (previous_signature or _signature(previous.files))
            and (not with_texts or previous.texts is not None)
        ):
            # Nothing changed: the same index, its files now known to be as they were.
            index = previous
            index.built_ns = started
            if to_read and self.cache is not None and self.embed is not None and signature == self._saved:
                # Files too recent to trust by their size and time were read and
                # found as they were: the cache says so, or every start reads them.
                self.cache.renew(started)
        else:
            index = self._assemble(segments, previous, started, with_texts)
        self.index = index
        if self.cache is not None and self.embed is not None and signature != self._saved:
            problem = self.cache.save(index, self.dim)
            if problem is None:
                self._saved = signature
            cache_problem = cache_problem or problem
        return Outcome(index, changed + removed, cache_problem)

    def load_cached(self) -> ChunkIndex | None:
        """The index the cache holds, as it is (no file read, nothing embedded),
        kept as this builder's index so that the next refresh updates it; None
        when there is none or it cannot be trusted."""
        if self.cache is None:
            return None
        index, _ = self.cache.load(self.dim, self.terms_shape)
        if index is not None:
            self.index = index
            self._saved = _signature(index.files)
        return index

    def _embed_soon(self, segments: list[_Segment]) -> Callable[[], None]:
        """Begin embedding the chunks of ``segments``; the function returned
        finishes it (each segment then holds its vectors, and terms)."""
        embed = self.embed
        assert embed is not None
        texts = [text for segment in segments for text in segment.texts]
        chunks = self.embed_soon(texts) if self.embed_soon is not None else lambda: embed(texts)

        def finish() -> None:
            embedded = chunks()
            vectors, terms = embedded if isinstance(embedded, tuple) else (embedded, None)
            paths = self.embed_paths([path_words(segment.path) for segment in segments]) if self.embed_paths else None
            at = 0
            for number, segment in enumerate(segments):
                own = vectors[at : at + len(segment.texts)]
                # A document is a passage of its own: no file around it gives it context.
                in_context = paths is not None and segment.path not in self.documents
                segment.vectors = QuantizedVectors.of(contextual(own, paths[number]) if in_context else own)
                if terms is not None:
                    segment.terms = terms[at : at + len(segment.texts)]
                at += len(segment.texts)

        return finish

    def _assemble(self, segments: list[_Segment], previous: ChunkIndex | None, started: int, with_texts: bool) -> ChunkIndex:
        files: list[FileEntry] = []
        row_file: list[numpy.ndarray] = []
        lines: list[numpy.ndarray] = []
        vectors: list[QuantizedVectors] = []
        terms: list[numpy.ndarray] | None = []
        texts: list[str] | None = [] if with_texts else None
        rows = 0
        for segment in segments:
            kept = segment.kept
            if kept is not None:
                assert previous is not None
                count = kept.rows
                span = slice(kept.first_row, kept.first_row + count)
                if count:
                    lines.append(previous.lines[span])
                    if self.embed is not None and previous.vectors is not None:
                        vectors.append(previous.vectors[span])
                    if terms is not None and previous.terms is not None:
                        terms.append(previous.terms[span])
                    else:
                        terms = None
                    if texts is not None:
                        texts.extend(self._texts_of(segment.path, previous.lines[span]))
            else:
                count = len(segment.ranges)
                if count:
                    lines.append(numpy.array(segment.ranges, dtype=numpy.int32))
                    if segment.vectors is not None:
                        vectors.append(segment.vectors)
                    if terms is not None and segment.terms is not None:
                        terms.append(segment.terms)
                    else:
                        terms = None
                    if texts is not None:
                        texts.extend(segment.texts)
            if count:
                row_file.append(numpy.full(count, len(files), dtype=numpy.int32))
            files.append(FileEntry(segment.path, segment.size, segment.mtime_ns, segment.digest, rows, count))
            rows += count
        index = ChunkIndex(files, _join(row_file, numpy.int32, (0,)), _join(lines, numpy.int32, (0, 2)), None, started, texts)
        if self.embed is not None:
            index.vectors = QuantizedVectors.join(vectors, self.dim)
            # Every chunk's terms, or none (a model that gives none). An index of
            # no chunk holds none of them, as the cache then reads it.
            if terms:
                index.terms = numpy.ascontiguousarray(numpy.concatenate(terms))
            elif terms is not None and self.terms_shape is not None:
                index.terms = numpy.zeros((0, self.terms_shape[1]), dtype=self.terms_shape[0])
        return index

    def _texts_of(self, relative: str, spans: numpy.ndarray) -> list[str]:
        lines = self.file_lines(relative)
        if relative in self.documents:
            return [document_text(lines, first) for first, _ in spans.tolist()]
        return ["\n".join(lines[first - 1 : last]) for first, last in spans.tolist()]

    def document_id(self, entry: FileEntry, line: int) -> str:
        """The ``_id`` of the document on ``line`` of a documents file (read
        once per content; "" when the line holds no document any more)."""
        held = self._ids.get(entry.path)
        if held is None or held[0] != entry.digest:
            read = self.reader.read(entry.path)
            lines = document_lines(read[1]) if read is not None else []
            held = self._ids[entry.path] = (entry.digest, document_chunks(lines)[2])
        return held[1].get(line, "")

    def _split(self, relative: str, text: str) -> list[str]:
        return document_lines(text) if relative in self.documents else text.splitlines()

    def file_lines(self, relative: str) -> list[str]:
        """A file's lines as they are on disk now (for the text of its hits)."""
        held = self._lines.get(relative)
        if held is None:
            read = self.reader.read(relative)
            held = self._split(relative, read[1]) if read is not None else []
            if len(self._lines) >= _LINES_KEPT:
                self._lines.pop(next(iter(self._lines)))
            self._lines[relative] = held
        return held

    def chunk_text(self, index: ChunkIndex, row: int, cached: bool = True) -> str:
        """The text of a row's chunk of ``index``, cut to :data:`HIT_TEXT_CHARS`;
        ``cached=False`` reads its file without the cache of file lines (which
        only one thread may use)."""
        if index.texts is not None:
            text = index.texts[row]
        else:
            entry = index.files[int(index.row_file[row])]
            first, last = index.lines[row].tolist()
            if cached:
                lines = self.file_lines(entry.path)
            else:
                read = self.reader.read(entry.path)
                lines = self._split(entry.path, read[1]) if read is not None else []
            if entry.path in self.documents:
                text = document_text(lines, first)
            else:
                text = "\n".join(lines[first - 1 : last])
        return text if len(text) <= HIT_TEXT_CHARS else text[: HIT_TEXT_CHARS - 1] + "…"


def _signature(files: list[FileEntry] | None) -> tuple | None:
    if files is None:
        return None
    return tuple((entry.path, entry.size, entry.mtime_ns, entry.digest) for entry in files)


def _join(parts: list[numpy.ndarray], dtype: Any, empty: tuple[int, ...]) -> numpy.ndarray:
    if not parts:
        return numpy.zeros(empty, dtype=dtype)
    return numpy.ascontiguousarray(numpy.concatenate(parts), dtype=dtype)
