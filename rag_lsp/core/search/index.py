"""The builtin target's index: the chunks of the corpus files and their vectors,
kept in memory and in the user's cache folder between processes.

Building is the costly part of a semantic run (every chunk through the model), so
an index is updated file by file: a file whose size and modification time are
those it was indexed with keeps its chunks and vectors; one whose content hash is
unchanged (touched, or checked out again) too; only new and changed files are
read, cut and embedded again.

**The cache.** ``$RAG_LSP_CACHE_DIR`` (tests set it), else
``platformdirs.user_cache_dir("rag-lsp")``, holds ``index-v3/<key>/``, where the
key hashes the workspace root, the corpora's globs, the chunking and the model's
identity (its files' paths, sizes and modification times): another option or
another model is another folder. In it:

* ``meta.json``: the key in full, when it was built, the vector size, and per
  file ``[path, size, mtime_ns, content hash, first row, rows]``, with the names
  and SHA-256 of the three arrays;
* ``chunks-<generation>.npy``: int32 ``(rows, 2)``, each chunk's first and last line;
* ``vectors-<generation>.npy``: int8 ``(rows, dimensions)``, the codes of the
  chunks' unit vectors, and ``scales-<generation>.npy``: float32 ``(rows,)``,
  their scales (see ``vectors.py``);
* ``terms-<generation>.npy``: uint16 (or int32, for a vocabulary past 65,534
  tokens) ``(rows, 128)``, each chunk's terms (see ``StaticModel.embed_chunks``),
  when the model gives them.

The folders of older formats (``index-v1/``, ``index-v2/``) are removed once an index of this
one is saved. Arrays are written first under a new generation and ``meta.json``
is replaced last, so a reader sees an old or a new index, never half of one. A cache whose
``meta.json`` is not one, whose key differs, whose arrays are missing, of the wrong
shape, or whose bytes do not hash to what ``meta.json`` says is thrown away and
rebuilt: it is never trusted.

A file is trusted by its size and modification time only when it was last
modified well before the index looked at it; a file written in the same moment
as the index (a filesystem that keeps whole seconds) is hashed again.

**Documents files.** A corpus given as a JSON Lines file of documents (one
``{"_id", "title", "text"}`` object per line, see :func:`read_document`) is
indexed as one file whose chunks are its documents: a document is the chunk of
its one line, its text the title and the text (never the JSON around them), its
vector its own (no context of a path or of the other documents). The index and
its cache need nothing else: the file's content hash keys its chunks as any
file's does, and a document's ``_id`` is read back from its line when a hit
names it (:meth:`IndexBuilder.document_id`).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy

from ..workspace.files import text_of
from ..reading.safefiles import Refused, open_regular, read_regular
from ..workspace.chunking import Chunking, line_ranges
from .vectors import QuantizedVectors, levels, normalize_rows

log = logging.getLogger(__name__)

CACHE_ENV = "RAG_LSP_CACHE_DIR"
# A meta.json larger than this is no index's (50,000 files take about 8 MB).
_META_MAX_BYTES = 256 * 1024 * 1024
FORMAT = 3
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
# What a model's terms of chunks are: their dtype, how many per chunk, and the
# highest id (the one that fills the places of a chunk with fewer).
TermsShape = tuple[numpy.dtype, int, int]
# What an index's ``embed`` gives for its chunks: their vectors, or those and their terms.
Embedded = numpy.ndarray | tuple[numpy.ndarray, numpy.ndarray]


class BuildCancelled(Exception):
    """The build was cancelled (its ``cancel`` event set): the index keeps what it had."""


class CacheDirError(ValueError):
    """``$RAG_LSP_CACHE_DIR`` names no folder that can be used; the message says why."""


def cache_root() -> Path:
    """Where indexes are cached: ``$RAG_LSP_CACHE_DIR``, else the user's cache
    folder. CacheDirError when the variable's ``~user`` names no user."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        try:
            return Path(configured).expanduser()
        except RuntimeError:
            raise CacheDirError(
                f"{CACHE_ENV}={configured!r} cannot be used: its {configured.split('/')[0]} names no user with a home folder"
            ) from None
    import platformdirs

    return Path(platformdirs.user_cache_dir("rag-lsp", appauthor=False))


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


def document_lines(text: str) -> list[str]:
    """The lines of a documents file: split at "\\n" only (a JSON string may
    hold U+2028 or a form feed, which ``str.splitlines`` would cut at)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_document(line: str) -> tuple[str, str] | None:
    """A line of a documents file as (its ``_id``, the text searched: its
    ``title`` and ``text``), or None when it is not a document: not a JSON
    object, no ``_id`` (a string, or an integer written as one), or neither
    title nor text holds a word."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    identifier = value.get("_id")
    if isinstance(identifier, int) and not isinstance(identifier, bool):
        identifier = str(identifier)
    if not isinstance(identifier, str) or not identifier:
        return None
    title, body = value.get("title"), value.get("text")
    parts = [part for part in (title, body) if isinstance(part, str) and part.strip()]
    if not parts:
        return None
    return identifier, "\n".join(parts)


def document_chunks(lines: list[str]) -> tuple[list[tuple[int, int]], list[str], dict[int, str]]:
    """The chunks of a documents file given as its lines (see document_lines):
    one per document, the range of its line, its text; and each document's id
    by its line."""
    ranges: list[tuple[int, int]] = []
    texts: list[str] = []
    ids: dict[int, str] = {}
    for number, line in enumerate(lines, 1):
        document = read_document(line)
        if document is None:
            continue
        ranges.append((number, number))
        texts.append(document[1])
        ids[number] = document[0]
    return ranges, texts, ids


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
        # The paths read as documents files (see the module's docstring).
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
            return [_document_text(lines, first) for first, _ in spans.tolist()]
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
                text = _document_text(lines, first)
            else:
                text = "\n".join(lines[first - 1 : last])
        return text if len(text) <= HIT_TEXT_CHARS else text[: HIT_TEXT_CHARS - 1] + "…"


# ---------------------------------------------------------------- a chunk in its file


# How much a chunk's vector leans towards the words of its file's path, and then
# towards its whole file (each a unit vector; the chunk's own is too).
PATH_WEIGHT = 0.3
FILE_WEIGHT = 1.0
# What the vectors of an index are: part of the cache's key, changed with them.
VECTORS = f"chunk+{PATH_WEIGHT}path+{FILE_WEIGHT}file"

_PATH_SPLIT = re.compile(r"[^0-9A-Za-z]+|(?<=[a-z])(?=[A-Z])")


def path_words(path: str) -> str:
    """The words of a workspace path, its extension left out: ``src/rateLimit/token_bucket.py``
    is "src rate Limit token bucket"."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return " ".join(word for word in _PATH_SPLIT.split(stem) if word)


def contextual(vectors: numpy.ndarray, path: numpy.ndarray) -> numpy.ndarray:
    """The vectors of a file's chunks, each in its context: moved towards the vector
    of the file's path (weight PATH_WEIGHT), then towards the mean of the file's
    chunks (FILE_WEIGHT), and scaled to length 1 again.

    A question asks what a passage is about, and a passage of a long file often
    does not say it: the heading, the module's name and the rest of the file do.
    Measured by ``benchmarks/chunking.py``, this context finds the file that answers
    a paraphrased question among the first three hits for a tenth to a sixth more
    questions, over prose, manual pages and code alike.
    """
    mixed = vectors + PATH_WEIGHT * path
    normalize_rows(mixed)
    whole = mixed.mean(axis=0)
    norm = numpy.linalg.norm(whole)
    if norm > 0:
        mixed += (FILE_WEIGHT / norm) * whole
        normalize_rows(mixed)
    return mixed.astype(numpy.float32, copy=False)


def _document_text(lines: list[str], line: int) -> str:
    """The text searched of the document on ``line`` (1-based) of a documents file's lines."""
    document = read_document(lines[line - 1]) if 0 < line <= len(lines) else None
    return document[1] if document is not None else ""


def _signature(files: list[FileEntry] | None) -> tuple | None:
    if files is None:
        return None
    return tuple((entry.path, entry.size, entry.mtime_ns, entry.digest) for entry in files)


def _join(parts: list[numpy.ndarray], dtype: Any, empty: tuple[int, ...]) -> numpy.ndarray:
    if not parts:
        return numpy.zeros(empty, dtype=dtype)
    return numpy.ascontiguousarray(numpy.concatenate(parts), dtype=dtype)


# ---------------------------------------------------------------- the cache


class IndexCache:
    """One index's folder in the cache (see the module's docstring)."""

    def __init__(self, folder: Path, key: dict[str, Any]) -> None:
        self.folder = folder
        self.key = key
        # The meta of the index as last read or written here (see renew).
        self._meta: dict[str, Any] | None = None

    @classmethod
    def for_key(cls, key: dict[str, Any], root: Path | None = None) -> IndexCache:
        material = json.dumps(key, sort_keys=True, ensure_ascii=False).encode("utf-8")
        name = hashlib.sha256(material).hexdigest()[:24]
        return cls((root or cache_root()) / f"index-v{FORMAT}" / name, key)

    @property
    def meta_path(self) -> Path:
        return self.folder / "meta.json"

    def load(self, dim: int, terms_shape: TermsShape | None = None) -> tuple[ChunkIndex | None, str | None]:
        """The cached index, or (None, why) when there is none or it cannot be
        trusted (why is None when there simply is none). ``terms_shape``: what
        the chunks' terms must be, when the model gives them."""
        try:
            raw = read_regular(self.meta_path, _META_MAX_BYTES)
        except Refused as error:
            if not os.path.lexists(self.meta_path):
                return None, None
            return None, f"the index cache cannot be read ({error}) and is built again"
        try:
            return self._read(raw, dim, terms_shape), None
        except RecursionError:
            self._meta = None
            log.info("the index cache %s is not used: its meta.json is nested too deep", self.folder)
            return None, "the index cache was damaged (its meta.json is nested too deep) and is built again"
        except Exception as error:  # noqa: BLE001 - whatever is wrong with a cache, it is a cache miss
            self._meta = None
            log.info("the index cache %s is not used: %s", self.folder, error)
            return None, f"the index cache was damaged ({error}) and is built again"

    def _read(self, raw: bytes, dim: int, terms_shape: TermsShape | None) -> ChunkIndex:
        self._meta = None
        meta = json.loads(raw)
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueError("not an index of this version")
        if meta.get("key") != self.key:
            raise ValueError("it is the index of other options")
        rows, built_ns = meta["rows"], meta["built_ns"]
        if meta.get("dim") != dim or not _is_int(rows) or not _is_int(built_ns) or rows < 0:
            raise ValueError("its sizes are not this model's")
        files: list[FileEntry] = []
        at = 0
        for item in meta["files"]:
            path, size, mtime_ns, digest, first_row, count = item
            # Exact types, tested inline: a cache of 20,000 files is read at every start.
            if (
                type(path) is not str
                or type(digest) is not str
                or type(size) is not int
                or type(mtime_ns) is not int
                or type(first_row) is not int
                or type(count) is not int
                or first_row != at
                or count < 0
            ):
                raise ValueError(f"its entry for {path!r} is not one")
            files.append(FileEntry(path, size, mtime_ns, digest, first_row, count))
            at += count
        if at != rows:
            raise ValueError("its files do not add up to its rows")
        lines = self._array(meta, "chunks", numpy.int32, (rows, 2))
        codes = self._array(meta, "vectors", numpy.int8, (rows, dim))
        scales = self._array(meta, "scales", numpy.float32, (rows,))
        if rows and (lines.min() < 1 or (lines[:, 1] < lines[:, 0]).any()):
            raise ValueError("its line ranges are not ones")
        top = levels(dim)
        if rows and (int(codes.min()) < -top or int(codes.max()) > top):
            raise ValueError("its vectors' codes are out of their range")
        if rows and not (numpy.isfinite(scales).all() and (scales >= 0).all()):
            raise ValueError("its vectors' scales are not ones")
        terms = None
        if "terms" in meta["arrays"]:
            if terms_shape is None:
                raise ValueError("it holds terms this model does not give")
            terms = self._array(meta, "terms", terms_shape[0], (rows, terms_shape[1]))
            if rows and int(terms.max()) > terms_shape[2]:
                raise ValueError("its terms are not this model's tokens")
        elif terms_shape is not None:
            raise ValueError("it holds no terms of its chunks")
        row_file = numpy.repeat(numpy.arange(len(files), dtype=numpy.int32), [entry.rows for entry in files]) if files else numpy.zeros(0, dtype=numpy.int32)
        self._meta = meta
        return ChunkIndex(files, row_file, lines, QuantizedVectors(codes, scales), built_ns, terms=terms)

    def _array(self, meta: dict, name: str, dtype: Any, shape: tuple[int, ...]) -> numpy.ndarray:
        file_name = meta["arrays"][name]
        if not isinstance(file_name, str) or "/" in file_name or "\\" in file_name or not file_name.endswith(".npy"):
            raise ValueError(f"it names no {name} file")
        # Hashed a block at a time, then read into its array from the same open
        # file: the index's memory holds the array, never a second copy of it.
        with open_regular(self.folder / file_name) as file:
            digest = hashlib.sha256()
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
            if digest.hexdigest() != meta["digests"][name]:
                raise ValueError(f"its {name} file does not hold what it was written with")
            file.seek(0)
            array = numpy.load(file, allow_pickle=False)
        if array.dtype != numpy.dtype(dtype) or array.shape != shape:
            raise ValueError(f"its {name} are not shaped as its meta says")
        return array

    def save(self, index: ChunkIndex, dim: int) -> str | None:
        """Write ``index``; why it could not be written, or None."""
        generation = uuid.uuid4().hex[:12]
        vectors = index.vectors if index.vectors is not None else QuantizedVectors.of(numpy.zeros((index.size, dim), dtype=numpy.float32))
        arrays: dict[str, str] = {}
        digests: dict[str, str] = {}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            saved = [("chunks", index.lines), ("vectors", vectors.codes), ("scales", vectors.scales)]
            if index.terms is not None:
                saved.append(("terms", index.terms))
            for name, array in saved:
                buffer = io.BytesIO()
                numpy.save(buffer, numpy.ascontiguousarray(array), allow_pickle=False)
                data = buffer.getvalue()
                file_name = f"{name}-{generation}.npy"
                _write(self.folder / file_name, data)
                arrays[name], digests[name] = file_name, hashlib.sha256(data).hexdigest()
            meta = {
                "format": FORMAT,
                "key": self.key,
                "built_ns": index.built_ns,
                "dim": dim,
                "rows": index.size,
                "files": [[e.path, e.size, e.mtime_ns, e.digest, e.first_row, e.rows] for e in index.files],
                "arrays": arrays,
                "digests": digests,
            }
            _write(self.meta_path, json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        except OSError as error:
            self._meta = None
            # The arrays written before the failure are of no index: not left behind.
            for file_name in arrays.values():
                try:
                    (self.folder / file_name).unlink()
                except OSError:
                    pass
            return f"the index could not be saved in {self.folder} ({error.strerror or error}): it is built again next time"
        self._meta = meta
        _forget_older_formats(self.folder.parent.parent)
        for stale in self.folder.glob("*.npy"):
            if stale.name not in arrays.values():
                try:
                    stale.unlink()
                except OSError:
                    pass
        return None


    def renew(self, built_ns: int) -> None:
        """Record that the index read or written here last was found as it is at
        ``built_ns`` (its files checked, none changed): only the meta is written
        again, so files that were too recent to trust then are trusted from now on."""
        if self._meta is None:
            return
        meta = {**self._meta, "built_ns": built_ns}
        try:
            _write(self.meta_path, json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        except OSError as error:
            log.info("the index cache %s could not be renewed: %s", self.folder, error)
            return
        self._meta = meta


def _forget_older_formats(root: Path) -> None:
    """Remove the indexes of older cache formats under ``root``: this version
    never reads them, and each may hold a hundred megabytes."""
    try:
        folders = [path for path in root.iterdir() if _FORMAT_FOLDER.fullmatch(path.name)]
    except OSError:
        return
    for folder in folders:
        if int(folder.name.removeprefix("index-v")) < FORMAT:
            shutil.rmtree(folder, ignore_errors=True)


# The cache folder of an index format (see IndexCache.for_key).
_FORMAT_FOLDER = re.compile(r"index-v[0-9]{1,6}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` at once: written beside it, then moved into place."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            temporary.unlink()
        except OSError:
            pass
        raise
