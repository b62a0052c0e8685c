"""The ``builtin`` target, the embedded default: search over the workspace's files
by meaning (a static embedding model), by keyword (BM25), or both.

```yaml
targets:
  vectors.query:
    builtin:
      corpora: {code: ["src/**", "docs/**"]}
      retrieval: semantic        # semantic (default) | keyword | hybrid
      model: wordllama           # the default; or a workspace folder holding a model2vec static model
      chunking: {unit: lines, size: 60, overlap: 12}  # the default; or {unit: file}
```

With no config, ``vectors.query`` is this target over the whole workspace as
corpus ``code``.

A corpus may instead be a JSON Lines file of documents, one ``{"_id", "title",
"text"}`` object per line (a BEIR ``corpus.jsonl``, what ``rag-lsp import``
writes):

```yaml
      corpora: {scifact: {documents: .punica/corpora/scifact.jsonl}}
```

Each document is one chunk and one hit: ``id`` is its ``_id``, ``path`` the
documents file, ``text`` its title and text; so suites with ``match: id`` run
against it with no service. ``chunking`` applies to files, not to documents. A corpus holds the workspace's text files its globs match,
leaving out ``.punica/`` and every hidden file or folder, VCS folders,
virtualenvs, dependencies, git-ignored files (the workspace's file list already
skips those) and binary files (a NUL byte, or not UTF-8). Files are cut into
chunks (:mod:`.chunking`), and a hit is a chunk: ``path`` (workspace-relative,
"/"), ``id`` (``path#L<first>-<last>``, or the path for whole files), ``corpus``,
``score`` and ``text`` (the chunk's lines).

* ``semantic``: each chunk is embedded with the model (:mod:`.embedding`) in the
  context of its file's path and of its whole file (:func:`.index.contextual`),
  and a query's hits are its nearest chunks by cosine similarity, the nearest
  ranked again by matching the query's tokens one by one with theirs
  (:func:`.ranking.reranked`, :meth:`.embedding.StaticModel.matching`);
  ``mode: semantic``. When the model cannot be loaded, the target searches by
  keyword, answers ``mode: keyword`` and says why once
  (:meth:`BuiltinTarget.take_notes`): the fallback that a ``rag.mode.semantic``
  threshold exists to catch.
* ``keyword``: chunks are split into words, code identifiers into their parts
  (``rateLimit``, ``rate_limit`` → ``rate``, ``limit``), English stop words
  dropped and the rest stemmed (Snowball), then ranked with BM25 (``bm25s``,
  :mod:`.keyword`); chunks that share no word with the query are not hits;
  ``mode: keyword``.
* ``hybrid``: both rankings fused, the keyword ranking weighing as much as
  keyword search is sure of itself: much when a chunk holds most of the
  query's words, little when its best shares a word or two with it
  (:func:`.ranking.fused_by_confidence`); ``mode: semantic``.

Whatever the retrieval, the hits list each file's best chunk first, best first,
then the files' further chunks (:meth:`.ranking.Ranked.file_first`, among the best
``5 × topK`` chunks): the first hits name as many files as match rather than
several windows of the one file that matches best. A run embeds its queries
thousands at a time (or splits them into terms), scores a block of them together
(by meaning, by one matrix product) and ranks the block together
(:func:`.ranking.best_of_block`), so each case is left only its hits to make.

A case's ``input`` is ``{"query": str, "corpora": [str, ...], "topK": int}``:
``corpora`` picks the corpora to search (default: all of them), ``topK`` the number
of hits (default 10).

The index is built by the first run (:meth:`BuiltinTarget.prepare`, which
reports progress), kept, and cached between processes (:mod:`.index`): before
each run (and before a single case, at most every two seconds) the corpus files
are looked at again, and new or changed files are indexed again.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

import numpy

from ...workspace.files import globs_matcher, hidden
from ...workspace.suitefacts import BUILTIN_FIELDS, TargetInfo
from ...workspace.workspace import Workspace
from .base import Answer, Cancelled, Hit, Request, Target, TargetError
from .builtin_options import HYBRID, SEMANTIC, BuiltinOptions
from .builtin_search import (
    NOT_SCORED,
    NOTHING_AHEAD,
    Named,
    Queries,
    State,
    queries_of,
    ranked_alone,
    ranked_with_its_block,
    score_queries,
)
from ...search.keyword import Analyzer, KeywordIndex

log = logging.getLogger(__name__)

DEFAULT_TOP_K = 10
# How long a checked index is trusted without looking at the files again.
_RECHECK_S = 2.0
# Cases of a run whose queries are embedded together, at most (a megabyte of
# vectors per thousand): the tokenizer's threads and the matrix products' threads
# each slow the other down for a moment whenever one follows the other, so they
# take turns seldom. Then the cases scored and ranked together, at most, and the
# similarities computed at once, at most (4 bytes each).
_QUERIES_EMBEDDED_TOGETHER = 8192
_QUERIES_PER_BLOCK = 512
_SCORES_PER_BLOCK = 1 << 23
# The scores of a keyword search's block, at most (4 bytes each): a few
# megabytes, written again from block to block (see KeywordIndex.block_scores).
_KEYWORD_SCORES_PER_BLOCK = 1 << 20

Building = Callable[[int, int], None]


class BuiltinTarget(Target):
    kind = "builtin"

    def __init__(self, info: TargetInfo, workspace: Workspace, timeout_s: float) -> None:
        super().__init__(info, workspace, timeout_s)
        self.options = BuiltinOptions.from_config(info)
        self.corpora = self.options.corpora
        # What a case that names no corpus searches (read, never changed).
        self._every_corpus = list(self.corpora)
        self.fields = BUILTIN_FIELDS
        self._analyzer: Analyzer | None = None
        self._builder: Any = None  # index.IndexBuilder, made once the model is known
        # The model's files when the builder was made (see BuiltinOptions.model_stamp).
        self._stamp: str | None = None
        self._model: Any = None
        # Why the model could not be loaded (then the search is by keyword).
        self._fallback: str | None = None
        self._state: State | None = None
        # The index `prepare` just brought up to date: the next run answers from it.
        self._prepared = False
        self._notes: list[str] = []
        self._said: set[str] = set()
        self._lock = threading.Lock()

    # -------------------------------------------------- notes

    def _note(self, text: str) -> None:
        if text not in self._said:
            self._said.add(text)
            self._notes.append(text)
            log.info("%s", text)

    def take_notes(self) -> list[str]:
        with self._lock:
            notes, self._notes = self._notes, []
        return notes

    # -------------------------------------------------- the index

    def _candidates(self) -> list[str]:
        """Workspace files a corpus may hold: not .punica/, not hidden."""
        return [relative for relative in self.workspace.files() if not hidden(relative)]

    def _ensure_builder(self) -> Any:
        stamp = self.options.model_stamp(self.workspace)
        if self._builder is not None and stamp == self._stamp:
            return self._builder
        # First use, or the model's files changed (a model fetched after a fallback,
        # or replaced): the index is the new model's.
        from ...search.index import CacheDirError, IndexBuilder, IndexCache

        self._stamp = stamp
        self._fallback = None
        options = self.options
        model = None
        if options.retrieval in (SEMANTIC, HYBRID):
            model = self._load_model()
        root = self.workspace.root
        limit = self.workspace.settings.max_file_bytes
        documents = frozenset(options.documents.values())
        if model is None:
            self._builder = IndexBuilder(root, options.chunking, limit, documents=documents)
        else:
            try:
                cache = IndexCache.for_key(self.options.cache_key(self.workspace, model.identity))
            except CacheDirError as error:
                log.warning("%s: the index is built without a cache", error)
                cache = None
            self._builder = IndexBuilder(
                root,
                options.chunking,
                limit,
                model.embed_chunks,
                model.dim,
                cache,
                model.embed_paths,
                model.terms_shape,
                model.embed_chunks_soon,
                documents,
            )
        self._model = model
        return self._builder

    def _load_model(self) -> Any:
        from ...search import embedding

        try:
            return embedding.load(self.options.model_files(self.workspace))
        except embedding.ModelError as error:
            self._fallback = error.message
        except Exception as error:  # noqa: BLE001 - a model that fails to load is a fallback, never a crash
            self._fallback = f"{type(error).__name__}: {error}"
        self._note(
            f"target {self.id!r}: its embedding model cannot be loaded: {self._fallback}; it searches by keyword "
            "instead and answers `mode: keyword`"
        )
        return None

    def refresh(self, force: bool = False, progress: Building | None = None, cancel: threading.Event | None = None) -> None:
        """Index the corpora's files as they are now (new and changed files only)."""
        now = time.monotonic()
        state = self._state
        if not force and state is not None and now - state.checked_at < _RECHECK_S:
            return
        builder = self._ensure_builder()
        candidates = self._candidates()
        documents = self.options.documents
        matches = globs_matcher(pattern for name, patterns in self.corpora.items() if name not in documents for pattern in patterns)
        files = set(documents.values())
        paths = [relative for relative in candidates if relative not in files and matches(relative)]
        # A documents file is read where it is (.punica/ included), but only inside the workspace.
        paths += sorted(file for file in files if self.workspace.contains(self.workspace.absolute(file)))
        keyword = self._model is None or self.options.retrieval == HYBRID
        from ...search.index import BuildCancelled

        try:
            outcome = builder.refresh(paths, progress, with_texts=keyword, cancel=cancel)
        except BuildCancelled as cancelled:
            raise Cancelled(str(cancelled)) from None
        if outcome.cache_problem:
            self._note(f"target {self.id!r}: {outcome.cache_problem}")
        index = outcome.index
        if state is not None and state.index is index:
            state.checked_at = time.monotonic()
            return
        self._hold(index, builder, keyword, time.monotonic())

    def _hold(self, index: Any, builder: Any, keyword: bool, checked_at: float) -> None:
        """Answer from ``index`` from now on (its corpora's rows, and a keyword
        ranking when ``keyword``)."""
        rows: dict[str, Any] = {}
        import numpy

        documents = frozenset(self.options.documents.values())
        for name, patterns in self.corpora.items():
            file = self.options.documents.get(name)
            if file is not None:
                held = [position for position, entry in enumerate(index.files) if entry.rows and entry.path == file]
                if not held:
                    self._note(
                        f"target {self.id!r}: corpus {name!r} holds no document: {file} is not a file of the workspace, "
                        'or none of its lines is a document ({"_id", "title", "text"})'
                    )
            else:
                matches = globs_matcher(patterns)
                held = [
                    position
                    for position, entry in enumerate(index.files)
                    if entry.rows and entry.path not in documents and matches(entry.path)
                ]
            if not held and file is None:
                # Its cases find nothing: a recall of 0 that says nothing of the search.
                self._note(
                    f"target {self.id!r}: corpus {name!r} holds no file: its globs ({', '.join(patterns)}) match no "
                    "text file the builtin target searches (`rag-lsp check` says which glob)"
                )
            if len(held) == sum(1 for entry in index.files if entry.rows):
                rows[name] = None
            else:
                mask = numpy.isin(index.row_file, numpy.array(held, dtype=numpy.int32))
                rows[name] = numpy.flatnonzero(mask)
        retriever = None
        if keyword and index.size:
            retriever = KeywordIndex(index.texts or [], self._terms())
        paths = [entry.path for entry in index.files]
        matches = self._model.matching_over(index.terms) if self._model is not None and index.terms is not None else None
        groups = index.row_file
        in_documents = [position for position, entry in enumerate(index.files) if entry.rows and entry.path in documents]
        if in_documents:
            groups = index.row_file.copy()
            mask = numpy.isin(groups, numpy.array(in_documents, dtype=numpy.int32))
            groups[mask] = len(index.files) + numpy.arange(int(mask.sum()), dtype=numpy.int32)
        held_documents = frozenset(paths[position] for position in in_documents)
        self._state = State(index, rows, self._model, retriever, checked_at, builder, paths, matches, groups, held_documents)

    def load_cached(self, loading: Callable[[], None] | None = None) -> bool:
        """Hold the index the cache keeps for these options and this model, as it
        is: no file is read and nothing is embedded, so it may lag behind the files
        (the next run brings it up to date). Only a semantic search has a cached
        index; the model is loaded only when the cache holds one. Whether an index
        is held now. ``loading()`` is called once the cache is found, before the
        model and the index are loaded."""
        with self._lock:
            if self._state is not None:
                return True
            if self.options.retrieval != SEMANTIC:
                return False
            from ...search import embedding
            from ...search.index import CacheDirError, IndexCache

            try:
                identity = self.options.model_files(self.workspace).identity
            except (embedding.ModelError, OSError):
                return False
            try:
                if not IndexCache.for_key(self.options.cache_key(self.workspace, identity)).meta_path.is_file():
                    return False
            except CacheDirError:
                return False
            if loading is not None:
                loading()
            builder = self._ensure_builder()
            if self._model is None:
                return False
            index = builder.load_cached()
            if index is None:
                return False
            # Looked at long ago: the next answer looks at the files again.
            self._hold(index, builder, False, -_RECHECK_S)
            return True

    def built_answer(self, value: Any) -> Answer | None:
        """The answer to a case ``input`` from the index this target already holds,
        each hit with its text; None when it holds none yet, is building one now,
        or the input cannot be asked. Never builds, updates or waits: for an editor
        that suggests while the user types."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            state = self._state
            if state is None:
                return None
            try:
                request = Request("", value)
                self._read_input(request.input)
            except TargetError:
                return None
            return self._answer(request, state, with_text=True, shared=True)
        finally:
            self._lock.release()

    def _terms(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = Analyzer()
        return self._analyzer

    def prepare(self, progress: Building | None = None, cancel: threading.Event | None = None) -> None:
        """Bring the index up to date now, reporting ``progress(files read, files to
        read)``; the next run answers from it without looking at the files again.
        Raises Cancelled once ``cancel`` is set (the index keeps what it had)."""
        with self._lock:
            self.refresh(force=True, progress=progress, cancel=cancel)
            self._prepared = True

    def held_files(self) -> frozenset[str] | None:
        state = self._state
        if state is None:
            return None
        return frozenset(entry.path for entry in state.index.files if entry.rows)

    # -------------------------------------------------- answering

    def answer(self, request: Request) -> Answer:
        with self._lock:
            self.refresh()
            state = self._state
        assert state is not None
        return self._answer(request, state, with_text=True)

    def _answer(
        self,
        request: Request,
        state: State,
        with_text: bool,
        shared: bool = False,
        scored: Any = NOT_SCORED,
        named: Named | None = None,
        read: tuple[str, list[str], int] | None = None,
    ) -> Answer:
        """The answer to one case from ``state``; hits without their ``text`` unless
        asked for. ``shared``: another thread may be answering from ``state`` too,
        so the texts are read without the builder's cache of file lines. ``scored``:
        the query's similarities to every chunk and its best chunks, when they were
        computed already with those of its block (see score_queries). ``named``:
        the paths and ids of the chunks a run has named so far (see Named).
        ``read``: the request's input, read already (see _embed_queries)."""
        if read is None:
            read = self._read_input(request.input)
        query, names, top_k = read
        semantic_scores = best = None
        if scored is NOT_SCORED and state.index.size and (state.model is not None or ranked_with_its_block(names, state)):
            alone = queries_of([(request, read)], state)
            scored = score_queries([request], state, alone).get(id(request), NOTHING_AHEAD)
        if scored is not NOT_SCORED:
            semantic_scores, best = scored
        if best is not None:
            # By one retrieval alone over the whole index, as most cases are:
            # ranked with its block (see ranked_with_its_block).
            return self._answer_ranked(best, names[0], state, with_text, shared, named)
        ranked = ranked_alone(query, names, top_k, state, semantic_scores)
        return Answer(self._hits(ranked.rows, ranked.scores, ranked.corpora, state, with_text, shared, named), state.mode)

    def _answer_ranked(
        self, best: tuple[list[int], list[float]], corpus: str, state: State, with_text: bool, shared: bool, named: Named | None
    ) -> Answer:
        """The answer of a case ranked with its block: its ``best`` rows and their
        shown scores (see best_of_block), all of ``corpus``."""
        rows, shown = best
        return Answer(self._hits(rows, shown, [corpus] * len(rows), state, with_text, shared, named), state.mode)

    def _hits(
        self, rows: list[int], scores: list[float], corpora: list[str], state: State, with_text: bool, shared: bool, named: Named | None
    ) -> list[Hit]:
        """The hits of chunks ``rows`` with their scores and corpora, in that order;
        ``named``: what a run has named so far (see Named)."""
        index = state.index
        paths, ids = (named if named is not None else Named()).of(rows, state, self.options.chunking)
        if not with_text:
            return list(map(Hit, paths, ids, corpora, scores))
        texts = [state.builder.chunk_text(index, row, cached=not shared) for row in rows]
        return list(map(Hit, paths, ids, corpora, scores, texts))

    def answer_many(self, requests, cancel=None, concurrency=1, fields=None):
        if cancel is not None and cancel.is_set():
            return
        with self._lock:
            try:
                if not self._prepared:
                    self.refresh(force=True)
            except Exception as error:  # noqa: BLE001 - an index that cannot be built fails each case
                log.exception("the builtin index of %s could not be built", self.id)
                failure = TargetError(f"the builtin index could not be built: {type(error).__name__}: {error}")
                for index in range(len(requests)):
                    yield index, failure
                return
            finally:
                self._prepared = False
            # A run answers from the index as it was when it began: looking at every
            # file again every few seconds would cost more than the run's own work.
            state = self._state
        with_text = fields is None or "text" in fields
        if not state.index.size:
            yield from self._one_after_the_other(requests, cancel, lambda request: self._answer(request, state, with_text))
            return
        # The queries of a group of cases are embedded (or split into terms)
        # together, then scored against every chunk a block at a time and ranked
        # together; then each case's hits are made.
        named = Named()
        expanded = room = None
        if state.model is not None:
            per_block = max(1, min(_QUERIES_PER_BLOCK, _SCORES_PER_BLOCK // state.index.size))
            # The index's codes as floats, for the blocks' matrix products: made
            # once for the run, and let go with it.
            expanded = state.index.vectors.expanded()
        else:
            per_block = max(1, min(_QUERIES_PER_BLOCK, _KEYWORD_SCORES_PER_BLOCK // state.index.size))
            room = numpy.empty((per_block, state.index.size), dtype=numpy.float32)
        for group_start in range(0, len(requests), _QUERIES_EMBEDDED_TOGETHER):
            group = requests[group_start : group_start + _QUERIES_EMBEDDED_TOGETHER]
            queries = self._embed_queries(group, state)
            for start in range(0, len(group), per_block):
                block = group[start : start + per_block]
                scores = score_queries(block, state, queries, expanded, room)

                def answer(request: Request) -> Answer:
                    key = id(request)
                    scored = scores.get(key, NOT_SCORED)
                    read = queries.inputs.get(key)
                    if type(scored) is tuple and scored[1] is not None and read is not None:
                        # Ranked with its block, as most cases are: its hits straight away.
                        return self._answer_ranked(scored[1], read[1][0], state, with_text, False, named)
                    return self._answer(request, state, with_text, scored=scored, named=named, read=read)

                for position, result in self._one_after_the_other(block, cancel, answer):
                    yield group_start + start + position, result
                if cancel is not None and cancel.is_set():
                    return

    def _embed_queries(self, requests: list[Request], state: State) -> Queries:
        """The vectors of the requests' queries (of those whose input _read_input
        reads), by one call of the model, or their terms on a keyword search; and
        the topK of those ranked with their block."""
        read = []
        for request in requests:
            try:
                read.append((request, self._read_input(request.input)))
            except TargetError:
                continue  # the case is answered with its error (see _answer)
        return queries_of(read, state)

    def _read_input(self, value: Any) -> tuple[str, list[str], int]:
        if not isinstance(value, dict):
            raise TargetError("the builtin target needs an `input` object with a `query` string")
        query = value.get("query")
        if not isinstance(query, str) or not query.strip():
            raise TargetError("the builtin target needs `input.query`, a string that is not blank")
        names = value.get("corpora")
        # A case that names no corpus searches them all (most cases).
        names = self._every_corpus if names is None else self._named_corpora(names)
        top_k = value.get("topK", DEFAULT_TOP_K)
        if type(top_k) is float and top_k.is_integer():
            top_k = int(top_k)  # 10.0 is an integer to JSON Schema, and so to the check
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise TargetError("`input.topK` must be an integer of at least 1")
        return query, names, top_k

    def _named_corpora(self, names: Any) -> list[str]:
        """The corpora a case's ``input.corpora`` names, each once; TargetError
        when it is not a list of corpora this target serves."""
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise TargetError("`input.corpora` must be a list of corpus names")
        if not names:
            # Searching no corpus would find nothing, and score a recall of 0.
            raise TargetError(
                f"`input.corpora` is empty: name the corpora to search (the builtin target {self.id!r} serves: "
                f"{', '.join(self.corpora)}), or leave the key out to search them all"
            )
        unknown = [name for name in names if name not in self.corpora]
        if unknown:
            served = ", ".join(self.corpora)
            raise TargetError(
                f"the builtin target {self.id!r} has no corpus {', '.join(map(repr, unknown))}; it serves: {served} "
                "(configure corpora under `builtin.corpora` in .punica/targets.yaml)"
            )
        return list(dict.fromkeys(names))
