"""A static model loaded once per process, from its files.

Tokenizers of the default model's kind (byte-pair merges) are read with
rag-lsp's own reader (``bytepairs``: the same ids, in Python), and those of
other kinds with the ``tokenizers`` package where it is installed (in Rust,
offline by construction: only ``Tokenizer.from_file`` is used; it is not a
dependency of rag-lsp, and a model that needs it says so). A model is loaded once per
process and shared read-only by every target that names it: loading costs a
third of a second, and the server keeps one target per workspace.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import numpy

from ...workspace.modelfiles import WORDLLAMA
from ..bytepairs import BytePairTokenizer, Unsupported
from .files import ModelError, ModelFiles, check_config, read_tensor, shown_of
from .model import StaticModel

# The wordllama vocabulary's tokens of whitespace alone: runs of "▁" (a space) and
# the byte tokens of tabs and line ends.
_WHITESPACE_TOKENS = tuple("▁" * n for n in range(1, 33)) + ("<0x09>", "<0x0A>", "<0x0B>", "<0x0C>", "<0x0D>", "<0x20>")


_loaded: dict[str, StaticModel] = {}
_loading = threading.Lock()


def load(files: ModelFiles) -> StaticModel:
    """The model of ``files``, loaded once per process (per version of its files)."""
    with _loading:
        model = _loaded.get(files.identity)
        if model is None:
            model = _loaded[files.identity] = _load(files)
        return model


def _load(files: ModelFiles) -> StaticModel:
    table = read_tensor(files.weights, files.tensor, shown_of(files, files.weights))
    tokenizer = _tokenizer(files)
    skip: set[int] = set()
    if files.name == WORDLLAMA:
        _weigh_by_rarity(table, tokenizer)
    else:
        # model2vec leaves the unknown token out of the mean: it carries no meaning.
        unknown = _unknown_token(tokenizer)
        if unknown is not None:
            skip.add(unknown)
        check_config(files.weights.parent / "config.json")
    return StaticModel(files, table, tokenizer, frozenset(skip))


def _tokenizer(files: ModelFiles) -> Any:
    """The model's tokenizer: rag-lsp's own (``bytepairs``) for the kind it
    reads, which the default model's is; for another kind, the ``tokenizers``
    package's where it is installed."""
    shown = shown_of(files, files.tokenizer)
    try:
        return BytePairTokenizer.from_file(files.tokenizer)
    except OSError as error:
        raise ModelError(f"{shown} cannot be read: {error.strerror or error}") from None
    except ValueError as error:
        raise ModelError(f"{shown} is not a tokenizer: {error}") from None
    except Unsupported as unsupported:
        reason = unsupported.message
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ModelError(
            f"{shown} is a tokenizer that rag-lsp reads only with the `tokenizers` package ({reason}):"
            " pip install tokenizers"
        ) from None
    try:
        tokenizer = Tokenizer.from_file(str(files.tokenizer))
    except Exception as error:  # noqa: BLE001 - tokenizers raises plain Exceptions for bad files
        raise ModelError(f"{shown} is not a tokenizer: {error}") from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _weigh_by_rarity(table: numpy.ndarray, tokenizer: Any) -> None:
    """Scale each token's vector of the wordllama table by how rare the token is,
    in place; a text's vector, the mean of its tokens' vectors, then leans on its
    rare words rather than on "the", "of" and indentation.

    The table follows the order of its vocabulary, whose byte-pair merges were
    learned most frequent first, so a token's position is its frequency rank; the
    weight is log(2 + rank), the Zipf weighting model2vec gives the tokens of the
    models it distills (so a model2vec folder's table, weighted already, is left
    as it is). Tokens of whitespace alone (runs of "▁", newlines) weigh nothing.
    """
    rows = table.shape[0]
    weights = numpy.log(numpy.arange(rows, dtype=numpy.float32) + 2)
    for token in _WHITESPACE_TOKENS:
        position = tokenizer.token_to_id(token)
        if position is not None and position < rows:
            weights[position] = 0.0
    table *= weights[:, None]


def _unknown_token(tokenizer: Any) -> int | None:
    if isinstance(tokenizer, BytePairTokenizer):
        return tokenizer.token_to_id(tokenizer.unk_token) if tokenizer.unk_token is not None else None
    try:
        model = json.loads(tokenizer.to_str()).get("model", {})
    except (ValueError, AttributeError):
        return None
    token = model.get("unk_token") if isinstance(model, dict) else None
    return tokenizer.token_to_id(token) if isinstance(token, str) else None
