"""The builtin target's keyword search: text to terms (:class:`Analyzer`) and BM25
over the index's chunks (:class:`KeywordIndex`, by ``bm25s``), scored one query
at a time or a block of queries at a time."""

from __future__ import annotations

import re
from typing import Sequence

import numpy

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_A-Za-z]+")

# A term found in at least this share of the chunks has its scores of every chunk
# held as one row (4 bytes a chunk, at most twice what bm25s holds of it): adding
# a row is several times faster than adding the scores of its chunks one by one,
# as bm25s does. At most this many bytes of such rows, the most frequent terms
# first.
_DENSE_SHARE = 0.25
_DENSE_BYTES = 32 << 20


class Analyzer:
    """Text to index terms: words, identifier parts, no stop words, Snowball stems."""

    def __init__(self) -> None:
        import snowballstemmer
        from bm25s.stopwords import STOPWORDS_EN

        self._stemmer = snowballstemmer.stemmer("english")
        self._stop = frozenset(STOPWORDS_EN)
        self._stems: dict[str, str] = {}

    def terms(self, text: str) -> list[str]:
        out: list[str] = []
        stems = self._stems
        for word in _WORD.findall(text):
            parts = _CAMEL.findall(word) if not word.islower() and not word.isupper() else [word]
            if len(parts) > 1:
                parts.append(word)  # the whole identifier too: "ratelimit" finds `rateLimit`
            for part in parts:
                token = part.lower()
                if len(token) < 2 or token in self._stop:
                    continue
                stem = stems.get(token)
                if stem is None:
                    stem = stems[token] = self._stemmer.stemWord(token)
                out.append(stem)
        return out


class KeywordIndex:
    """BM25 scores of chunks for a query's terms (bm25s's, to the last bit: each
    term's scores are added in the query's order, as bm25s adds them)."""

    def __init__(self, texts: Sequence[str], analyzer: Analyzer) -> None:
        import bm25s

        self._analyzer = analyzer
        retriever = bm25s.BM25()
        retriever.index([analyzer.terms(text) or [""] for text in texts], show_progress=False)
        self._vocabulary: dict[str, int] = retriever.vocab_dict
        scores = retriever.scores
        self._data = scores["data"]
        self._chunks = scores["indices"]
        self._starts = scores["indptr"].tolist()
        self.size = int(scores["num_docs"])
        self._rows = self._dense_rows()
        # Each term's highest score of any chunk (see attainable), made when first asked.
        self._best: numpy.ndarray | None = None

    def _dense_rows(self) -> dict[int, numpy.ndarray]:
        """The scores of every chunk of the terms found in many chunks, by term."""
        starts = numpy.asarray(self._starts)
        found_in = numpy.diff(starts)
        row_bytes = 4 * self.size
        frequent = numpy.flatnonzero(found_in >= max(1, _DENSE_SHARE * self.size))
        frequent = frequent[numpy.argsort(-found_in[frequent], kind="stable")][: _DENSE_BYTES // max(1, row_bytes)]
        rows: dict[int, numpy.ndarray] = {}
        for term in frequent.tolist():
            row = numpy.zeros(self.size, dtype=numpy.float32)
            start, end = self._starts[term], self._starts[term + 1]
            row[self._chunks[start:end]] = self._data[start:end]
            rows[term] = row
        return rows

    def query_terms(self, query: str) -> list[int]:
        """The ids of the terms of ``query`` the index knows, in its order, repeats
        kept (a term said twice counts twice, as in bm25s)."""
        vocabulary = self._vocabulary
        return [vocabulary[term] for term in self._analyzer.terms(query) if term in vocabulary]

    def attainable(self, query: str, terms: list[int]) -> float:
        """What ``query`` could score, its terms being ``terms`` (see
        query_terms): the sum of each term's highest score of any chunk, raised
        in proportion to the query's words the index does not know (a question
        half of whose words no chunk holds is matched by half at best); 0 when
        the index knows none of them."""
        if not terms:
            return 0.0
        best = self._best
        if best is None:
            starts = numpy.asarray(self._starts)
            best = numpy.zeros(len(starts) - 1, dtype=numpy.float64)
            held = numpy.flatnonzero(numpy.diff(starts) > 0)
            if held.size:
                # Empty ranges between the held ones are of no length: each
                # reduced segment is its own term's.
                best[held] = numpy.maximum.reduceat(numpy.asarray(self._data, dtype=numpy.float64), starts[held])
            self._best = best
        words = len(self._analyzer.terms(query))
        return float(best[terms].sum()) * max(1.0, words / len(terms))

    def scores(self, terms: list[int], out: numpy.ndarray | None = None) -> numpy.ndarray:
        """Each chunk's score for a query of ``terms`` (see query_terms): 0 for a
        chunk that holds none of them. Written into ``out`` when given."""
        if out is None:
            out = numpy.zeros(self.size, dtype=numpy.float32)
        else:
            out.fill(0)
        rows = self._rows
        for term in terms:
            row = rows.get(term)
            if row is not None:
                out += row
            else:
                start, end = self._starts[term], self._starts[term + 1]
                out[self._chunks[start:end]] += self._data[start:end]
        return out

    def block_scores(self, queries: list[list[int]], out: numpy.ndarray) -> numpy.ndarray:
        """The scores of a block of queries (see scores), a row each, written into
        the first rows of ``out`` (kept by the caller from block to block: a fresh
        array of megabytes costs the memory's first touch each time)."""
        block = out[: len(queries)]
        for row, terms in zip(block, queries):
            self.scores(terms, row)
        return block
