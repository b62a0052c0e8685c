"""A static model's files: where they are, what identifies them, and reading them.

The packaged wordllama model's files are in ``rag_lsp/model``; a model2vec
model's in a folder of the workspace. Safetensors files are read with numpy (a
JSON header, then the raw little-endian arrays: :func:`read_tensor`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy

from ...workspace.modelfiles import MODEL2VEC_FILES, WORDLLAMA, model2vec_problem

# The wordllama model's files, shipped in rag-lsp's own package (rag_lsp/model:
# where they come from, and their license).
_WORDLLAMA_FOLDER = Path(__file__).resolve().parent.parent.parent.parent / "model"
_WORDLLAMA_WEIGHTS = "l2_supercat_256.safetensors"
_WORDLLAMA_TOKENIZER = "l2_supercat_tokenizer.json"
_WORDLLAMA_TENSOR = "embedding.weight"

_MODEL2VEC_TENSOR = "embeddings"
# A safetensors header larger than this is not one (a real one is a few hundred bytes).
_MAX_HEADER = 1 << 24
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "<u2"}


class ModelError(Exception):
    """The model cannot be loaded; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ModelFiles:
    """Where a model's files are, and what identifies this version of them."""

    name: str
    weights: Path
    tokenizer: Path
    tensor: str
    # Changes whenever one of the files does: part of the index cache's key.
    identity: str


# ---------------------------------------------------------------- finding the files


def wordllama_files() -> ModelFiles:
    """The packaged wordllama model's files (rag_lsp/model)."""
    weights, tokenizer = _WORDLLAMA_FOLDER / _WORDLLAMA_WEIGHTS, _WORDLLAMA_FOLDER / _WORDLLAMA_TOKENIZER
    for path in (weights, tokenizer):
        if not path.is_file():
            raise ModelError(f"rag-lsp's default embedding model has no {path.name} (reinstall rag-lsp)")
    return ModelFiles(WORDLLAMA, weights, tokenizer, _WORDLLAMA_TENSOR, f"{WORDLLAMA}:{_stamp(weights)}:{_stamp(tokenizer)}")


def model2vec_files(folder: Path, name: str) -> ModelFiles:
    problem = model2vec_problem(folder)
    if problem is not None:
        raise ModelError(f"{name} is not a model2vec model folder: {problem} (one holds {', '.join(MODEL2VEC_FILES)})")
    weights, tokenizer = folder / "model.safetensors", folder / "tokenizer.json"
    config = folder / "config.json"
    return ModelFiles(
        name, weights, tokenizer, _MODEL2VEC_TENSOR, f"model2vec:{_stamp(config)}:{_stamp(weights)}:{_stamp(tokenizer)}"
    )


def _stamp(path: Path) -> str:
    status = path.stat()
    return f"{path.resolve().as_posix()}@{status.st_size}@{status.st_mtime_ns}"


# ---------------------------------------------------------------- reading the files


def check_config(path: Path) -> None:
    """ModelError unless ``path`` (a model2vec folder's config.json) holds a JSON object."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise ModelError(f"{_shown(path)} is nested too deep to be a model's config") from None
    except (OSError, ValueError) as error:
        raise ModelError(f"{_shown(path)} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ModelError(f"{_shown(path)} is not a JSON object")


def read_tensor(path: Path, name: str, shown: str | None = None) -> numpy.ndarray:
    """The 2-D tensor ``name`` of a safetensors file, as float32; ModelError when
    the file is not one, lacks the tensor, or holds values that are not finite
    (saying which file as ``shown``, by default its folder and name)."""
    shown = shown or _shown(path)
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            head = file.read(8)
            if len(head) < 8:
                raise ModelError(f"{shown} is not a safetensors file: it is {size} bytes long")
            length = int.from_bytes(head, "little")
            if length > min(size - 8, _MAX_HEADER):
                raise ModelError(f"{shown} is not a safetensors file{_pointer_hint(head)}")
            try:
                header = json.loads(file.read(length))
            except (ValueError, RecursionError):
                raise ModelError(f"{shown} is not a safetensors file: its header is not JSON") from None
            entry = header.get(name) if isinstance(header, dict) else None
            if not isinstance(entry, dict):
                held = ", ".join(sorted(key for key in header if key != "__metadata__")) if isinstance(header, dict) else ""
                raise ModelError(f"{shown} has no tensor {name!r}" + (f" (it holds {held})" if held else ""))
            dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
            if dtype not in _DTYPES:
                raise ModelError(f"{shown}: tensor {name!r} has the type {dtype!r}; float tensors (F32, F16, BF16, F64) are read")
            if (
                not isinstance(shape, list)
                or len(shape) != 2
                or not all(isinstance(n, int) and n > 0 for n in shape)
                or not isinstance(offsets, list)
                or len(offsets) != 2
                or not all(isinstance(n, int) for n in offsets)
            ):
                raise ModelError(f"{shown}: tensor {name!r} is not a table of one vector per token")
            count = shape[0] * shape[1]
            itemsize = numpy.dtype(_DTYPES[dtype]).itemsize
            begin, end = offsets
            if end - begin != count * itemsize or begin < 0 or 8 + length + end > size:
                raise ModelError(f"{shown}: tensor {name!r} does not fit in the file (it is cut short or damaged)")
            file.seek(8 + length + begin)
            raw = numpy.fromfile(file, dtype=_DTYPES[dtype], count=count)
    except OSError as error:
        raise ModelError(f"{shown} cannot be read: {error.strerror or error}") from None
    if raw.size != count:
        raise ModelError(f"{shown}: tensor {name!r} is cut short")
    if dtype == "BF16":
        table = (raw.astype(numpy.uint32) << 16).view(numpy.float32)
    else:
        table = raw.astype(numpy.float32)
    table = table.reshape(shape)
    if not numpy.isfinite(table).all():
        raise ModelError(f"{shown}: tensor {name!r} holds values that are not numbers")
    return table


def _pointer_hint(head: bytes) -> str:
    # A model committed with Git LFS and checked out without it is a small text file.
    return ": it is a Git LFS pointer (run `git lfs pull`)" if head.startswith(b"version ") else ""


def shown_of(files: ModelFiles, path: Path) -> str:
    """A model file as its messages name it: a workspace model's by the folder the
    targets config names (`models/lfs/model.safetensors`), the packaged one's by
    its folder in the package."""
    return _shown(path) if files.name == WORDLLAMA else f"{files.name.rstrip('/')}/{path.name}"


def _shown(path: Path) -> str:
    return path.name if path.parent.name in ("", ".") else f"{path.parent.name}/{path.name}"
