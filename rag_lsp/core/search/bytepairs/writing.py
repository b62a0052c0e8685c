"""The tables file of a ``tokenizer.json`` written (``python -m
rag_lsp.core.search.bytepairs TOKENIZER_JSON``, as the default model's is):
each merge's token ids and how texts are cut, with the SHA-256 of the file
they were made from, so that a start reads them instead of turning the merges
into ids again (see reading.tables_beside, which reads them back).

The cutting is taken from the tokenizer the file makes, so that the tables
hold what reading the file gives.
"""

from __future__ import annotations

import hashlib
import json
import operator
from pathlib import Path
from typing import Any

import numpy
import orjson

from .reading import merges_of, tables_path
from .tokenizer import BytePairTokenizer


def tables_of(value: Any, source: bytes) -> dict[str, numpy.ndarray]:
    """The tables of a ``tokenizer.json`` (its bytes ``source``, its value
    ``value``): each merge's left, right and made token ids (the made ones as
    steps from the one before, which compress to nearly nothing), how texts are
    cut, and the file's SHA-256. Numpy arrays only, read back without
    unpickling anything."""
    made = BytePairTokenizer.from_json(value)
    vocab = value["model"]["vocab"]
    lefts, rights = merges_of(value["model"].get("merges", []))
    ids = [numpy.fromiter(map(vocab.__getitem__, tokens), dtype=numpy.int64, count=len(lefts)) for tokens in (lefts, rights, list(map(operator.add, lefts, rights)))]
    meta = {"source_sha256": hashlib.sha256(source).hexdigest(), "groups": made.groups}
    return {
        "meta": numpy.array(orjson.dumps(meta).decode("utf-8")),
        "left": ids[0].astype(numpy.int32),
        "right": ids[1].astype(numpy.int32),
        "made_steps": numpy.diff(ids[2], prepend=0).astype(numpy.int32),
    }


def write_tables(tokenizer: Path) -> Path:
    """Write the tables file of ``tokenizer`` (see tables_of); its path."""
    source = tokenizer.read_bytes()
    target = tables_path(tokenizer)
    with open(target, "wb") as out:
        numpy.savez_compressed(out, **tables_of(json.loads(source.decode("utf-8")), source))
    return target
