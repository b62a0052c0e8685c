"""rag-lsp's own byte-pair tokenizer (``bytepairs``) gives the ids that the
``tokenizers`` package gives, as the embedding model calls it (without special
tokens): for the packaged model's tokenizer on every kind of text, and for
tokenizers of the kind it reads trained here with every option it reads; a
tokenizer of another kind is read by ``tokenizers`` where it is installed, and
is a model error that says so where it is not."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp.core.search import embedding
from rag_lsp.core.search.embedding import loading as embedding_loading
from rag_lsp.core.search.bytepairs import BytePairTokenizer, Unsupported, tables_of, tables_path, write_tables
from tinymodel import write_model

# Slow: the tokenizer is held to the tokenizers package on whole files.
pytestmark = pytest.mark.slow

tokenizers = pytest.importorskip("tokenizers")

REPOSITORY = Path(__file__).resolve().parent.parent
# Texts rag-lsp reads: its examples, documents, sources, tests and editor files.
CORPUS = ("examples", "examples-caught", "docs", "rag_lsp", "tests", "editors", "benchmarks", "schemas")


@pytest.fixture(scope="module")
def model():
    return embedding.load(embedding.wordllama_files())


@pytest.fixture(scope="module")
def reference():
    return tokenizers.Tokenizer.from_file(str(embedding.wordllama_files().tokenizer))


def reference_ids(tokenizer, texts):
    return [encoding.ids for encoding in tokenizer.encode_batch(texts, add_special_tokens=False)]


def own_ids(model, texts):
    # As the model tokenizes the texts it embeds.
    return model._token_ids(texts).lists()


def test_the_packaged_model_is_read_with_the_own_tokenizer_cut_into_pieces(model):
    """The default model's tokenizer is rag-lsp's own, cutting texts into pieces (else the tests compare less)."""
    assert isinstance(model.tokenizer, BytePairTokenizer)
    assert model.tokenizer.cuts


def test_every_text_file_of_this_repository_gets_the_tokenizers_own_ids(model, reference):
    """Every text file of the examples, documents, sources, tests and editor files, whole and in
    overlapping windows, gets the ids the tokenizers package gives it."""
    texts = []
    for folder in CORPUS:
        for path in sorted((REPOSITORY / folder).rglob("*")):
            if not path.is_file() or "node_modules" in path.parts or "__pycache__" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            lines = text.splitlines(keepends=True)
            texts.append(text)
            texts.extend("".join(lines[first : first + 40]) for first in range(0, len(lines), 32))
    texts += [path.read_text(encoding="utf-8") for path in sorted(REPOSITORY.glob("*.md"))]
    assert len(texts) > 2000
    assert own_ids(model, texts) == reference_ids(reference, texts)


TEXTS = [
    "",
    " ",
    "   \t\t  ",
    "a",
    " leading and trailing ",
    "two  spaces and\ttabs\tand\nlines\r\n\r\n\n\n",
    "        def indented(self):\n            return self._value  # comment\n",
    "é ü ß ñ Ångström naïve café Ωmega привет мир",
    "漢字かなカナ 한국어 中文字符 日本語の文章",
    "emoji 🙂👍🏽 👨‍👩‍👧‍👦 flags 🇫🇷 ✨",
    "digits 0123456789 3.14159 1e-10 0xFF 1,000,000 ² ³ ½ ٣",
    "code: x[i] = f(a, *args, **kwargs) -> {'k': [1, 2]} && y || z != w; // /* */ <=> ===",
    "__init__ __dunder__ snake_case CamelCase kebab-case SCREAMING_CASE",
    "already ▁ marked▁text ▁▁",
    "<s> x<s>y </s> <unk> z <s",
    "\x00\x01\x7f control \u200b zero width \u00a0nbsp \u2009thin \u3000ideographic",
    "combining e\u0301 a\u0308 and RTL עברית العربية",
    "https://example.com/path?query=1&b=2#frag user@example.com",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" * 8,
    "x" + "=" * 300 + "\n" + "-_" * 200,
    "QmFzZTY0IGVuY29kZWQgZGF0YSB3aXRob3V0IGFueSBzcGFjZXMgYXQgYWxsIGZvciBhIGxvbmcgd2F5" * 6,
]


def test_texts_of_every_kind_get_the_tokenizers_own_ids(model, reference):
    """Whitespace runs, digits, code, accents, CJK, emoji, controls, added tokens, long runs: the same ids."""
    assert own_ids(model, TEXTS) == reference_ids(reference, TEXTS)
    # Once more, with the pieces remembered.
    assert own_ids(model, TEXTS) == reference_ids(reference, TEXTS)


# Pieces that meet at every kind of boundary the tokenizer cuts at or must not.
PIECES = list(" \t\n\r▁<>/sunk_.(),'\"0123") + ["é", "漢", "🙂", "ab", "def", "<s>", "</s>", "<unk>", "\u0301", "ー"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(PIECES), max_size=30).map("".join)), min_size=1, max_size=8))
def test_any_text_gets_the_tokenizers_own_ids(model, reference, texts):
    """Any text, of any characters or of pieces that meet at every kind of boundary, gets the same ids."""
    texts = [text.encode("utf-8", "replace").decode("utf-8") for text in texts]  # whole characters
    assert own_ids(model, texts) == reference_ids(reference, texts)


# How a batch is encoded (see bytepairs.tokenizer, .memo, .merging): the numpy path for any batch or
# only past a query's size, parts of a few characters or of many, a memo that forgets at once or
# keeps, new pieces merged together or one by one. Each limit by its module of bytepairs.
BYTEPAIRS = "rag_lsp.core.search.bytepairs"
LIMITS = st.fixed_dictionaries(
    {
        "tokenizer._FEW_CHARACTERS": st.sampled_from([0, 1024]),
        "tokenizer._CUT_AT_ONCE": st.sampled_from([1, 24, 1 << 18]),
        "memo._MEMO_SIZE": st.sampled_from([4, 1 << 17]),
        "memo._MEMO_LONGEST": st.sampled_from([3, 256]),
        "merging._MERGED_TOGETHER": st.sampled_from([1, 64]),
    }
)


@pytest.fixture(scope="module")
def own():
    # One tokenizer for every example: pieces seen by one are remembered for the next.
    return BytePairTokenizer.from_file(embedding.wordllama_files().tokenizer)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(
        st.lists(st.one_of(st.text(max_size=60), st.lists(st.sampled_from(PIECES), max_size=40).map("".join)), max_size=6), min_size=1, max_size=3
    ),
    limits=LIMITS,
)
def test_any_batches_get_the_tokenizers_own_ids_however_they_are_cut(own, reference, batches, limits):
    """Batches of any texts, one after another, get the same ids on each of the own tokenizer's paths:
    cut by numpy or by its pattern, in parts of any size, with pieces remembered or forgotten."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in limits.items():
            patch.setattr(f"{BYTEPAIRS}.{name}", value)
        for texts in batches:
            texts = [text.encode("utf-8", "replace").decode("utf-8") for text in texts]
            flat, starts = own.encode_arrays(texts)
            assert flat.dtype == numpy.int64 and starts.tolist()[0] == 0 and len(starts) == len(texts) + 1
            assert own.encode_batch(texts) == reference_ids(reference, texts)


def test_a_piece_whose_hash_is_another_pieces_is_never_taken_for_it(monkeypatch: pytest.MonkeyPatch, reference) -> None:
    """Pieces are found by their hash and then compared by their characters: with every piece of one
    length given one hash, each still gets its own ids, batch after batch."""
    monkeypatch.setattr(f"{BYTEPAIRS}.memo.hashes", lambda codes, firsts, lengths: lengths.astype(numpy.uint64))
    monkeypatch.setattr(f"{BYTEPAIRS}.tokenizer._FEW_CHARACTERS", 0)
    tokenizer = BytePairTokenizer.from_file(embedding.wordllama_files().tokenizer)
    texts = [path.read_text(encoding="utf-8") for path in sorted((REPOSITORY / "docs").glob("*.md"))][:3] + TEXTS
    for batch in (texts[:2], texts, texts[::-1]):
        assert tokenizer.encode_batch(batch) == reference_ids(reference, batch)


def test_texts_longer_than_a_cut_and_batches_from_two_threads_get_the_tokenizers_own_ids(reference) -> None:
    """A text longer than is cut at once (cut after its line ends), and batches encoded by two threads
    at once with one tokenizer, get the same ids."""
    tokenizer = BytePairTokenizer.from_file(embedding.wordllama_files().tokenizer)
    sources = [path.read_text(encoding="utf-8") for path in sorted((REPOSITORY / "rag_lsp").rglob("*.py"))]
    long = "".join(sources)
    assert len(long) > 2 * (1 << 18) and "\n" in long
    batches = [[long[: 1 << 19]], sources[0::2], sources[1::2], ["one line of a query"] * 3]
    expected = [reference_ids(reference, batch) for batch in batches]
    results: dict[int, list] = {}

    def encode(number: int) -> None:
        results[number] = [tokenizer.encode_batch(batch) for batch in batches[number % 2 :: 2] * 2]

    threads = [threading.Thread(target=encode, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for number in range(2):
        assert results[number] == expected[number % 2 :: 2] * 2


def test_half_a_character_is_read_as_the_replacement_character(model, reference):
    """Half of a character (a lone surrogate) is tokenized as the replacement character."""
    assert own_ids(model, ["cut \ud83d short"]) == reference_ids(reference, ["cut \ufffd short"])


# ---------------------------------------------------------------- tokenizers trained here

WORDS = st.text(alphabet=st.sampled_from(list("ab c_.▁\né漢") + ["\U0001f642"]), max_size=12)


def trained(corpus: list[str], options: dict, normalizer: str, added: list[str]):
    """A BPE tokenizer trained on ``corpus`` with the model ``options``, one of the normalizers read, added tokens."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers, trainers

    unk = "<unk>" if options.pop("unk", True) else None
    tokenizer = Tokenizer(models.BPE(unk_token=unk, **options))
    if normalizer == "llama":
        tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    elif normalizer == "replace":
        tokenizer.normalizer = normalizers.Replace("a", "b")
    specials = ([unk] if unk else []) + [f"<0x{byte:02X}>" for byte in range(0, 256, 1 if options.get("byte_fallback") else 64)]
    trainer = trainers.BpeTrainer(vocab_size=120, special_tokens=specials, show_progress=False)
    tokenizer.train_from_iterator(corpus, trainer)
    tokenizer.add_tokens([AddedToken(text, normalized=False) for text in added])
    return tokenizer


@settings(max_examples=60, deadline=None)
@given(
    corpus=st.lists(WORDS, min_size=1, max_size=30),
    texts=st.lists(WORDS, min_size=1, max_size=6),
    options=st.fixed_dictionaries(
        {"byte_fallback": st.booleans(), "fuse_unk": st.booleans(), "ignore_merges": st.booleans(), "unk": st.booleans()}
    ),
    normalizer=st.sampled_from(["none", "llama", "replace"]),
    added=st.lists(st.sampled_from(["<s>", "c_", "[X]"]), max_size=2, unique=True),
    limits=LIMITS,
)
def test_any_tokenizer_of_the_kind_read_gets_the_tokenizers_own_ids(tmp_path_factory, corpus, texts, options, normalizer, added, limits):
    """A BPE tokenizer trained on any words, with or without byte tokens (all or some), the unknown token fused or
    not, merges ignored for known words or not, any normalizer read and added tokens, gives the same ids read here,
    on each of its paths."""
    reference = trained(corpus, dict(options), normalizer, added)
    path = tmp_path_factory.mktemp("trained") / "tokenizer.json"
    reference.save(str(path))
    own = BytePairTokenizer.from_file(path)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in limits.items():
            patch.setattr(f"{BYTEPAIRS}.{name}", value)
        assert own.encode_batch(texts) == reference_ids(reference, texts)
        assert own.encode_batch(texts[::-1]) == reference_ids(reference, texts[::-1])


# ---------------------------------------------------------------- other kinds


def test_a_tokenizer_of_another_kind_is_read_by_the_tokenizers_package(tmp_path: Path) -> None:
    """A model2vec folder whose tokenizer is a word-level one is read by ``tokenizers``, and embeds."""
    folder = write_model(tmp_path / "tiny")
    with pytest.raises(Unsupported, match="WordLevel"):
        BytePairTokenizer.from_file(folder / "tokenizer.json")
    model = embedding.load(embedding.model2vec_files(folder, "models/tiny"))
    assert isinstance(model.tokenizer, tokenizers.Tokenizer)
    assert model.embed(["a car"]).any()


def test_without_the_tokenizers_package_another_kind_is_a_model_error_and_the_default_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``tokenizers`` installed, the default model loads and tokenizes alike, and a model whose
    tokenizer is of another kind is a ModelError naming what it uses and what to install."""
    folder = write_model(tmp_path / "tiny")
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # `import tokenizers` raises ImportError
    monkeypatch.setattr(embedding_loading, "_loaded", {})
    with pytest.raises(embedding.ModelError, match=r"models/tiny/tokenizer.json .*WordLevel.*pip install tokenizers"):
        embedding.load(embedding.model2vec_files(folder, "models/tiny"))
    model = embedding.load(embedding.wordllama_files())
    assert isinstance(model.tokenizer, BytePairTokenizer)
    assert model.embed(["a car with a wheel"]).any()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("not json", "Expecting value"),
        ("[]", "it is not a JSON object"),
        (json.dumps({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}), "needs 'b'"),
        (json.dumps({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "<unk>"}}), "unknown token"),
    ],
)
def test_a_broken_tokenizer_file_is_a_model_error(tmp_path: Path, content: str, said: str) -> None:
    """A tokenizer.json that is not JSON, not an object, or whose merges or unknown token are not in its
    vocabulary is a ModelError naming the file and the problem."""
    folder = write_model(tmp_path / "tiny")
    (folder / "tokenizer.json").write_text(content, encoding="utf-8")
    with pytest.raises(embedding.ModelError, match=f"models/tiny/tokenizer.json is not a tokenizer: .*{said}"):
        embedding.load(embedding.model2vec_files(folder, "models/tiny"))


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"pre_tokenizer": {"type": "ByteLevel"}}, "pre-tokenizer"),
        ({"normalizer": {"type": "NFKC"}}, "NFKC normalizer"),
        ({"normalizer": {"type": "Replace", "pattern": {"Regex": " +"}, "content": "▁"}}, "regular expression"),
        ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "continuing_subword_prefix": "##"}}, "continuing_subword_prefix"),
        ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1}}, "dropout"),
        ({"model": {"type": "Unigram", "vocab": []}}, "Unigram"),
        ({"added_tokens": [{"id": 0, "content": "a", "normalized": True}]}, "after normalizing"),
        ({"added_tokens": [{"id": 0, "content": "a", "lstrip": True}]}, "lstrip"),
    ],
)
def test_what_the_own_tokenizer_does_not_read_is_said(change: dict, said: str) -> None:
    """Each feature of a tokenizer file the own tokenizer does not implement is refused, naming it."""
    value = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": None, "pre_tokenizer": None}
    value.update(change)
    with pytest.raises(Unsupported, match=said):
        BytePairTokenizer.from_json(value)


# ---------------------------------------------------------------- tables


def test_the_packaged_tables_are_those_of_the_packaged_tokenizer() -> None:
    """The default model's tables file was made from its tokenizer file as it is, and holds what reading
    that file gives; after a change to the tokenizer file, run the command in the message."""
    tokenizer = embedding.wordllama_files().tokenizer
    source = tokenizer.read_bytes()
    fresh = tables_of(json.loads(source.decode("utf-8")), source)
    with numpy.load(tables_path(tokenizer), allow_pickle=False) as packaged:
        assert sorted(packaged.files) == sorted(fresh)
        stale = [name for name in fresh if not numpy.array_equal(packaged[name], fresh[name])]
    assert not stale, f"{tables_path(tokenizer)} is stale ({', '.join(stale)}): run python -m rag_lsp.core.search.bytepairs {tokenizer}"


def test_a_tokenizer_read_from_its_tables_is_the_one_read_from_its_file(model) -> None:
    """The tables give the tokenizer reading the file gives: the same vocabulary, ranks, cutting and ids."""
    tokenizer = embedding.wordllama_files().tokenizer
    from_tables = BytePairTokenizer.from_file(tokenizer)
    from_json = BytePairTokenizer.from_json(json.loads(tokenizer.read_text(encoding="utf-8")))
    assert from_tables.get_vocab() == from_json.get_vocab() and from_tables.cuts and from_json.cuts
    assert from_tables._merges.ranks == from_json._merges.ranks and from_tables._pieces.pattern == from_json._pieces.pattern
    texts = [path.read_text(encoding="utf-8") for path in sorted((REPOSITORY / "docs").glob("*.md"))] + ["héllo wörld 中文 🎉\t\n  x", ""]
    assert from_tables.encode_batch(texts) == from_json.encode_batch(texts)


@pytest.mark.parametrize("damage", ["other-bytes", "not-an-archive", "no-meta", "ids-past-the-vocabulary"])
def test_tables_made_from_other_bytes_or_damaged_are_not_used(tmp_path: Path, damage: str) -> None:
    """Tables beside a tokenizer file are used only when made from its very bytes: stale or damaged ones
    are passed over, and the file itself is read (the same ids as the tokenizers package gives)."""
    packaged = embedding.wordllama_files().tokenizer
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_bytes(packaged.read_bytes())
    write_tables(tokenizer)
    if damage == "other-bytes":
        # The same tokenizer written otherwise: its SHA-256 is another.
        tokenizer.write_text(json.dumps(json.loads(packaged.read_text(encoding="utf-8")), indent=1), encoding="utf-8")
    elif damage == "not-an-archive":
        tables_path(tokenizer).write_bytes(b"not an archive")
    elif damage == "no-meta":
        numpy.savez(tables_path(tokenizer), ids=numpy.arange(3))
    else:
        with numpy.load(tables_path(tokenizer), allow_pickle=False) as arrays:
            kept = {name: arrays[name] for name in arrays.files}
        kept["left"] = kept["left"] + 10**6
        numpy.savez(tables_path(tokenizer), **kept)
    read = BytePairTokenizer.from_file(tokenizer)
    reference = tokenizers.Tokenizer.from_file(str(packaged))
    texts = ["how does the gateway approve a request", "naïve café — 中文 🎉"]
    assert read.encode_batch(texts) == reference_ids(reference, texts)


def test_the_packaged_tokenizer_is_read_from_its_tables_without_its_merges(monkeypatch: pytest.MonkeyPatch, reference) -> None:
    """Where the tables fit, the merges of the file are not read at all (the slow part of reading it)."""
    def merges_read(value):
        raise AssertionError("the merges were read from the file")

    monkeypatch.setattr(f"{BYTEPAIRS}.reading.merges_of", merges_read)
    tokenizer = BytePairTokenizer.from_file(embedding.wordllama_files().tokenizer)
    texts = ["how does the gateway approve a request", "naïve café — 中文 🎉"]
    assert tokenizer.cuts and tokenizer.encode_batch(texts) == reference_ids(reference, texts)
