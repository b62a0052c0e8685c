"""Byte-pair tokenizers read from a ``tokenizer.json``, in plain Python and numpy.

The embedding models' tokenizers are files in the format of Hugging Face's
``tokenizers`` library. This package reads the kind the default model's is
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

Speed: a text is cut into pieces that no merge ever joins, and each piece is
merged on its own; pieces repeat, so each piece's ids are remembered and a
piece seen before costs a lookup. A batch of texts (an index's chunks) is
encoded in numpy, which runs without the interpreter's lock, beside the thread
that pools the vectors, as the ``tokenizers`` package's Rust does. Python's
own per-piece work (a regular expression's matches, a dictionary's lookups)
held the lock for the whole of the tokenizer's time, and cost twice as much.

Its modules, from the file to the ids:

* ``reading``: the ``tokenizer.json`` read (what it holds, what is refused),
  its merges turned into ids, or read back from the tables file beside it;
* ``writing``: that tables file written (``python -m
  rag_lsp.core.search.bytepairs TOKENIZER_JSON``);
* ``tokenizer``: :class:`BytePairTokenizer`, texts to ids;
* ``cutting``: how texts are cut into pieces, found from the merges;
* ``memo``: the pieces seen and their ids;
* ``symbols`` and ``merging``: a piece's characters as tokens, then merged;
* ``arrays`` and ``hashing``: numpy's helpers for runs laid end to end, and
  the hashes and the table that pieces and merges are found by.
"""

from __future__ import annotations

from .reading import Unsupported, tables_path
from .tokenizer import BytePairTokenizer
from .writing import tables_of, write_tables

__all__ = ["BytePairTokenizer", "Unsupported", "tables_of", "tables_path", "write_tables"]
