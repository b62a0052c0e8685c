"""The index kept in the user's cache folder between processes.

``$RAG_LSP_CACHE_DIR`` (tests set it), else
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
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import numpy

from ...reading.safefiles import Refused, open_regular, read_regular
from ..vectors import QuantizedVectors, levels
from .chunks import ChunkIndex, FileEntry, TermsShape

# The index's messages are logged under the name of its package.
log = logging.getLogger(__package__)

CACHE_ENV = "RAG_LSP_CACHE_DIR"
# A meta.json larger than this is no index's (50,000 files take about 8 MB).
_META_MAX_BYTES = 256 * 1024 * 1024
FORMAT = 3


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
