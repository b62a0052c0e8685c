"""A ``tokenizer.json`` read into what a BytePairTokenizer is made of, and its
merges into ids: from the file's own merges, or from the tables file beside it.

The file is read as the ``tokenizers`` package reads it, for what this package
implements (see the package's docstring): a BPE model and its options, its
normalizers, its added tokens; anything else raises :class:`Unsupported`,
saying what. Turning the merges into ids and finding how texts are cut (see
cutting) is a tenth of a second in Python, most of a warm start's model
loading; a tables file made from this very file (its SHA-256 says so: see
writing) holds both as arrays, read in a fraction of that time.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from pathlib import Path
from typing import Any, Callable

import numpy
import orjson

from .cutting import cutting

_ADDED_TOKEN_FLAGS = ("single_word", "lstrip", "rstrip")


class Unsupported(Exception):
    """The tokenizer file uses something this package does not implement."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def settings_of(value: Any, tables: Any = None) -> dict[str, Any]:
    """The arguments of BytePairTokenizer for a ``tokenizer.json``'s value;
    with ``tables`` (the arrays of its tables file), its merges are not read."""
    if not isinstance(value, dict):
        raise ValueError("it is not a JSON object")
    model = value.get("model")
    if not isinstance(model, dict):
        raise ValueError("it has no model")
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise Unsupported(f"its model is {kind or 'of no type'}, not BPE")
    for option in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(option):
            raise Unsupported(f"its BPE model has a {option}")
    if model.get("dropout") not in (None, 0, 0.0):
        raise Unsupported("its BPE model has dropout")
    if value.get("pre_tokenizer") is not None:
        kind = value["pre_tokenizer"].get("type") if isinstance(value["pre_tokenizer"], dict) else None
        raise Unsupported(f"it has a pre-tokenizer ({kind})")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(isinstance(token_id, int) and token_id >= 0 for token_id in vocab.values()):
        raise ValueError("its model has no vocabulary of token ids")
    unk_token = model.get("unk_token")
    if unk_token is not None and not isinstance(unk_token, str):
        raise ValueError("its unknown token is not a string")
    # In the order the constructor's arguments were read in (so a file with
    # more than one fault is told the same first one).
    return {
        "vocab": vocab,
        "merges": merges_of(model.get("merges", [])) if tables is None else ([], []),
        "unk_token": unk_token,
        "fuse_unk": bool(model.get("fuse_unk", False)),
        "byte_fallback": bool(model.get("byte_fallback", False)),
        "ignore_merges": bool(model.get("ignore_merges", False)),
        "normalizers": _normalizers(value.get("normalizer")),
        "added_tokens": _added_tokens(value.get("added_tokens") or []),
        "tables": tables,
    }


def merges_of(value: Any) -> tuple[list[str], list[str]]:
    """The left and the right tokens of the merges, in rank order, as the file
    writes them: "left right" strings, or [left, right] pairs."""
    if not isinstance(value, list):
        raise ValueError("its merges are not a list")
    if not value:
        return [], []
    if all(type(merge) is str for merge in value) and set(map(str.count, value, itertools.repeat(" "))) <= {1}:
        tokens = " ".join(value).split(" ")  # each merge holds one space
        return tokens[0::2], tokens[1::2]
    for merge in value:
        if not (isinstance(merge, str) and merge.count(" ") == 1) and not (
            isinstance(merge, list) and len(merge) == 2 and all(isinstance(token, str) for token in merge)
        ):
            raise ValueError(f"its merge {merge!r} is not a pair of tokens")
    pairs = [merge.split(" ") if isinstance(merge, str) else merge for merge in value]
    return [left for left, _ in pairs], [right for _, right in pairs]


def _normalizers(value: Any) -> list[Callable[[str], str]]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise ValueError("its normalizer is not a JSON object")
    kind = value.get("type")
    if kind == "Sequence":
        steps = value.get("normalizers")
        if not isinstance(steps, list):
            raise ValueError("its Sequence normalizer has no list of normalizers")
        return [step for inner in steps for step in _normalizers(inner)]
    if kind == "Prepend" and isinstance(value.get("prepend"), str):
        prefix = value["prepend"]
        return [lambda text: prefix + text if text else text]
    if kind == "Replace":
        pattern, content = value.get("pattern"), value.get("content")
        if not isinstance(pattern, dict) or "String" not in pattern:
            raise Unsupported("its Replace normalizer replaces a regular expression")
        old = pattern["String"]
        if not isinstance(old, str) or not old or not isinstance(content, str):
            raise ValueError("its Replace normalizer is not a string and its replacement")
        return [lambda text: text.replace(old, content)]
    raise Unsupported(f"it has a {kind} normalizer")


def _added_tokens(value: Any) -> dict[str, int]:
    if not isinstance(value, list):
        raise ValueError("its added tokens are not a list")
    added = {}
    for token in value:
        if not isinstance(token, dict) or not isinstance(token.get("content"), str) or not isinstance(token.get("id"), int):
            raise ValueError("an added token of it has no content and id")
        if token.get("normalized"):
            raise Unsupported(f"its added token {token['content']!r} is matched after normalizing")
        flags = [flag for flag in _ADDED_TOKEN_FLAGS if token.get(flag)]
        if flags:
            raise Unsupported(f"its added token {token['content']!r} is {' and '.join(flags)}")
        if token["content"]:
            added[token["content"]] = token["id"]
    return added


def from_merges(
    vocab: dict[str, int], merges: tuple[list[str], list[str]], byte_ids: list[int | None] | None, unk_id: int | None, fuse_unk: bool
) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, list[str] | None]:
    """Each merge's left, right and made ids, and how texts are cut (see
    cutting), from the merges' tokens."""
    lefts, rights = merges
    made_tokens = list(map(operator.add, lefts, rights))
    left_ids, right_ids, made_ids = (list(map(vocab.get, tokens)) for tokens in (lefts, rights, made_tokens))
    if None in left_ids or None in right_ids or None in made_ids:
        at, missing = next((at, token) for at, merge in enumerate(zip(lefts, rights, made_tokens)) for token in merge if token not in vocab)
        raise ValueError(f"its merge {lefts[at]!r} + {rights[at]!r} needs {missing!r}, which is not in its vocabulary")
    left, right, made = (numpy.array(ids, dtype=numpy.int64) for ids in (left_ids, right_ids, made_ids))
    # The tokens of more than one character that merges take and none makes.
    taken, made_set = set(left_ids) | set(right_ids), set(made_ids)
    unmade = [token for token, token_id in vocab.items() if len(token) > 1 and token_id in taken and token_id not in made_set]
    return left, right, made, cutting(lefts, rights, unmade, byte_ids, unk_id, fuse_unk)


def tables_path(tokenizer: Path) -> Path:
    """The tables file of a ``tokenizer.json`` (see writing.write_tables)."""
    return tokenizer.with_name(tokenizer.stem + ".tables.npz")


def tables_beside(tokenizer: Path, source: bytes) -> dict[str, Any] | None:
    """The arrays of the tables file beside ``tokenizer`` (its bytes are
    ``source``), when there is one made from these very bytes; None otherwise
    (no tables file, a stale or damaged one: the file itself is read)."""
    tables = tables_path(tokenizer)
    if not tables.is_file():
        return None
    try:
        with numpy.load(tables, allow_pickle=False) as arrays:
            read = {name: arrays[name] for name in ("meta", "left", "right", "made_steps")}
        read["meta"] = orjson.loads(str(read["meta"][()]))
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return None
    return read if read["meta"].get("source_sha256") == hashlib.sha256(source).hexdigest() else None


def from_tables(tables: dict[str, Any], stride: int) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, list[str] | None]:
    """Each merge's left, right and made ids, and how texts are cut, from a
    tokenizer's tables (see writing.tables_of): as from_merges finds them from
    the merges; ``stride``: above every id of its vocabulary."""
    left, right, steps = (numpy.asarray(tables[name], dtype=numpy.int64) for name in ("left", "right", "made_steps"))
    if not (len(left) == len(right) == len(steps)) or (len(left) and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= stride)):
        raise ValueError("its tables are not of its vocabulary")
    made = numpy.cumsum(steps)
    if len(made) and (made.min() < 0 or made.max() >= stride):
        raise ValueError("its tables are not of its vocabulary")
    groups = tables["meta"]["groups"]
    if groups is not None and not (isinstance(groups, list) and all(isinstance(group, str) for group in groups)):
        raise ValueError("its tables' groups are not strings")
    return left, right, made, groups
