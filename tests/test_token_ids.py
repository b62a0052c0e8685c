"""The tokenizer as the embedding model calls it (``embedding.TokenIds``) gives
the same token ids as the packaged tokenizer itself, on every kind of text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp.core.search import embedding

# Slow: the tokenizer is held to the tokenizers package on whole files.
pytestmark = pytest.mark.slow

tokenizers = pytest.importorskip("tokenizers")

REPOSITORY = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def packaged_tokenizer():
    try:
        files = embedding.wordllama_files()
    except embedding.ModelError as error:
        pytest.skip(error.message)
    return tokenizers.Tokenizer.from_file(str(files.tokenizer))


@pytest.fixture(scope="module")
def token_ids(packaged_tokenizer):
    # A tokenizer of its own: TokenIds takes over the tokenizer it is given.
    return embedding.TokenIds(tokenizers.Tokenizer.from_file(str(embedding.wordllama_files().tokenizer)))


def reference_ids(tokenizer, texts):
    return [encoding.ids for encoding in tokenizer.encode_batch(texts, add_special_tokens=False)]


def test_the_packaged_tokenizer_takes_the_quicker_path(token_ids):
    """The packaged tokenizer has spaces marked outside it and each distinct line tokenized once."""
    # Without it the equality tests below would compare the tokenizer with itself.
    assert token_ids.marks_spaces_itself
    assert token_ids.cuts_at_lines


def test_texts_that_share_lines_get_the_tokenizers_own_ids(packaged_tokenizer, token_ids):
    """Texts that share lines, blank lines and line ends get the ids the tokenizer gives each whole."""
    # Windows of one file share lines, files share lines, and a line may start a text or follow another.
    lines = ["import os\n", "\n", "    return value  # done\n", "}\n", "  indented  twice\n", "\r\n", "last without an end"]
    texts = ["".join(lines[first : first + size]) for size in (1, 2, 3, 5) for first in range(len(lines))]
    texts += ["\n", "\n\n", "a\n\nb", "\nstarts with a line end", " \n \n "]
    assert token_ids(texts).lists() == reference_ids(packaged_tokenizer, texts)


TEXTS = [
    "",
    " ",
    "   ",
    "a",
    " leading space",
    "trailing space ",
    "two  spaces and\ttabs\tand\nlines\r\n",
    "        def indented(self):\n            return self._value  # comment\n",
    "é ü ß 漢字 🙂 ∑ \u00a0nbsp",
    "already ▁ marked▁text ▁▁",
    "<s>",
    "x<s>y </s> <unk> z",
    "an <s> inside prose, and </s>at the end</s>",
    "<s",
    "\x00\x01 control",
]


def test_texts_of_every_kind_get_the_tokenizers_own_ids(packaged_tokenizer, token_ids):
    """Spaces, tabs, marks, added tokens, characters the vocabulary lacks: the tokenizer's own ids."""
    assert token_ids(TEXTS).lists() == reference_ids(packaged_tokenizer, TEXTS)


def test_this_repositorys_own_files_get_the_tokenizers_own_ids(packaged_tokenizer, token_ids):
    """Overlapping windows of this repository's source and documents get the tokenizer's own ids."""
    texts = []
    for path in sorted((REPOSITORY / "rag_lsp").rglob("*.py")) + sorted(REPOSITORY.glob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        texts.extend("".join(lines[first : first + 40]) for first in range(0, len(lines), 32))
    assert len(texts) > 500
    assert token_ids(texts).lists() == reference_ids(packaged_tokenizer, texts)


# Pieces that meet at every kind of boundary: spaces, marks, added tokens and
# their halves, characters the vocabulary lacks (byte tokens).
PIECES = list(" \t\n▁<>/sunk") + ["é", "漢", "🙂", "ab", "def", "<s>", "</s>", "<unk>"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=30).map("".join), min_size=1, max_size=8))
def test_any_text_gets_the_tokenizers_own_ids(packaged_tokenizer, token_ids, texts):
    """Any text made of pieces that meet at every kind of boundary gets the tokenizer's own ids."""
    assert token_ids(texts).lists() == reference_ids(packaged_tokenizer, texts)


def test_half_a_character_is_read_as_the_replacement_character(packaged_tokenizer, token_ids):
    """Half of a character (a lone surrogate) is tokenized as the replacement character."""
    assert token_ids(["cut \ud83d short"]).lists() == reference_ids(packaged_tokenizer, ["cut \ufffd short"])


def test_a_tokenizer_of_another_kind_is_called_whole():
    """A tokenizer with another normalizer is left as it is and called whole."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    token_ids = embedding.TokenIds(tokenizer)
    assert not token_ids.marks_spaces_itself
    assert token_ids(["hello world", "hello there"]).lists() == [[1, 2], [1, 0]]
