"""The builtin target's search by meaning (SPEC §2.5): chunking, fusion, the
embedded model loaded offline, model2vec folders, hybrid, and the keyword fallback."""

from __future__ import annotations

import hashlib
import os
import socket
import sys
from pathlib import Path

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp.core.running.targets import Answer, Request, TargetError, open_target
from rag_lsp.core.search import embedding
from rag_lsp.core.search.embedding import loading as embedding_loading, matching as embedding_matching, model as embedding_model
from rag_lsp.core.workspace.chunking import Chunking, ChunkingError, chunk_ids, line_ranges
from rag_lsp.core.search.index import contextual, path_words
from rag_lsp.core.search.ranking import (
    COSINE_WEIGHT,
    KEYWORD_WEIGHT,
    RERANKED,
    Ranked,
    best_of_block,
    best_of_each,
    fused_by_confidence,
    reranked,
    top_rows,
)
from rag_lsp.core.workspace.suitefacts import target_info
from rag_lsp.core.checking.analyze import analyze_file
from rag_lsp.core.workspace.workspace import Workspace
from tinymodel import write_model
from workspaces import AUDIT, DEPLOY, RATE_LIMITS, write_files

# Slow: each test loads the embedding model and searches with it.
pytestmark = pytest.mark.slow

# ---------------------------------------------------------------- chunking


def test_line_windows_share_their_overlap_and_end_at_the_last_line() -> None:
    """Windows of 40 lines sharing 8 start every 32 lines; the last ends at the file's last line."""
    lines = [f"line {n}" for n in range(1, 46)]
    assert line_ranges(lines, Chunking("lines", 40, 8)) == [(1, 40), (33, 45)]
    assert line_ranges(lines[:40], Chunking("lines", 40, 8)) == [(1, 40)]
    assert line_ranges(lines, Chunking("lines", 10, 0)) == [(1, 10), (11, 20), (21, 30), (31, 40), (41, 45)]


def test_blank_windows_and_empty_files_are_not_chunks() -> None:
    """A window of blank lines, an empty file and a blank file hold nothing to find."""
    lines = ["text", "", "", "", "", "more"]
    assert line_ranges(lines, Chunking("lines", 2, 0)) == [(1, 2), (5, 6)]
    assert line_ranges([], Chunking()) == []
    assert line_ranges(["", "  "], Chunking("file", 0, 0)) == []
    assert line_ranges(["a", "b"], Chunking("file", 0, 0)) == [(1, 2)]


def test_chunk_ids_name_lines_or_the_whole_file() -> None:
    """A chunk's id is `path#L<first>-<last>`, or the path when the unit is the file."""
    assert chunk_ids(["src/a.py", "b.md"], [33, 1], [45, 9], Chunking()) == ["src/a.py#L33-45", "b.md#L1-9"]
    assert chunk_ids(["src/a.py"], [1], [9], Chunking("file", 0, 0)) == ["src/a.py"]


def test_chunking_options_are_read_with_their_defaults_and_refused_when_wrong() -> None:
    """Missing keys take the defaults; a bad unit, size or overlap is refused with what to write instead."""
    assert Chunking.from_config(None) == Chunking("lines", 60, 12)
    assert Chunking.from_config({"unit": "lines", "size": 20}) == Chunking("lines", 20, 4)
    assert Chunking.from_config({"size": 100}) == Chunking("lines", 100, 20)
    assert Chunking.from_config({"unit": "file"}) == Chunking("file", 0, 0)
    for bad, said in (
        ({"unit": "pages"}, "`lines` or `file`"),
        ({"size": 0}, "from 1"),
        ({"size": 10, "overlap": 10}, "size − 1 (9)"),
        ({"unit": "file", "size": 3}, "takes no `size`"),
        ({"lines": 40}, "no option 'lines'"),
        (40, "must be a mapping"),
    ):
        with pytest.raises(ChunkingError, match=said.replace("(", r"\(").replace(")", r"\)")):
            Chunking.from_config(bad)


# ---------------------------------------------------------------- ranking


def test_hybrid_fusion_weighs_keyword_search_by_how_sure_it_is() -> None:
    """Meaning is rescaled from the first (1) to the RERANKED-th (0); keyword scores are shares of what the
    query could score, weighted by KEYWORD_WEIGHT x the best one's share: a paraphrase barely moves the ranking."""
    meaning = [(7, 0.9), (3, 0.8), (5, 0.7)] + [(100 + n, 0.5) for n in range(RERANKED - 3)]
    sure = fused_by_confidence(meaning, [(3, 8.0), (9, 4.0)], 10.0, 3)
    weight = KEYWORD_WEIGHT * 0.8
    assert [row for row, _ in sure] == [3, 7, 5]
    assert dict(sure)[3] == pytest.approx((1 - weight) * 0.75 + weight * 0.8)
    assert dict(sure)[7] == pytest.approx(1 - weight)
    unsure = fused_by_confidence(meaning, [(3, 0.5)], 10.0, 2)
    assert [row for row, _ in unsure] == [7, 3]  # one word of the question in common: meaning leads
    assert fused_by_confidence(meaning, [], 0.0, 2) == [(7, 1.0), (3, pytest.approx(0.75))]
    assert [row for row, _ in fused_by_confidence([], [(4, 2.0), (2, 2.0)], 4.0, 5)] == [2, 4]  # ties to the lower row
    assert fused_by_confidence([], [], 0.0, 5) == []


def test_top_rows_are_best_first_with_ties_to_the_lower_row() -> None:
    """The best rows of a score array, optionally among some rows only, ties broken by row."""
    scores = numpy.array([0.1, 0.9, 0.5, 0.9, 0.3], dtype=numpy.float32)
    assert [row for row, _ in top_rows(scores, 3)] == [1, 3, 2]
    assert [row for row, _ in top_rows(scores, 10)] == [1, 3, 2, 4, 0]
    assert [row for row, _ in top_rows(scores, 2, numpy.array([0, 2, 4]))] == [2, 4]
    assert top_rows(scores, 0) == []


def test_each_files_best_chunk_comes_before_any_files_further_chunks() -> None:
    """Chunks ranked best first, with their files: the first of each file keep their order, then the rest."""
    ranked = Ranked([10, 11, 20, 12, 30, 21], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0, 0, 1, 0, 2, 1], ["code"] * 6)
    first = ranked.file_first(6)
    assert first.rows == [10, 20, 30, 11, 12, 21]
    assert first.scores == [0.9, 0.7, 0.5, 0.8, 0.6, 0.4]
    assert first.files == [0, 1, 2, 0, 0, 1]
    assert ranked.file_first(2).rows == [10, 20]
    assert Ranked([], [], [], []).file_first(3).rows == []


def one_query_at_a_time(scores: numpy.ndarray, top_k: int, row_file: numpy.ndarray) -> list[int]:
    """What a single case's ranking makes of one query's scores: its top_k best, deeper
    when a file holds several of them, file first."""
    found = top_rows(scores, top_k)
    if len(found) == top_k and len(set(row_file[[row for row, _ in found]].tolist())) < top_k:
        found = top_rows(scores, top_k * 5)
    rows = [row for row, _ in found]
    return Ranked(rows, [score for _, score in found], row_file[rows].tolist(), ["code"] * len(rows)).file_first(top_k).rows


def score_blocks(most_chunks: int, last_file: int) -> st.SearchStrategy:
    """Blocks of one to six queries' scores (with many ties) over up to ``most_chunks`` chunks of files 0 to
    ``last_file`` (in file order), with a topK: as (scores, row_file, top_k)."""

    def arrays(case: tuple) -> tuple:
        values, files, top_k = case
        return numpy.array(values, dtype=numpy.float32), numpy.array(files, dtype=numpy.int32), top_k

    return st.integers(1, most_chunks).flatmap(
        lambda chunks: st.tuples(
            st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=chunks, max_size=chunks), min_size=1, max_size=6),
            st.lists(st.integers(0, last_file), min_size=chunks, max_size=chunks).map(sorted),
            st.integers(1, 12),
        )
    ).map(arrays)


@settings(max_examples=200, deadline=None)
@given(score_blocks(40, 5))
def test_a_block_of_queries_is_ranked_as_each_query_alone(case: tuple) -> None:
    """Ranking a block of queries at once gives each query the hits ranking it alone gives (ties included)."""
    scores, row_file, top_k = case
    block = best_of_block(scores, top_k, top_k * 5, row_file)
    for query, (rows, shown) in zip(scores, block):
        assert rows == one_query_at_a_time(query, top_k, row_file)
        assert shown == [round(float(query[row]), 6) for row in rows]


def wide_blocks() -> st.SearchStrategy:
    """Blocks of one to five rows of up to 900 scores each, most of them equal (zeros among them), with a
    count of best scores to take: as (scores, depth)."""
    return st.integers(1, 900).flatmap(
        lambda width: st.tuples(
            st.lists(
                st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.125, 0.25, 0.5, 0.75, 1.0, 2.5]), min_size=width, max_size=width),
                min_size=1,
                max_size=5,
            ).map(lambda rows: numpy.array(rows, dtype=numpy.float32)),
            st.integers(1, min(width, 40)),
        )
    )


@settings(max_examples=300, deadline=None)
@given(wide_blocks(), st.booleans())
def test_the_best_scores_of_each_row_of_a_block_are_those_of_the_row_alone(case: tuple, positive: bool) -> None:
    """The best scores of each row of a block, found at once, are those top_rows finds in the row alone, in its
    order (ties to the lower position); only the scores above 0 when asked, the rest of the row filled out."""
    scores, depth = case
    positions, values = best_of_each(scores, depth, positive)
    for row, row_positions, row_values in zip(scores, positions.tolist(), values.tolist()):
        alone = top_rows(row, depth)
        if positive:
            alone = [(position, score) for position, score in alone if score > 0]
            assert row_values[len(alone) :] == [float("-inf")] * (depth - len(alone))
        assert list(zip(row_positions, row_values))[: len(alone)] == alone


def keyword_alone(scores: numpy.ndarray, top_k: int, row_file: numpy.ndarray) -> list[int]:
    """What a single case's keyword ranking makes of one query's scores: its top_k best scored above 0, deeper
    when a file holds several of them, file first."""
    found = top_rows(scores, top_k)
    if len(found) == top_k and len(set(row_file[[row for row, _ in found]].tolist())) < top_k:
        found = top_rows(scores, top_k * 5)
    rows = [row for row, score in found if score > 0]
    return Ranked(rows, [float(scores[row]) for row in rows], row_file[rows].tolist(), ["code"] * len(rows)).file_first(top_k).rows


@settings(max_examples=200, deadline=None)
@given(score_blocks(400, 40))
def test_a_block_of_keyword_queries_is_ranked_as_each_query_alone(case: tuple) -> None:
    """Ranking a block of keyword queries at once gives each query the hits ranking it alone gives: only
    chunks scored above 0, ties included."""
    scores, row_file, top_k = case
    block = best_of_block(scores, top_k, top_k * 5, row_file, positive=True)
    for query, (rows, shown) in zip(scores, block):
        assert rows == keyword_alone(query, top_k, row_file)
        assert shown == [round(float(query[row]), 6) for row in rows]


def match_of_rows(rows: numpy.ndarray) -> numpy.ndarray:
    """A stand-in for a query's token matching: a fixed value per row, with ties."""
    return ((rows * 7) % 5 / 4).astype(numpy.float32)


def reranked_alone(scores: numpy.ndarray, top_k: int, row_file: numpy.ndarray) -> list[int]:
    """What a single case's ranking by meaning makes of one query's scores: its best (and those reranked),
    reranked, deeper when a file holds several of the first top_k, file first."""

    def ranked(count: int) -> list[tuple[int, float]]:
        found = top_rows(scores, count)
        rows, values = reranked(numpy.array([row for row, _ in found], dtype=numpy.int64), numpy.array([v for _, v in found], dtype=numpy.float32), match_of_rows)
        return list(zip(rows.tolist(), values.tolist()))

    found = ranked(max(top_k, RERANKED))
    if len(found) >= top_k and len(set(row_file[[row for row, _ in found[:top_k]]].tolist())) < top_k:
        found = ranked(max(top_k * 5, RERANKED))
    rows = [row for row, _ in found]
    return Ranked(rows, [score for _, score in found], row_file[rows].tolist(), ["code"] * len(rows)).file_first(top_k).rows


@settings(max_examples=200, deadline=None)
@given(score_blocks(60, 8))
def test_a_block_of_queries_reranked_is_ranked_as_each_query_alone(case: tuple) -> None:
    """With the nearest chunks ranked again by matching, a block of queries still gives each query the hits
    ranking it alone gives (ties included)."""
    scores, row_file, top_k = case
    block = best_of_block(scores, top_k, max(top_k * 5, RERANKED), row_file, match_of_rows)
    for query, (rows, _) in zip(scores, block):
        assert rows == reranked_alone(query, top_k, row_file)


def test_a_block_of_queries_over_an_empty_index_finds_nothing() -> None:
    """Each query of a block asked of an index with no chunk has no hit."""
    empty = numpy.zeros(0, dtype=numpy.int32)
    found = best_of_block(numpy.zeros((2, 0), dtype=numpy.float32), 10, 50, empty)
    assert found == [([], [])] * 2


def test_a_chunk_is_embedded_in_the_context_of_its_path_and_file() -> None:
    """Path words split at separators and case changes, the extension left out; contextual vectors are
    unit vectors moved towards the path's vector and towards their file's mean, in that order."""
    assert path_words("src/rateLimit/token_bucket.py") == "src rate Limit token bucket"
    assert path_words("docs/README") == "docs README" and path_words(".github/ci.yml") == "github ci"
    chunks = numpy.array([[1, 0, 0], [0, 1, 0]], dtype=numpy.float32)
    path = numpy.array([0, 0, 1], dtype=numpy.float32)
    mixed = contextual(chunks.copy(), path)
    assert mixed.dtype == numpy.float32 and numpy.allclose(numpy.linalg.norm(mixed, axis=1), 1)
    assert (mixed[:, 2] > 0).all()  # towards the path
    assert mixed[0, 1] > 0 and mixed[1, 0] > 0  # towards the other chunk of the file
    assert mixed[0, 0] > mixed[0, 1] and mixed[1, 1] > mixed[1, 0]  # still most like itself
    alone = contextual(numpy.array([[0.6, 0.8, 0]], dtype=numpy.float32), numpy.zeros(3, dtype=numpy.float32))
    assert numpy.allclose(alone, [[0.6, 0.8, 0]])  # a one-chunk file with no path words: its own vector


# ---------------------------------------------------------------- models


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to resolve a name or open a connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"the network was used: {args!r}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def test_the_packaged_model_loads_and_embeds_without_the_network(no_network: None) -> None:
    """The wordllama model's weights and tokenizer load from rag-lsp's own files, offline, without the wordllama package."""
    imported = "wordllama" in sys.modules
    files = embedding.wordllama_files()
    assert files.weights.name == "l2_supercat_256.safetensors" and files.tokenizer.parent == files.weights.parent
    assert files.weights.parent.parent.name == "rag_lsp"
    model = embedding_loading._load(files)  # not the process's shared copy: a load from scratch
    vectors = model.embed(["how does the gateway decide an approval", ""])
    assert vectors.shape == (2, 256) and model.dim == 256
    assert numpy.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5) and not vectors[1].any()
    assert ("wordllama" in sys.modules) == imported


def test_the_packaged_model_is_wordllamas_with_its_license() -> None:
    """The packaged weights are byte for byte those its README names (wordllama's), and its MIT license ships beside them."""
    files = embedding.wordllama_files()
    folder = files.weights.parent
    digest = hashlib.sha256(files.weights.read_bytes()).hexdigest()
    assert f"SHA-256 `{digest}`" in (folder / "README.md").read_text(encoding="utf-8")
    license_text = (folder / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License") and "Lee Miller" in license_text


def test_a_model_is_loaded_once_per_process() -> None:
    """Two loads of the same files give the same model: its weights are read once."""
    files = embedding.wordllama_files()
    assert embedding.load(files) is embedding.load(files)


def test_a_model2vec_folder_embeds_by_meaning(tmp_path: Path) -> None:
    """A model2vec folder's text vectors are means of token vectors: "automobile" is near cars, far from fruit."""
    folder = write_model(tmp_path / "tiny")
    model = embedding.load(embedding.model2vec_files(folder, "tiny"))
    query, cars, fruit, unknown = model.embed(["Automobile", "a car with a wheel", "banana and apple", "zzz qqq"])
    assert query @ cars > 0.9 and query @ fruit < 0.3
    assert not unknown.any()  # only unknown words: no vector


def test_a_query_matches_a_chunk_token_by_token(tmp_path: Path) -> None:
    """A chunk's terms are its distinct known tokens; each query token meets its closest term, so "automobile"
    matches a chunk about a car and a wheel nearly fully, one about fruit hardly, and an unknown word nothing."""
    folder = write_model(tmp_path / "tiny")
    model = embedding.load(embedding.model2vec_files(folder, "tiny"))
    _, terms = model.embed_chunks(["a car with a wheel, a car", "banana and apple", "zzz"])
    assert terms.shape == (3, embedding.TERMS_PER_CHUNK)
    known = [sorted(int(term) for term in row if term != model.no_term) for row in terms]
    vocabulary = model.tokenizer.get_vocab()
    assert known[0] == sorted([vocabulary["car"], vocabulary["wheel"]]) and known[2] == []
    (query,) = model.query_terms(["Automobile"])
    cars, fruit, nothing = model.matching(query, terms).tolist()
    assert cars > 0.99 and fruit < 0.2 and nothing == 0.0
    (unknown,) = model.query_terms(["qqq"])
    assert not model.matching(unknown, terms).any()


def test_chunks_pooled_many_at_a_time_are_texts_pooled_one_by_one() -> None:
    """An index's chunks, counted and pooled together (over several batches of the tokenizer thread), get
    each text's own vector (to float rounding) and its heaviest distinct tokens as terms, as a text pooled
    alone; a text with no token the table knows stays zeros, and a text longer than a gather too."""
    model = embedding.load(embedding.wordllama_files())
    texts = [
        "a car with a wheel, a car",
        "",
        "   \n\t",
        "\n".join(f"line {number} of a longer text about rate limits and retries" for number in range(400)),
        "tokens: " + " ".join(f"w{number}" for number in range(embedding.TERMS_PER_CHUNK * 3)),
        "tokens: " + " ".join(f"w{number}" for number in range(embedding.TERMS_PER_CHUNK * 3)),
        "x <s> y",
    ] * (embedding_model._TEXTS_PER_BATCH // 3)
    vectors, terms = model.embed_chunks(texts)
    alone = model.embed(texts)
    numpy.testing.assert_allclose(vectors, alone, atol=1e-5)
    assert not vectors[1].any() and not vectors[2].any() and vectors[3].any()
    for text, row in zip(texts[:7], terms[:7]):
        # Its distinct tokens that carry weight (as a query's are read), heaviest first, ties by id; then
        # those that weigh nothing (a token's weight is the length of its vector).
        tokens, weights = model.query_terms([text])[0]
        heaviest = [token for _, token in sorted(zip((-weights).tolist(), tokens.tolist()))][: embedding.TERMS_PER_CHUNK]
        rest = [int(token) for token in row[len(heaviest) :] if token != model.no_term]
        assert row[: len(heaviest)].tolist() == heaviest and not model.table[rest].any()
        assert model.embed_chunks([text])[1][0].tolist() == row.tolist()


@pytest.mark.parametrize("kept, gathered", [(embedding_matching._TOKENS_KEPT, embedding_matching._MATCHES_GATHERED), (3, embedding_matching._MATCHES_GATHERED), (embedding_matching._TOKENS_KEPT, 8)])
def test_a_small_index_matches_token_by_token_as_any_index_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: int, gathered: int) -> None:
    """Over an index of at most SMALL_INDEX chunks, each token's match with every chunk is kept from one query to
    the next (up to a number of tokens); a query's figures, asked once or again, are those of matching its chunks
    afresh (to float rounding), and a larger index matches its chunks afresh. A block of queries gets each query's
    own figures, however many of its tokens are gathered at a time."""
    monkeypatch.setattr(embedding_matching, "_TOKENS_KEPT", kept)
    monkeypatch.setattr(embedding_matching, "_MATCHES_GATHERED", gathered)
    folder = write_model(tmp_path / "tiny")
    model = embedding.load(embedding.model2vec_files(folder, "tiny"))
    _, terms = model.embed_chunks(["a car with a wheel, a car", "banana and apple", "zzz", "apple wheel car banana"])
    small = model.matching_over(terms)
    assert isinstance(small, embedding.TokenMatches)
    queries = model.query_terms(["Automobile", "apple wheel", "qqq", "car car banana"])
    for _ in range(2):
        for query in queries:
            for rows in ([0, 1, 2, 3], [3, 0], [2], []):
                chosen = numpy.array(rows, dtype=numpy.int64)
                afresh = model.matching(query, terms[chosen])
                numpy.testing.assert_allclose(small(query, chosen), afresh, atol=1e-6)
    # A block of queries at once, in any order: each query's figures are those it gets alone, to the bit.
    every = numpy.arange(len(terms), dtype=numpy.int64)
    for order in ([0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 2]):
        block = small.block(queries.take(order))
        assert block.shape == (len(order), len(terms))
        for row, query in zip(block, order):
            assert row.tolist() == small(queries[query], every).tolist()
    heads = numpy.array([[3, 0], [1, 2], [0, 0], [2, 3]], dtype=numpy.int64)
    assert small.heads(queries, heads).tolist() == [small(queries[query], heads[query]).tolist() for query in range(4)]
    monkeypatch.setattr(embedding_model, "SMALL_INDEX", 3)
    large = model.matching_over(terms)
    assert not isinstance(large, embedding.TokenMatches)
    chosen = numpy.array([3, 1], dtype=numpy.int64)
    assert large(queries[3], chosen).tolist() == model.matching(queries[3], terms[chosen]).tolist()
    assert large.heads(queries, heads).tolist() == [model.matching(queries[query], terms[heads[query]]).tolist() for query in range(4)]


def test_the_terms_of_queries_are_each_querys_distinct_weighty_tokens(tmp_path: Path) -> None:
    """A block of queries' terms, read together, are per query its distinct tokens the table knows and weighs,
    ascending, with their weights; any of them can be taken out, in any order."""
    folder = write_model(tmp_path / "tiny")
    model = embedding.load(embedding.model2vec_files(folder, "tiny"))
    texts = ["car car wheel", "", "qqq zzz", "apple banana car apple", "wheel", "banana [UNK] car"]
    terms = model.query_terms(texts)
    assert len(terms) == len(texts)
    weights = numpy.linalg.norm(model.table, axis=1)
    for text, (tokens, token_weights) in zip(texts, terms):
        ids = [encoding.ids for encoding in model.tokenizer.encode_batch([text], add_special_tokens=False)][0]
        expected = sorted({token for token in ids if token < len(model.table) and weights[token] > 0})
        assert tokens.tolist() == expected
        numpy.testing.assert_allclose(token_weights, weights[expected], rtol=1e-6)
    assert [tokens.tolist() for tokens, _ in terms.take([5, 0, 0, 1])] == [terms[n][0].tolist() for n in (5, 0, 0, 1)]
    assert len(terms.take([])) == 0


def test_the_nearest_chunks_are_ranked_again_by_matching_and_the_rest_keep_their_order() -> None:
    """The first RERANKED rows (by cosine) are ordered by the weighted mean of cosine and matching, and scored so;
    rows after them keep their order, never scored above the last reranked one."""
    count = RERANKED + 3
    rows = numpy.arange(100, 100 + count)
    cosine = numpy.linspace(0.9, 0.5, count).astype(numpy.float32)
    match = numpy.zeros(count, dtype=numpy.float32)
    match[RERANKED - 1] = 1.0  # the last row reranked matches every query token

    def matching(chosen: numpy.ndarray) -> numpy.ndarray:
        assert chosen.tolist() == rows[:RERANKED].tolist()  # only the nearest are matched
        return match[chosen - 100]

    new_rows, new_scores = reranked(rows, cosine, matching)
    assert new_rows[0] == rows[RERANKED - 1]
    assert new_scores[0] == pytest.approx(COSINE_WEIGHT * cosine[RERANKED - 1] + (1 - COSINE_WEIGHT))
    assert new_rows[1:RERANKED].tolist() == rows[: RERANKED - 1].tolist()
    assert new_rows[RERANKED:].tolist() == rows[RERANKED:].tolist()
    assert all(numpy.diff(new_scores) <= 0)  # never rising down the list
    assert reranked(rows[:0], cosine[:0], matching)[0].size == 0


def test_model_files_that_do_not_load_say_why(tmp_path: Path) -> None:
    """A Git LFS pointer, a missing tensor, a cut-short file and a missing file are ModelErrors naming the problem."""
    folder = write_model(tmp_path / "tiny")
    weights = folder / "model.safetensors"
    good = weights.read_bytes()
    cases = [
        (b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 30000000\n", "git lfs pull"),
        (good[:-8], "cut short or damaged"),
        (b"\x10\x00", "is not a safetensors file"),
    ]
    for data, said in cases:
        weights.write_bytes(data)
        with pytest.raises(embedding.ModelError, match=said):
            embedding.read_tensor(weights, "embeddings")
    weights.write_bytes(good)
    with pytest.raises(embedding.ModelError, match="no tensor 'weights'.*embeddings"):
        embedding.read_tensor(weights, "weights")
    (folder / "tokenizer.json").unlink()
    with pytest.raises(embedding.ModelError, match="it has no tokenizer.json"):
        embedding.model2vec_files(folder, "models/tiny")


# ---------------------------------------------------------------- the target


def write(root: Path, files: dict[str, str]) -> Workspace:
    write_files(root, files)
    return Workspace(root)


@pytest.fixture
def docs(tmp_path: Path) -> Workspace:
    return write(tmp_path, {"docs/rate-limits.md": RATE_LIMITS, "docs/deploy.md": DEPLOY, "docs/audit.md": AUDIT})


def builtin(workspace: Workspace, **options):
    return open_target(target_info("vectors.query", {"builtin": options}), workspace, 5.0)


def ask(target, query: str, **extra) -> Answer | TargetError:
    ((_, answer),) = list(target.answer_many([Request("c", {"query": query, **extra})]))
    return answer


def test_the_default_searches_by_meaning(docs: Workspace) -> None:
    """With no options the builtin embeds chunks with the packaged model: a question sharing no word
    with the rate limits finds them first, mode semantic, where keyword search ranks another file first."""
    query = "what stops one busy customer from starving everyone else"
    answer = ask(builtin(docs), query)
    assert answer.mode == "semantic"
    first = answer.hits[0]
    assert first.path == "docs/rate-limits.md" and first.id == "docs/rate-limits.md#L1-8" and first.corpus == "code"
    assert first.text.startswith("# Rate limits") and 0 < first.score <= 1
    assert [hit.score for hit in answer.hits] == sorted((hit.score for hit in answer.hits), reverse=True)
    keyword = ask(builtin(docs, retrieval="keyword"), query)
    assert keyword.mode == "keyword" and keyword.hits[0].path != "docs/rate-limits.md"


def test_hybrid_fuses_both_rankings_and_answers_semantic(docs: Workspace) -> None:
    """Hybrid finds what either retrieval finds, a chunk first in both rankings scores 1 at most, and its mode is semantic."""
    target = builtin(docs, retrieval="hybrid")
    meaning = ask(target, "how do we keep a single busy customer from starving the rest")  # no word in common
    words = ask(target, "readiness probe rollout")
    assert meaning.mode == words.mode == "semantic"
    assert meaning.hits[0].path == "docs/rate-limits.md" and words.hits[0].path == "docs/deploy.md"
    # First in both rankings: its meaning scores 1 and its words a share of 1 at most.
    assert 1 - KEYWORD_WEIGHT < words.hits[0].score <= 1
    assert [hit.score for hit in words.hits] == sorted((hit.score for hit in words.hits), reverse=True)


@pytest.mark.parametrize(
    ("options", "corpora", "ahead"),
    [
        ({}, None, True),
        ({"retrieval": "hybrid"}, None, False),
        ({"corpora": {"code": ["**"], "rates": ["docs/rate-*"]}}, ["rates"], False),
        ({"corpora": {"code": ["**"], "rates": ["docs/rate-*"]}}, ["code"], True),
    ],
    ids=["semantic", "hybrid", "part-of-the-index", "corpus-of-the-whole-index"],
)
def test_only_cases_searched_by_meaning_over_the_whole_index_are_ranked_with_their_block(
    docs: Workspace, monkeypatch: pytest.MonkeyPatch, options: dict, corpora: list[str] | None, ahead: bool
) -> None:
    """A run ranks a block of cases at once only for a search by meaning alone over a corpus holding
    every chunk; any other case is ranked on its own, and its answer is the same as one case asked alone."""
    from rag_lsp.core.running.targets import builtin_search

    blocks: list[int] = []
    ranked_together = builtin_search.best_of_block
    monkeypatch.setattr(builtin_search, "best_of_block", lambda scores, *rest: blocks.append(len(scores)) or ranked_together(scores, *rest))
    target = builtin(docs, **options)
    extra = {"corpora": corpora} if corpora else {}
    requests = [Request(str(n), {"query": query, **extra}) for n, query in enumerate(["busy customer starving", "readiness probe", "who changed what"])]
    answers = [answer for _, answer in target.answer_many(requests)]
    assert (sum(blocks) >= len(requests)) == ahead
    for request, answer in zip(requests, answers):
        assert answer == target.answer(request)


def test_hits_are_chunks_of_lines(tmp_path: Path) -> None:
    """A long file is several chunks: each hit names its lines in its id and carries them as its text."""
    lines = [f"filler line {n} about nothing in particular" for n in range(1, 81)]
    lines[59] = "the webhook signature is an HMAC of the body with the shared secret"
    workspace = write(tmp_path, {"src/notify.py": "\n".join(lines) + "\n", "docs/deploy.md": DEPLOY})
    target = builtin(workspace, retrieval="keyword", chunking={"unit": "lines", "size": 20, "overlap": 5})
    answer = ask(target, "webhook signature")
    assert [hit.id for hit in answer.hits] == ["src/notify.py#L46-65"]  # windows start every 15 lines
    assert "HMAC" in answer.hits[0].text and answer.hits[0].text.count("\n") == 19
    whole = ask(builtin(workspace, retrieval="keyword", chunking={"unit": "file"}), "webhook signature")
    assert [hit.id for hit in whole.hits] == ["src/notify.py"]


def test_a_model2vec_folder_of_the_workspace_is_used(tmp_path: Path) -> None:
    """`model:` naming a model2vec folder: "automobile" finds the file about cars, which shares no word with it."""
    workspace = write(tmp_path, {"docs/cars.md": "A car has a wheel.\n", "docs/fruit.md": "A banana is a fruit.\n"})
    write_model(tmp_path / "models" / "tiny")
    answer = ask(builtin(workspace, model="models/tiny", corpora={"docs": ["docs/**"]}), "automobile")
    assert answer.mode == "semantic"
    assert [hit.path for hit in answer.hits] == ["docs/cars.md", "docs/fruit.md"]
    assert answer.hits[0].corpus == "docs"


def test_a_model_that_cannot_be_loaded_falls_back_to_keyword_and_says_so_once(tmp_path: Path) -> None:
    """A model folder that holds no model: the search is by keyword, mode keyword, and the target says why once."""
    workspace = write(tmp_path, {"docs/deploy.md": DEPLOY, "models/broken/config.json": "{}"})
    target = builtin(workspace, model="models/broken")
    first, second = ask(target, "readiness probe"), ask(target, "rollback")
    assert first.mode == second.mode == "keyword" and first.hits[0].path == "docs/deploy.md"
    (note,) = target.take_notes()
    assert "models/broken is not a model2vec model folder: it has no model.safetensors, tokenizer.json" in note
    assert "searches by keyword" in note and target.take_notes() == []
    outside = builtin(workspace, model="../elsewhere")
    assert ask(outside, "rollback").mode == "keyword"
    assert "not a folder of the workspace" in outside.take_notes()[0]


def test_a_corpus_whose_globs_match_no_file_is_said_once(tmp_path: Path) -> None:
    """A corpus glob with a misspelled folder: the case finds nothing, and the target says which corpus holds no file, once."""
    workspace = write(tmp_path, {"docs/deploy.md": DEPLOY})
    target = builtin(workspace, retrieval="keyword", corpora={"code": ["dcos/**"], "docs": ["docs/**"]})
    assert ask(target, "readiness probe", corpora=["code"]).hits == []
    assert ask(target, "readiness probe", corpora=["docs"]).hits[0].path == "docs/deploy.md"
    (note,) = target.take_notes()
    assert note.startswith("target 'vectors.query': corpus 'code' holds no file: its globs (dcos/**) match no text file")
    assert target.take_notes() == []


def test_a_model_fetched_after_a_fallback_is_used_by_the_next_run(tmp_path: Path) -> None:
    """Once the model folder holds a model (its files fetched after a fallback), the same target loads it and
    searches by meaning again."""
    workspace = write(tmp_path, {"docs/cars.md": "A car has a wheel.\n", "docs/fruit.md": "A banana is a fruit.\n"})
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    target = builtin(workspace, model="models/tiny")
    assert ask(target, "automobile").mode == "keyword"
    write_model(tmp_path / "models" / "tiny")
    again = ask(target, "automobile")
    assert again.mode == "semantic" and again.hits[0].path == "docs/cars.md"


def test_the_best_chunk_of_each_file_comes_before_further_chunks(tmp_path: Path) -> None:
    """A long file whose every window is about the question does not fill the first hits: each file's best
    chunk comes first, then the further chunks, with every retrieval."""
    tenant = "Each tenant gets its own token bucket; a burst of requests drains it and it refills.\n"
    workspace = write(
        tmp_path,
        {
            "docs/buckets.md": "".join(tenant.replace("Each", f"Rule {n}: each") for n in range(40)),
            "docs/rate-limits.md": RATE_LIMITS,
            "docs/deploy.md": DEPLOY,
        },
    )
    chunking = {"unit": "lines", "size": 10, "overlap": 2}
    for retrieval in ("semantic", "keyword", "hybrid"):
        answer = ask(builtin(workspace, retrieval=retrieval, chunking=chunking), "token bucket for each tenant", topK=6)
        paths = [hit.path for hit in answer.hits]
        assert paths[0] == "docs/buckets.md", (retrieval, paths)
        assert paths[1] == "docs/rate-limits.md", (retrieval, paths)  # before buckets.md's further chunks
        assert paths.count("docs/buckets.md") == len(paths) - len(set(paths)) + 1, (retrieval, paths)
        assert all(path == "docs/buckets.md" for path in paths[len(set(paths)) :]), (retrieval, paths)


def test_a_run_scores_its_queries_together_as_one_query_at_a_time_would(docs: Workspace) -> None:
    """answer_many (queries embedded and scored by block) answers each case as answer() does alone, and
    a case without a usable query fails alone."""
    target = builtin(docs)
    queries = ["what stops one busy customer from starving everyone else", "rolling out a new version", "tamper proof history"]
    requests = [Request(str(n), {"query": query, "topK": 2}) for n, query in enumerate(queries)]
    requests.insert(1, Request("bad", {"query": "   "}))
    answers = dict(target.answer_many(requests))
    assert isinstance(answers[1], TargetError)
    for position, request in enumerate(requests):
        if position != 1:
            alone = target.answer(request)
            assert [hit.id for hit in answers[position].hits] == [hit.id for hit in alone.hits]
            # One matrix product or a scan per query: the same similarities, to the last bit.
            assert [hit.score for hit in answers[position].hits] == [hit.score for hit in alone.hits]
    assert [answers[n].hits[0].path for n in (0, 2, 3)] == ["docs/rate-limits.md", "docs/deploy.md", "docs/audit.md"]


@pytest.mark.parametrize("retrieval", ["semantic", "keyword", "hybrid"])
def test_a_query_holding_a_lone_surrogate_is_searched_like_its_other_words(docs: Workspace, retrieval: str) -> None:
    """JSON may write half of a character (``"\\ud83d"``): such a query is answered, alone and in a run,
    as the query without it is; the tokenizer, which takes only whole characters, is never given it."""
    target = builtin(docs, retrieval=retrieval)
    plain = "what stops one busy customer from starving everyone else"
    broken = plain.replace("busy", "busy \ud83d")
    requests = [Request("broken", {"query": broken}), Request("plain", {"query": plain.replace("busy", "busy \ufffd")})]
    answers = dict(target.answer_many(requests))
    assert not isinstance(answers[0], TargetError), answers[0]
    assert answers[0] == target.answer(requests[0]) == answers[1]
    assert answers[0].hits and answers[0].mode == ("keyword" if retrieval == "keyword" else "semantic")


def test_a_file_whose_name_is_not_utf8_leaves_the_index_whole(docs: Workspace) -> None:
    """A workspace holding a file whose name is not UTF-8 is indexed and searched (and its cache
    written) without it, instead of every case failing."""
    try:
        (docs.root / "docs" / os.fsdecode(b"rate-limits-\xff.md")).write_text(RATE_LIMITS)
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    answer = ask(builtin(Workspace(docs.root)), "what stops one busy customer from starving everyone else")
    assert not isinstance(answer, TargetError), answer
    assert answer.hits[0].path == "docs/rate-limits.md"
    assert all(hit.path.isascii() for hit in answer.hits)


def test_a_case_input_is_read_as_its_schema_reads_it(docs: Workspace) -> None:
    """topK 2.0 is an integer (to JSON Schema, and so to the check) and is answered; a blank query (which
    the check reports) or an empty corpora list (which a service may read as "all"; the builtin would
    search nothing) is a broken case saying what to write, not a recall of 0."""
    assert len(ask(builtin(docs), "readiness probe", topK=2.0).hits) == 2
    target = builtin(docs, retrieval="keyword")
    empty = ask(target, "readiness probe", corpora=[])
    assert isinstance(empty, TargetError) and "`input.corpora` is empty" in empty.message and "serves: code" in empty.message
    blank = ask(target, " \t ")
    assert isinstance(blank, TargetError) and "not blank" in blank.message


def test_bad_options_are_refused_with_a_message(tmp_path: Path) -> None:
    """An unknown retrieval, bad chunking or an empty model is a TargetError saying what to write instead."""
    workspace = write(tmp_path, {"docs/deploy.md": DEPLOY})
    for options, said in (
        ({"retrieval": "semantik"}, "semantic, keyword or hybrid, not 'semantik'"),
        ({"chunking": {"unit": "lines", "size": 10, "overlap": 12}}, "`chunking.overlap`"),
        ({"model": ""}, "`builtin.model`"),
    ):
        with pytest.raises(TargetError, match=said):
            builtin(workspace, **options)


def test_a_chunk_that_two_corpora_hold_is_one_hit(docs: Workspace) -> None:
    """Corpora whose globs overlap: a case that searches both gets each chunk once, of the corpus it names
    first, so a repeat never takes the place of another chunk."""
    target = builtin(docs, retrieval="keyword", corpora={"docs": ["docs/**"], "all": ["**"]})
    answer = ask(target, "tenant bucket deploy rollout audit log", corpora=["all", "docs"], topK=10)
    ids = [hit.id for hit in answer.hits]
    assert len(ids) == len(set(ids)) == 3
    assert {hit.corpus for hit in answer.hits} == {"all"}
    assert {hit.corpus for hit in ask(target, "tenant bucket", corpora=["docs", "all"]).hits} == {"docs"}


def test_a_model_folder_whose_files_link_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    """A model folder of the workspace whose files are links to a model elsewhere is refused as a folder outside
    it is: the target searches by keyword and says why."""
    elsewhere = tmp_path / "elsewhere"
    write_model(elsewhere)
    root = tmp_path / "workspace"
    workspace = write(root, {"docs/cars.md": "A car has a wheel.\n", "docs/fruit.md": "A banana is a fruit.\n"})
    (root / "models" / "tiny").mkdir(parents=True)
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (root / "models" / "tiny" / name).symlink_to(elsewhere / name)
    target = builtin(workspace, model="models/tiny")
    assert ask(target, "automobile").mode == "keyword"
    (note,) = target.take_notes()
    assert "models/tiny/config.json is a link out of the workspace" in note
    # The check says so first, on the `model` value.
    (root / ".punica").mkdir()
    (root / ".punica" / "targets.yaml").write_text("targets:\n  vectors.query:\n    builtin: {model: models/tiny}\n", encoding="utf-8")
    (finding,) = analyze_file(Workspace(root), ".punica/targets.yaml")
    assert finding.code == "RAG004" and "config.json, model.safetensors, tokenizer.json link out of the workspace" in finding.message
