"""Byte-pair merging: symbols (token ids) merged pair by pair, the pair of the
lowest rank first and the leftmost of equal ones, as the ``tokenizers``
package's BPE model merges them.

One piece is merged in plain Python (``Merges.merged``: few symbols by looking
for the best pair afresh after each merge, more with a queue of the pairs, as
the library does); the new pieces of a batch, short ones, are merged together
in numpy, a merge of each piece per step (``Merges.merged_many``), which runs
without the interpreter's lock.
"""

from __future__ import annotations

import heapq
import itertools

import numpy

from .arrays import repeated, starts_of
from .hashing import Table

# A piece of at most this many symbols is merged by looking for its best
# pair afresh after each merge (see Merges.merged, Merges.merged_many), a
# longer one with a queue of its pairs.
_FEW_SYMBOLS = 48
# New pieces of a batch merged together in numpy from this many on; fewer, one
# by one in Python.
_MERGED_TOGETHER = 64
# Above any merge's number (see Merges.ranks).
_NO_MERGE = 1 << 128


class Merges:
    """A tokenizer's merges by their pairs of ids, and symbols merged by them."""

    def __init__(self, left: numpy.ndarray, right: numpy.ndarray, made: numpy.ndarray, stride: int) -> None:
        """Each merge's ``left``, ``right`` and ``made`` ids, in rank order;
        ``stride``: above every id."""
        # A pair of ids (left * stride + right) -> its merge's rank * stride + the
        # merged id (so the lower rank is the lower number); a pair listed twice
        # keeps its last rank, as the library's map does.
        keys, numbers = left * stride + right, numpy.arange(len(made), dtype=numpy.int64) * stride + made
        self.ranks: dict[int, int] = dict(zip(keys.tolist(), numbers.tolist()))
        self.stride = stride
        # Above any merge's number, for numpy (see merged_many).
        self.no_pair = len(made) * stride
        # The ranks in a table for numpy (see merged_many), made when first used.
        self._pairs: Table | None = None

    def merged_pieces(self, symbols: numpy.ndarray, counts: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """Pieces (their ``symbols`` laid end to end, ``counts`` of them each)
        merged: those of few symbols together (see merged_some), each longer
        one on its own (a queue of its pairs). Which pieces, in the order their
        ids come; the ids laid end to end; their count per piece."""
        few = counts <= _FEW_SYMBOLS
        order = [numpy.flatnonzero(few)]
        merged = [self.merged_some(symbols[repeated(few, counts)], counts[few])]
        bounds = starts_of(counts).tolist()
        for at in numpy.flatnonzero(~few).tolist():
            ids = self.merged(symbols[bounds[at] : bounds[at + 1]].tolist())
            order.append(numpy.array([at], dtype=numpy.int64))
            merged.append((numpy.asarray(ids, dtype=numpy.int64), numpy.array([len(ids)], dtype=numpy.int64)))
        return numpy.concatenate(order), numpy.concatenate([ids for ids, _ in merged]), numpy.concatenate([part for _, part in merged])

    def merged_some(self, symbols: numpy.ndarray, counts: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        """Pieces of few symbols merged: together (in numpy) when there are
        many, else one by one (numpy's cost per call outweighs a few pieces)."""
        if len(counts) >= _MERGED_TOGETHER and self.ranks:
            # At most so many symbols a call: a pair's merge times the symbols
            # of the call fits in 63 bits (see merged_many).
            most = max((1 << 62) // (self.no_pair + 1), _FEW_SYMBOLS)
            bounds = starts_of(counts)
            cuts = [0]
            while cuts[-1] < len(counts):
                cuts.append(max(int(numpy.searchsorted(bounds, bounds[cuts[-1]] + most, side="right")) - 1, cuts[-1] + 1))
            parts = [self.merged_many(symbols[bounds[a] : bounds[b]], counts[a:b]) for a, b in zip(cuts, cuts[1:])]
            return numpy.concatenate([ids for ids, _ in parts]), numpy.concatenate([part for _, part in parts])
        bounds_list = starts_of(counts).tolist()
        every = symbols.tolist()
        lists = [self.merged(every[start:end]) for start, end in zip(bounds_list, bounds_list[1:])]
        out_counts = numpy.fromiter(map(len, lists), dtype=numpy.int64, count=len(lists))
        return numpy.fromiter(itertools.chain.from_iterable(lists), dtype=numpy.int64, count=int(out_counts.sum())), out_counts

    def merged_many(self, symbols: numpy.ndarray, counts: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        """Pieces (their ``symbols`` laid end to end, ``counts`` of them each)
        merged as merged merges each, all at once: at each step, each piece's
        pair of the lowest rank (the leftmost of equal ones) is merged, and a
        piece with no pair left to merge is set aside. The ids, laid end to
        end, and their count per piece."""
        if self._pairs is None:
            # The merges by their pairs, for numpy: made at the first use.
            self._pairs = Table(load=4)
            self._pairs.put(numpy.fromiter(self.ranks, dtype=numpy.uint64, count=len(self.ranks)), numpy.fromiter(self.ranks.values(), dtype=numpy.int64, count=len(self.ranks)))
        pairs = self._pairs
        stride = self.stride
        none = self.no_pair

        def merges_of(left: numpy.ndarray, right: numpy.ndarray) -> numpy.ndarray:
            merges = pairs.found((left * stride + right).astype(numpy.uint64))
            merges[merges < 0] = none
            return merges

        count = len(counts)
        # A piece of no symbol (its characters left out) has no id.
        pieces = numpy.flatnonzero(counts)
        counts = counts[pieces]
        symbols = symbols.copy()
        ends = numpy.cumsum(counts)
        # The merge of each pair (a symbol and the next in its piece), else none.
        merges = numpy.full(symbols.size, none, dtype=numpy.int64)
        if symbols.size > 1:
            merges[:-1] = merges_of(symbols[:-1], symbols[1:])
        merges[ends - 1] = none
        done_pieces, done_symbols, done_counts = [], [], []
        while pieces.size:
            size = symbols.size
            starts = ends - counts
            if pieces.size <= _MERGED_TOGETHER // 2:
                # The last few pieces (the longest) one by one: numpy's steps would cost more.
                bounds = starts_of(counts).tolist()
                every = symbols.tolist()
                lists = [self.merged(every[start:end]) for start, end in zip(bounds, bounds[1:])]
                done_pieces.append(pieces)
                done_counts.append(numpy.fromiter(map(len, lists), dtype=numpy.int64, count=len(lists)))
                done_symbols.append(numpy.fromiter(itertools.chain.from_iterable(lists), dtype=numpy.int64, count=int(done_counts[-1].sum())))
                break
            # Each piece's best pair: the lowest merge, the leftmost of equal ones.
            best = numpy.minimum.reduceat(merges * size + numpy.arange(size, dtype=numpy.int64), starts)
            going = best < none * size
            if not going.all():
                finished = ~going
                done_pieces.append(pieces[finished])
                done_symbols.append(symbols[repeated(finished, counts)])
                done_counts.append(counts[finished])
                if not going.any():
                    break
            at = best[going] % size
            first, end = starts[going], ends[going]
            symbols[at] = merges[at] % stride
            # The merged symbol's pairs with the symbols on either side of it
            # (the one after it goes), looked up together.
            before, after = at[at > first] - 1, at[at + 2 < end]
            merges[at] = none
            lefts = numpy.concatenate((before, after))
            merges[lefts] = merges_of(symbols[lefts], symbols[numpy.concatenate((before + 1, after + 2))])
            kept = repeated(going, counts)
            kept[at + 1] = False
            symbols, merges = symbols[kept], merges[kept]
            pieces, counts = pieces[going], counts[going] - 1
            ends = numpy.cumsum(counts)
        order = numpy.concatenate(done_pieces) if done_pieces else pieces
        out_counts = numpy.zeros(count, dtype=numpy.int64)
        out_counts[order] = numpy.concatenate(done_counts) if done_counts else counts
        # Each piece's ids, in the order of the pieces.
        places = numpy.argsort(repeated(order, out_counts[order]), kind="stable")
        out = numpy.concatenate(done_symbols) if done_symbols else symbols
        return out[places], out_counts

    def merged(self, symbols: list[int]) -> list[int]:
        """``symbols`` merged pair by pair, the pair of the lowest rank first and
        the leftmost of equal ones, as the library's queue of merges does."""
        if len(symbols) < 2:
            return symbols
        ranks, stride, none = self.ranks, self.stride, _NO_MERGE
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
