"""Byte-pair tokenizers read from a ``tokenizer.json``, in plain Python.

The embedding models' tokenizers are files in the format of Hugging Face's
``tokenizers`` library. This module reads the kind the default model's is
(Llama's: a normalizer that writes "▁" before a text and for each space, no
pre-tokenizer, byte-pair merges with byte tokens for characters the vocabulary
lacks) and gives, for any text, the ids that library gives for it as rag-lsp
calls it, ``Tokenizer.encode(text, add_special_tokens=False).ids``: so the
post-processor (which adds "<s>"), padding, truncation and the decoder are not
read. What it reads, it reads as that library does:

* added tokens are found in the raw text first, leftmost and then longest, and
  each stretch of text between them is normalized and tokenized on its own;
* normalizers: ``Prepend`` (before a non-empty text), ``Replace`` of a string,
  and a ``Sequence`` of them;
* pre-tokenizer: none (a stretch of text is one word);
* model: ``BPE`` with its ``unk_token``, ``fuse_unk``, ``byte_fallback`` and
  ``ignore_merges``; merges by rank, the lowest first and the leftmost of equal
  ones.

A file that uses anything else raises :class:`Unsupported`, saying what.

Speed: a text is cut into pieces that no merge ever joins (see _cutting:
checked on the merges when the file is read; for Llama's, "▁" and a run of
letters, a run of punctuation, one digit or one CJK character), and each
piece is merged on its own; pieces repeat (``self``, ``return``, indentation,
``(``), so each piece's ids are remembered and a piece seen before costs one
lookup.

Turning the file's merges into the table of ranks and finding how to cut texts
is a tenth of a second in Python, most of a warm start's model loading: for a
file with a ``.tables.npz`` beside it (written by ``python -m
rag_lsp.core.search.bytepairs TOKENIZER_JSON``, as the default model's is), the
merges are read from it as arrays of token ids, with the cutting, once its
SHA-256 of the file says it was made from this very file.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import operator
import re
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import numpy
import orjson

# Llama's mark for a space, which its normalizer writes.
SPACE_MARK = "\u2581"
_BYTE_TOKENS = frozenset(f"<0x{byte:02X}>" for byte in range(256))
# Pieces remembered at most (about 200 bytes each), and the longest remembered
# (a longer one is a line of data, seen once); the memo is emptied when full.
_MEMO_SIZE = 1 << 17
_MEMO_LONGEST = 256
# A piece of at most this many characters is merged by looking for its best
# pair afresh after each merge, a longer one with a queue of its pairs.
_FEW_SYMBOLS = 48
# Above any merge's number (see BytePairTokenizer._ranks).
_NO_MERGE = 1 << 128
_ADDED_TOKEN_FLAGS = ("single_word", "lstrip", "rstrip")


class Unsupported(Exception):
    """The tokenizer file uses something this module does not implement."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BytePairTokenizer:
    """Texts to token ids, as ``tokenizers`` encodes them without special tokens."""

    def __init__(
        self,
        vocab: dict[str, int],
        merges: tuple[list[str], list[str]],
        *,
        unk_token: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
        normalizers: list[Callable[[str], str]] | None = None,
        added_tokens: dict[str, int] | None = None,
        tables: Any = None,
    ) -> None:
        """``tables``: the arrays of a tables file made from the same file (see
        write_tables), which stand for ``merges``."""
        self._vocab = vocab
        self._normalizers = normalizers or []
        self._added_ids = dict(added_tokens or {})
        self._added = None
        if self._added_ids:
            # Longest first: at one place, the longest added token is found.
            longest_first = sorted(self._added_ids, key=len, reverse=True)
            self._added = re.compile("|".join(map(re.escape, longest_first)))
        if unk_token is not None and unk_token not in vocab:
            raise ValueError(f"its unknown token {unk_token!r} is not in its vocabulary")
        self.unk_token = unk_token
        self._unk_id = vocab[unk_token] if unk_token is not None else None
        self._fuse_unk = fuse_unk
        self._ignore_merges = ignore_merges
        self._byte_ids: list[int | None] | None = None
        if byte_fallback:
            self._byte_ids = [vocab.get(f"<0x{byte:02X}>") for byte in range(256)]
        # A pair of ids (left * stride + right) -> its merge's rank * stride + the
        # merged id (so the lower rank is the lower number); a pair listed twice
        # keeps its last rank, as the library's map does.
        self._stride = stride = max(vocab.values(), default=0) + 1
        if tables is not None:
            self._ranks, self._pieces = _from_arrays(tables, stride)
            self._symbols_of: dict[str, list[int]] = {}
            self._memo: dict[str, list[int]] = {}
            self._memo_lock = threading.Lock()
            return
        lefts, rights = merges
        made = list(map(operator.add, lefts, rights))
        left_ids, right_ids, made_ids = (list(map(vocab.get, tokens)) for tokens in (lefts, rights, made))
        if None in left_ids or None in right_ids or None in made_ids:
            at, missing = next((at, token) for at, merge in enumerate(zip(lefts, rights, made)) for token in merge if token not in vocab)
            raise ValueError(f"its merge {lefts[at]!r} + {rights[at]!r} needs {missing!r}, which is not in its vocabulary")
        self._ranks: dict[int, int] = dict(
            zip(
                [left * stride + right for left, right in zip(left_ids, right_ids)],  # type: ignore[operator]
                [rank * stride + merged for rank, merged in enumerate(made_ids)],  # type: ignore[operator]
            )
        )
        # The tokens of more than one character that merges take and none makes.
        taken, made_set = set(left_ids) | set(right_ids), set(made_ids)
        unmade = [token for token, token_id in vocab.items() if len(token) > 1 and token_id in taken and token_id not in made_set]
        self._pieces = _cutting(lefts, rights, unmade, self._byte_ids, self._unk_id, fuse_unk)
        self._symbols_of: dict[str, list[int]] = {}
        self._memo: dict[str, list[int]] = {}
        self._memo_lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path) -> BytePairTokenizer:
        """The tokenizer of a ``tokenizer.json``: OSError if it cannot be read,
        ValueError if it is not a tokenizer, Unsupported if it is one of a kind
        this module does not read. Its tables are read from the tables file
        beside it when that was made from this very file (see tables_path)."""
        data = Path(path).read_bytes()
        tables = _tables_of(Path(path), data)
        if tables is not None:
            try:
                return cls.from_json(orjson.loads(data), tables)
            except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, re.error):
                pass  # tables that do not fit: the file is read as if there were none
        try:
            value = json.loads(data.decode("utf-8"))
        except RecursionError:
            raise ValueError("it is nested too deep") from None
        except UnicodeDecodeError:
            raise ValueError("it is not UTF-8 text") from None
        return cls.from_json(value)

    @classmethod
    def from_json(cls, value: Any, tables: Any = None) -> BytePairTokenizer:
        """The tokenizer of a ``tokenizer.json``'s value; ``tables``: the arrays of
        its tables file, which stand for its merges (see write_tables)."""
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
        return cls(
            vocab,
            _merges(model.get("merges", [])) if tables is None else ([], []),
            unk_token=unk_token,
            fuse_unk=bool(model.get("fuse_unk", False)),
            byte_fallback=bool(model.get("byte_fallback", False)),
            ignore_merges=bool(model.get("ignore_merges", False)),
            normalizers=_normalizers(value.get("normalizer")),
            added_tokens=_added_tokens(value.get("added_tokens") or []),
            tables=tables,
        )

    def token_to_id(self, token: str) -> int | None:
        found = self._added_ids.get(token)
        return found if found is not None else self._vocab.get(token)

    def get_vocab(self) -> dict[str, int]:
        return {**self._vocab, **self._added_ids}

    @property
    def cuts(self) -> bool:
        """Whether a text is cut into pieces merged one by one (see _cutting)."""
        return self._pieces is not None

    # ------------------------------------------------------------ encoding

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """Each text's ids (a text holding half of a character raises UnicodeEncodeError)."""
        return [self.encode(text) for text in texts]

    def encode(self, text: str) -> list[int]:
        if self._added is None or not self._added.search(text):
            return self._stretch(text)
        ids: list[int] = []
        start = 0
        for found in self._added.finditer(text):
            ids += self._stretch(text[start : found.start()])
            ids.append(self._added_ids[found.group()])
            start = found.end()
        ids += self._stretch(text[start:])
        return ids

    def _stretch(self, text: str) -> list[int]:
        """The ids of text between added tokens: normalized, then merged."""
        for normalize in self._normalizers:
            text = normalize(text)
        if not text:
            return []
        if self._ignore_merges:
            whole = self._vocab.get(text)
            if whole is not None:
                return [whole]
        if self._pieces is None:
            return self._piece(text)
        memo = self._memo
        ids: list[int] = []
        for piece in self._pieces.findall(text):
            found = memo.get(piece)
            ids += found if found is not None else self._piece(piece)
        return ids

    def _piece(self, piece: str) -> list[int]:
        found = self._memo.get(piece)
        if found is not None:
            return found
        ids = self._merged(self._symbols(piece))
        if len(piece) <= _MEMO_LONGEST:
            with self._memo_lock:
                if len(self._memo) >= _MEMO_SIZE:
                    self._memo.clear()
                self._memo[piece] = ids
        return ids

    def _symbols(self, word: str) -> list[int]:
        """A word's characters as ids: each its own token, else its UTF-8 bytes'
        tokens (byte fallback), else the unknown token (runs of unknown
        characters as one with ``fuse_unk``; a pending one is written after the
        byte tokens that follow it, as the library does), else nothing."""
        vocab = self._vocab
        symbols: list[int] = []
        unknown = 0  # unknown tokens pending
        for character in word:
            token_id = vocab.get(character)
            if token_id is not None:
                if unknown:
                    symbols.append(self._unk_id)  # type: ignore[arg-type]
                    unknown = 0
                symbols.append(token_id)
                continue
            if self._byte_ids is not None:
                codes = self._symbols_of.get(character)
                if codes is None:
                    found = [self._byte_ids[byte] for byte in character.encode("utf-8")]
                    codes = [] if None in found else found  # type: ignore[assignment]
                    self._symbols_of[character] = codes
                if codes:
                    symbols += codes
                    continue
            if self._unk_id is not None:
                if unknown and not self._fuse_unk:
                    symbols.append(self._unk_id)
                unknown = 1
        if unknown:
            symbols.append(self._unk_id)  # type: ignore[arg-type]
        return symbols

    def _merged(self, symbols: list[int]) -> list[int]:
        """``symbols`` merged pair by pair, the pair of the lowest rank first and
        the leftmost of equal ones, as the library's queue of merges does."""
        if len(symbols) < 2:
            return symbols
        ranks, stride, none = self._ranks, self._stride, _NO_MERGE
        ids = list(symbols)
        if len(ids) <= _FEW_SYMBOLS:
            # Few symbols: the best pair found afresh after each merge (no queue).
            pairs = [ranks.get(left * stride + right, none) for left, right in zip(ids, ids[1:])]
            while pairs:
                best = min(pairs)
                if best == none:
                    break
                at = pairs.index(best)  # the leftmost
                merged = best % stride
                ids[at : at + 2] = [merged]
                del pairs[at]
                if at < len(pairs):
                    pairs[at] = ranks.get(merged * stride + ids[at + 1], none)
                if at > 0:
                    pairs[at - 1] = ranks.get(ids[at - 1] * stride + merged, none)
            return ids
        count = len(ids)
        following = list(range(1, count + 1))
        following[-1] = -1
        preceding = list(range(-1, count - 1))
        alive = [True] * count
        queue = []
        for at in range(count - 1):
            merge = ranks.get(ids[at] * stride + ids[at + 1])
            if merge is not None:
                queue.append((merge, at))
        heapq.heapify(queue)
        while queue:
            merge, at = heapq.heappop(queue)
            if not alive[at]:
                continue
            right = following[at]
            if right < 0 or ranks.get(ids[at] * stride + ids[right]) != merge:
                continue  # this pair has changed since it was queued
            ids[at] = merged = merge % stride
            alive[right] = False
            after = following[right]
            following[at] = after
            if after >= 0:
                preceding[after] = at
                merge = ranks.get(merged * stride + ids[after])
                if merge is not None:
                    heapq.heappush(queue, (merge, at))
            before = preceding[at]
            if before >= 0:
                merge = ranks.get(ids[before] * stride + merged)
                if merge is not None:
                    heapq.heappush(queue, (merge, before))
        return [token_id for token_id, kept in zip(ids, alive) if kept]


def _cutting(
    lefts: list[str], rights: list[str], unmade: list[str], byte_ids: list[int | None] | None, unk_id: int | None, fuse_unk: bool
) -> re.Pattern[str] | None:
    """What cuts a text into pieces that the merges never join, so that merging
    each piece on its own gives the ids of merging the whole; None if none does.

    Two characters side by side are never joined when no token that a merge
    makes holds them side by side. The characters that merged tokens hold side
    by side fall into a few groups (Latin letters; Cyrillic ones; punctuation,
    "_" and "\\r"; ...): a piece is a run of "▁" and then a run of one group,
    or one character of no group (a digit, a CJK character, a line end). Each
    pair that a merged token holds is checked to stay within one piece.

    That holds for characters that are tokens; one that is not becomes its
    bytes' tokens, which must then merge with nothing, or the unknown token,
    which must then not be fused with the unknown character after it, nor be
    written after the byte tokens that follow it; and with no unknown token, it
    is left out, and the characters on either side of it may merge."""
    if not (_BYTE_TOKENS.isdisjoint(lefts) and _BYTE_TOKENS.isdisjoint(rights)):
        return None
    if not ((byte_ids is not None and None not in byte_ids) or (byte_ids is None and unk_id is not None and not fuse_unk)):
        return None
    # The pairs of characters side by side in merged tokens: where each merge
    # joins its two tokens, and within those of them that no merge makes.
    pairs = set(map(operator.add, map(operator.itemgetter(-1), lefts), map(operator.itemgetter(0), rights)))
    for token in unmade:
        pairs.update(token[at : at + 2] for at in range(len(token) - 1))
    group: dict[str, str] = {}

    def root(character: str) -> str:
        while group.setdefault(character, character) != character:
            group[character] = group[group[character]]
            character = group[character]
        return character

    for first, second in pairs:
        if SPACE_MARK not in (first, second):
            group[root(first)] = root(second)
    members: dict[str, list[str]] = {}
    for character in list(group):
        members.setdefault(root(character), []).append(character)
    # The largest groups first, alike ones in the order of their characters: the
    # same pattern in every process (the groups are disjoint, so their order
    # changes no piece, but the tables file keeps the pattern's text).
    groups = sorted((sorted(chars) for chars in members.values()), key=lambda chars: (-len(chars), chars))
    runs = ["[" + "".join(map(re.escape, chars)) + "]+" for chars in groups]
    pieces = re.compile(f"{SPACE_MARK}*(?:{'|'.join(runs + ['.'])})", re.DOTALL)
    if any(len(pieces.findall(pair)) != 1 for pair in pairs):
        return None  # a merged token holds "▁" after another character
    return pieces


def tables_path(tokenizer: Path) -> Path:
    """The tables file of a ``tokenizer.json`` (see write_tables)."""
    return tokenizer.with_name(tokenizer.stem + ".tables.npz")


def tables_of(value: Any, source: bytes) -> dict[str, numpy.ndarray]:
    """The tables of a ``tokenizer.json`` (its bytes ``source``, its value
    ``value``): each merge's left, right and made token ids (the made ones as
    steps from the one before, which compress to nearly nothing), how texts are
    cut, and the file's SHA-256. Numpy arrays only, read back without
    unpickling anything."""
    made = BytePairTokenizer.from_json(value)
    vocab = value["model"]["vocab"]
    lefts, rights = _merges(value["model"].get("merges", []))
    ids = [numpy.fromiter(map(vocab.__getitem__, tokens), dtype=numpy.int64, count=len(lefts)) for tokens in (lefts, rights, list(map(operator.add, lefts, rights)))]
    meta = {"source_sha256": hashlib.sha256(source).hexdigest(), "pieces": made._pieces.pattern if made._pieces is not None else None}
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


def _tables_of(tokenizer: Path, source: bytes) -> dict[str, Any] | None:
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


def _from_arrays(tables: dict[str, Any], stride: int) -> tuple[dict[int, int], re.Pattern[str] | None]:
    """The table of ranks and the cutting of a tokenizer, from its tables
    (see tables_of): as BytePairTokenizer.__init__ makes them from the merges."""
    left, right, steps = (numpy.asarray(tables[name], dtype=numpy.int64) for name in ("left", "right", "made_steps"))
    if not (len(left) == len(right) == len(steps)) or (len(left) and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= stride)):
        raise ValueError("its tables are not of its vocabulary")
    made = numpy.cumsum(steps)
    if len(made) and (made.min() < 0 or made.max() >= stride):
        raise ValueError("its tables are not of its vocabulary")
    ranks = dict(zip((left * stride + right).tolist(), (numpy.arange(len(made), dtype=numpy.int64) * stride + made).tolist()))
    pattern = tables["meta"]["pieces"]
    return ranks, re.compile(pattern, re.DOTALL) if pattern is not None else None


def _merges(value: Any) -> tuple[list[str], list[str]]:
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


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(f"wrote {write_tables(Path(argument))}")
