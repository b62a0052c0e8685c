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
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy

from ...workspace.files import globs_matcher, hidden
from ...workspace.modelfiles import files_outside
from ...reading.paths import normalize_relative
from ...workspace.suitefacts import BUILTIN_FIELDS, TargetInfo
from ...workspace.workspace import Workspace
from .base import Answer, Cancelled, Hit, Request, Target, TargetError
from ...workspace.chunking import Chunking, ChunkingError, chunk_ids
from ...search.keyword import Analyzer, KeywordIndex
from ...search.ranking import RERANKED, Ranked, best_of_block, fused_by_confidence, reranked, top_rows

log = logging.getLogger(__name__)

SEMANTIC = "semantic"
KEYWORD = "keyword"
HYBRID = "hybrid"
RETRIEVALS = (SEMANTIC, KEYWORD, HYBRID)
DEFAULT_TOP_K = 10
# How long a checked index is trusted without looking at the files again.
_RECHECK_S = 2.0
# How deep each ranking is read before a hybrid fuses them.
_FUSION_DEPTH = 100
# Chunks read per hit asked for: a file's further chunks give way to other files'
# best chunks among them.
_CANDIDATES_PER_HIT = 5
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
# An answer whose query is not scored yet; what is scored ahead of a query with
# no token the model knows, or of a keyword query ranked on its own (see
# _ranked): no similarities and no ranking.
_NOT_SCORED = object()
_NOTHING_AHEAD = (None, None)

Building = Callable[[int, int], None]


@dataclass(frozen=True)
class BuiltinOptions:
    corpora: dict[str, list[str]]
    retrieval: str = SEMANTIC
    model: str = "wordllama"
    chunking: Chunking = field(default_factory=Chunking)
    # Corpus name -> the documents file it is (see the module's docstring); such
    # a corpus is also in ``corpora``, its one "glob" the file's path.
    documents: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_config(cls, info: TargetInfo) -> BuiltinOptions:
        """The options of a builtin target; TargetError saying what is wrong with them."""
        builtin = info.config.get("builtin")
        options = builtin if isinstance(builtin, dict) else {}
        where = f"target {info.id!r}"
        configured = options.get("corpora")
        documents: dict[str, str] = {}
        if configured is None:
            corpora = {"code": ["**"]}
        elif isinstance(configured, dict):
            corpora = {}
            for name, value in configured.items():
                if isinstance(name, str) and isinstance(value, list) and all(isinstance(g, str) for g in value):
                    corpora[name] = list(value)
                    continue
                file = documents_file(value)
                if not isinstance(name, str) or file is None:
                    raise TargetError(
                        f"{where}: `builtin.corpora` must map corpus names to lists of globs, or to "
                        "`{documents: FILE}` (a workspace JSON Lines file of documents)"
                    )
                if not file:
                    raise TargetError(
                        f"{where}: corpus {name!r}: the documents file {value['documents']!r} is outside the workspace, "
                        "and is never read: name a file relative to the workspace root"
                    )
                corpora[name] = [file]
                documents[name] = file
        else:
            raise TargetError(f"{where}: `builtin.corpora` must map corpus names to lists of globs")
        retrieval = options.get("retrieval", SEMANTIC)
        if retrieval not in RETRIEVALS:
            raise TargetError(f"{where}: `builtin.retrieval` must be semantic, keyword or hybrid, not {retrieval!r}")
        model = options.get("model", "wordllama")
        if not isinstance(model, str) or not model.strip():
            raise TargetError(f"{where}: `builtin.model` must be `wordllama` or the path of a model2vec model folder")
        try:
            chunking = Chunking.from_config(options.get("chunking"))
        except ChunkingError as error:
            raise TargetError(f"{where}: {error}") from None
        return cls(corpora, retrieval, model, chunking, documents)


def documents_file(value: Any) -> str | None:
    """The workspace-relative path a corpus written ``{documents: FILE}`` names
    ("" when it leaves the workspace); None when it is not written so."""
    if not isinstance(value, dict) or set(value) != {"documents"} or not isinstance(value["documents"], str):
        return None
    return normalize_relative(value["documents"]) or ""


@dataclass
class _Queries:
    """The queries of a group of cases, embedded or split into terms (see
    BuiltinTarget._embed_queries)."""

    # Request id() -> its query's row of ``vectors`` and its input as
    # _read_input reads it (for a request whose input it reads); and its topK,
    # when the case is ranked with its block (see BuiltinTarget._ranked_with_its_block).
    rows: dict[int, int] = field(default_factory=dict)
    inputs: dict[int, tuple[str, list[str], int]] = field(default_factory=dict)
    top_ks: dict[int, int] = field(default_factory=dict)
    vectors: Any = None
    # Per row of ``vectors``: its query's tokens and their weights (an
    # embedding.QueryTerms, see StaticModel.query_terms); on a keyword search,
    # per query, the ids of its terms (see KeywordIndex.query_terms).
    terms: Any = None


@dataclass
class _State:
    """The index a run answers from."""

    index: Any  # index.ChunkIndex
    # Rows of each corpus (None: every row).
    rows: dict[str, Any]
    # The model, when the search is by meaning; None on keyword search.
    model: Any = None
    # BM25 over every row, when keyword search is part of the answer.
    keyword: KeywordIndex | None = None
    checked_at: float = 0.0
    # The index.IndexBuilder that made the index (it reads the text of hits).
    builder: Any = None
    # The path of each file of the index, by position.
    paths: list[str] = field(default_factory=list)
    # How well chunks match a query's tokens (see StaticModel.matching_over); None
    # when the index holds no terms of its chunks.
    matches: Any = None
    # Per row, what ranking counts as its file (see Ranked.file_first): the
    # index's row_file, except that each document of a documents file counts
    # as a file of its own.
    groups: Any = None
    # The documents files of the index.
    documents: frozenset[str] = frozenset()

    @property
    def mode(self) -> str:
        return SEMANTIC if self.model is not None else KEYWORD


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
        # The model's files when the builder was made (see _model_stamp).
        self._stamp: str | None = None
        self._model: Any = None
        # Why the model could not be loaded (then the search is by keyword).
        self._fallback: str | None = None
        self._state: _State | None = None
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
        stamp = self._model_stamp()
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
                cache = IndexCache.for_key(self._cache_key(model.identity))
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

    def _cache_key(self, model_identity: str) -> dict[str, Any]:
        """What names this target's index in the cache (see :mod:`.index`)."""
        from ...search.index import VECTORS

        options = self.options
        return {
            "root": self.workspace.root.as_posix(),
            "corpora": {
                name: {"documents": options.documents[name]} if name in options.documents else sorted(globs)
                for name, globs in sorted(options.corpora.items())
            },
            "chunking": options.chunking.as_config(),
            "model": model_identity,
            "vectors": VECTORS,
            "max_file_bytes": self.workspace.settings.max_file_bytes,
        }

    def _model_files(self) -> Any:
        """The files of the model the options name; ModelError when there are none."""
        from ...search import embedding

        name = self.options.model
        if name == embedding.WORDLLAMA:
            return embedding.wordllama_files()
        folder = self._model_folder(name)
        files = embedding.model2vec_files(folder, name)
        linked = files_outside(folder, self.workspace.contains)
        if linked:
            raise embedding.ModelError(
                f"{name}/{linked[0]} is a link out of the workspace (the builtin target reads only workspace files)"
            )
        return files

    def _model_stamp(self) -> str:
        """What identifies the model's files as they are now (their paths, sizes and
        times), or why there are none: when it changes, the model is loaded again."""
        if self.options.retrieval == KEYWORD:
            return ""
        from ...search import embedding

        try:
            return self._model_files().identity
        except embedding.ModelError as error:
            return f"unavailable: {error.message}"
        except OSError as error:
            return f"unavailable: {error}"

    def _load_model(self) -> Any:
        from ...search import embedding

        try:
            return embedding.load(self._model_files())
        except embedding.ModelError as error:
            self._fallback = error.message
        except Exception as error:  # noqa: BLE001 - a model that fails to load is a fallback, never a crash
            self._fallback = f"{type(error).__name__}: {error}"
        self._note(
            f"target {self.id!r}: its embedding model cannot be loaded: {self._fallback}; it searches by keyword "
            "instead and answers `mode: keyword`"
        )
        return None

    def _model_folder(self, name: str) -> Any:
        from ...search import embedding

        folder = self.workspace.absolute(name)
        if not self.workspace.contains(folder):
            raise embedding.ModelError(f"{name} is not a folder of the workspace (the builtin target reads only workspace files)")
        return folder

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
        self._state = _State(index, rows, self._model, retriever, checked_at, builder, paths, matches, groups, held_documents)

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
                identity = self._model_files().identity
            except (embedding.ModelError, OSError):
                return False
            try:
                if not IndexCache.for_key(self._cache_key(identity)).meta_path.is_file():
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
        state: _State,
        with_text: bool,
        shared: bool = False,
        scored: Any = _NOT_SCORED,
        named: _Named | None = None,
        read: tuple[str, list[str], int] | None = None,
    ) -> Answer:
        """The answer to one case from ``state``; hits without their ``text`` unless
        asked for. ``shared``: another thread may be answering from ``state`` too,
        so the texts are read without the builder's cache of file lines. ``scored``:
        the query's similarities to every chunk and its best chunks, when they were
        computed already with those of its block (see _score_queries). ``named``:
        the paths and ids of the chunks a run has named so far (see _Named).
        ``read``: the request's input, read already (see _embed_queries)."""
        if read is None:
            read = self._read_input(request.input)
        query, names, top_k = read
        semantic_scores = best = None
        if scored is _NOT_SCORED and state.index.size and (state.model is not None or self._ranked_with_its_block(names, state)):
            alone = self._embedded([(request, read)], state)
            scored = self._score_queries([request], state, alone).get(id(request), _NOTHING_AHEAD)
        if scored is not _NOT_SCORED:
            semantic_scores, best = scored
        if best is not None:
            # By one retrieval alone over the whole index, as most cases are:
            # ranked with its block (see _ranked_with_its_block).
            return self._answer_ranked(best, names[0], state, with_text, shared, named)
        ranked = self._ranked(query, names, top_k, state, semantic_scores)
        return Answer(self._hits(ranked.rows, ranked.scores, ranked.corpora, state, with_text, shared, named), state.mode)

    def _answer_ranked(
        self, best: tuple[list[int], list[float]], corpus: str, state: _State, with_text: bool, shared: bool, named: _Named | None
    ) -> Answer:
        """The answer of a case ranked with its block: its ``best`` rows and their
        shown scores (see best_of_block), all of ``corpus``."""
        rows, shown = best
        return Answer(self._hits(rows, shown, [corpus] * len(rows), state, with_text, shared, named), state.mode)

    def _ranked(self, query: str, names: list[str], top_k: int, state: _State, semantic_scores: Any) -> Ranked:
        """The ``top_k`` best chunks of ``names`` for ``query``, file first, their
        scores as hits show them."""
        keyword_scores = None
        attainable = 0.0
        if state.keyword is not None:
            words = state.keyword.query_terms(query)
            keyword_scores = state.keyword.scores(words)
            if state.model is not None:
                attainable = state.keyword.attainable(query, words)
        query_terms = state.model.query_terms([query])[0] if semantic_scores is not None else None
        matching = _matching(state, lambda _: query_terms)
        depth = _depth(top_k, matching)
        row_file = state.groups

        def best(scores: Any, rows: Any, positive: bool) -> list[tuple[int, float]]:
            # The top_k first (and those reranked); deeper only when a file holds
            # several of them.
            found = by_meaning(scores, max(top_k, RERANKED) if matching is not None else top_k, rows)
            if len(found) >= top_k and len(set(row_file[[row for row, _ in found[:top_k]]].tolist())) < top_k:
                found = by_meaning(scores, depth, rows)
            return [(row, score) for row, score in found if score > 0] if positive else found

        def by_meaning(scores: Any, count: int, rows: Any) -> list[tuple[int, float]]:
            found = top_rows(scores, count, rows)
            if matching is None or scores is not semantic_scores or not found:
                return found
            ranked_rows, ranked_scores = reranked(
                numpy.array([row for row, _ in found]), numpy.array([score for _, score in found], dtype=numpy.float32), lambda chosen: matching(0, chosen)
            )
            return list(zip(ranked_rows.tolist(), ranked_scores.tolist()))

        found: list[tuple[float, int, int]] = []  # (score, row, the corpus's place in names)
        for place, name in enumerate(names):
            rows = state.rows[name]
            if state.model is not None and state.keyword is not None:
                fusion = max(_FUSION_DEPTH, depth)
                meaning = by_meaning(semantic_scores, fusion, rows) if semantic_scores is not None else []
                by_words = [] if keyword_scores is None else [item for item in top_rows(keyword_scores, fusion, rows) if item[1] > 0]
                found.extend((score, row, place) for row, score in fused_by_confidence(meaning, by_words, attainable, depth))
            elif state.model is not None:
                if semantic_scores is not None:
                    found.extend((score, row, place) for row, score in best(semantic_scores, rows, False))
            elif keyword_scores is not None:
                found.extend((score, row, place) for row, score in best(keyword_scores, rows, True))
        # Highest score first; ties by row (path order, then line), then corpus.
        if len(names) > 1 or (state.model is not None and state.keyword is not None):
            found.sort(key=lambda item: (-item[0], item[1], item[2]))
        if len(names) > 1:
            # A chunk that two of the corpora hold (their globs overlap) is one hit,
            # of the corpus the case names first: listed twice, it would take the
            # place of another chunk.
            seen: set[int] = set()
            found = [item for item in found if item[1] not in seen and not seen.add(item[1])]
        rows_found = [row for _, row, _ in found]
        ranked = Ranked(
            rows_found, [score for score, _, _ in found], row_file[rows_found].tolist(), [names[place] for _, _, place in found]
        ).file_first(top_k)
        ranked.scores = [round(float(score), 6) for score in ranked.scores]
        return ranked

    def _hits(
        self, rows: list[int], scores: list[float], corpora: list[str], state: _State, with_text: bool, shared: bool, named: _Named | None
    ) -> list[Hit]:
        """The hits of chunks ``rows`` with their scores and corpora, in that order;
        ``named``: what a run has named so far (see _Named)."""
        index = state.index
        paths, ids = (named if named is not None else _Named()).of(rows, state, self.options.chunking)
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
        named = _Named()
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
                scores = self._score_queries(block, state, queries, expanded, room)

                def answer(request: Request) -> Answer:
                    key = id(request)
                    scored = scores.get(key, _NOT_SCORED)
                    read = queries.inputs.get(key)
                    if type(scored) is tuple and scored[1] is not None and read is not None:
                        # Ranked with its block, as most cases are: its hits straight away.
                        return self._answer_ranked(scored[1], read[1][0], state, with_text, False, named)
                    return self._answer(request, state, with_text, scored=scored, named=named, read=read)

                for position, result in self._one_after_the_other(block, cancel, answer):
                    yield group_start + start + position, result
                if cancel is not None and cancel.is_set():
                    return

    def _embed_queries(self, requests: list[Request], state: _State) -> _Queries:
        """The vectors of the requests' queries (of those whose input _read_input
        reads), by one call of the model, or their terms on a keyword search; and
        the topK of those ranked with their block."""
        read = []
        for request in requests:
            try:
                read.append((request, self._read_input(request.input)))
            except TargetError:
                continue  # the case is answered with its error (see _answer)
        return self._embedded(read, state)

    def _embedded(self, read: list[tuple[Request, tuple[str, list[str], int]]], state: _State) -> _Queries:
        """The queries of requests whose inputs are read (see _embed_queries)."""
        queries = _Queries()
        texts = []
        for request, read_input in read:
            key = id(request)
            queries.rows[key] = len(texts)
            queries.inputs[key] = read_input
            texts.append(read_input[0])
            if self._ranked_with_its_block(read_input[1], state):
                queries.top_ks[key] = read_input[2]
        if not texts:
            return queries
        if state.model is not None:
            queries.vectors, queries.terms = state.model.embed_queries(texts)
        elif state.keyword is not None:
            queries.terms = list(map(state.keyword.query_terms, texts))
        return queries

    def _ranked_with_its_block(self, names: list[str], state: _State) -> bool:
        """Whether a case that searches ``names`` (as _read_input reads them)
        searches by one retrieval alone (by meaning, or by keyword) over one
        corpus that holds every chunk of the index, as most do: such a case is
        ranked with the other cases of its block (see _score_queries); any other
        is ranked on its own, and ranking it ahead would be wasted."""
        one_retrieval = state.model is None or state.keyword is None
        return one_retrieval and len(names) == 1 and names[0] in state.rows and state.rows[names[0]] is None

    def _score_queries(
        self, requests: list[Request], state: _State, queries: _Queries, expanded: Any = None, room: Any = None
    ) -> dict[int, tuple[Any, Any]]:
        """Each request's similarities to every chunk (None on a keyword search)
        and, when it is ranked with its block (see _ranked_with_its_block), its
        ``topK`` best chunks over the whole index, file first (see
        ranking.best_of_block; else None), by the request's id(), for those whose
        input can be read; (None, None) for a query with no token the model knows.
        The requests' queries are scored together (by one matrix product, when by
        meaning) and ranked together; ``queries`` holds them embedded or split
        into terms. ``expanded``: the index's codes as floats (see
        QuantizedVectors.similarities), when a run holds them; ``room``: an array
        of at least a row per request and a column per chunk, for a keyword
        search's scores, when a run holds one."""
        keys = [key for request in requests if (key := id(request)) in queries.rows]
        if not keys:
            return {}
        if state.model is None:
            return self._score_keywords(keys, state, queries, room)
        index = state.index
        embedded = queries.vectors[[queries.rows[key] for key in keys]]
        scores = index.vectors.similarities(embedded, expanded)
        known = embedded.any(axis=1).tolist()
        scored: dict[int, tuple[Any, Any]] = {}
        # Ranked together: the queries that ask for as many hits (most often, all);
        # those with no topK here are ranked on their own (see _ranked_with_its_block).
        by_top_k: dict[int | None, list[int]] = {}
        for row, key in enumerate(keys):
            if known[row]:
                by_top_k.setdefault(queries.top_ks.get(key), []).append(row)
            else:
                scored[key] = _NOTHING_AHEAD
        for top_k, rows in by_top_k.items():
            if top_k is None:
                best = [None] * len(rows)
            else:
                block = scores if len(rows) == len(keys) else scores[rows]
                matching = _block_matching(state, queries.terms.take([queries.rows[keys[row]] for row in rows]))
                best = best_of_block(block, top_k, _depth(top_k, matching), state.groups, matching)
            for row, found in zip(rows, best):
                # A query ranked with its block needs its scores no more.
                scored[keys[row]] = (scores[row] if found is None else None, found)
        return scored

    def _score_keywords(self, keys: list[int], state: _State, queries: _Queries, room: Any) -> dict[int, tuple[Any, Any]]:
        """_score_queries on a keyword search: the queries ranked with their block
        scored a row each and ranked together; the others (None, None), as each
        is scored when it is ranked on its own (see _ranked)."""
        assert state.keyword is not None
        scored: dict[int, tuple[Any, Any]] = {}
        by_top_k: dict[int, list[int]] = {}
        for key in keys:
            top_k = queries.top_ks.get(key)
            if top_k is None:
                scored[key] = _NOTHING_AHEAD
            else:
                by_top_k.setdefault(top_k, []).append(key)
        index = state.index
        for top_k, ranked in by_top_k.items():
            if room is None or len(room) < len(ranked):
                room = numpy.empty((len(ranked), index.size), dtype=numpy.float32)
            block = state.keyword.block_scores([queries.terms[queries.rows[key]] for key in ranked], room)
            best = best_of_block(block, top_k, _depth(top_k, None), state.groups, positive=True)
            scored.update((key, (None, found)) for key, found in zip(ranked, best))
        return scored

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


class _Named:
    """The path and id of each chunk named so far, by row: a run keeps one, as
    100,000 cases name the chunks of an index a million times, and looking up
    each file and formatting each id every time cost a tenth of the run."""

    __slots__ = ("paths", "ids")

    def __init__(self) -> None:
        self.paths: dict[int, str] = {}
        self.ids: dict[int, str] = {}

    def of(self, rows: list[int], state: _State, chunking: Chunking) -> tuple[list[str], list[str]]:
        """The paths and ids of the chunks of ``rows`` of ``state``'s index."""
        paths = list(map(self.paths.get, rows))
        if None in paths:
            new = [row for row, path in zip(rows, paths) if path is None]
            index = state.index
            spans = index.lines[new]
            new_paths = list(map(state.paths.__getitem__, index.row_file[new].tolist()))
            self.paths.update(zip(new, new_paths))
            firsts = spans[:, 0].tolist()
            ids = chunk_ids(new_paths, firsts, spans[:, 1].tolist(), chunking)
            if state.documents:
                # A document's hit is named by its own id.
                for at, (row, path) in enumerate(zip(new, new_paths)):
                    if path in state.documents:
                        ids[at] = state.builder.document_id(index.files[int(index.row_file[row])], firsts[at])
            self.ids.update(zip(new, ids))
            paths = list(map(self.paths.__getitem__, rows))
        return paths, list(map(self.ids.__getitem__, rows))


def _matching(state: _State, terms_of: Callable[[int], Any]) -> Callable[[int, Any], Any] | None:
    """How well chunks match a query token by token (see StaticModel.matching),
    as ``matching(query, rows)`` with the query's terms given by ``terms_of(query)``;
    None when the index holds no terms of its chunks."""
    matches = state.matches
    if matches is None:
        return None
    return lambda query, rows: matches(terms_of(query), rows)


def _block_matching(state: _State, terms: Any) -> Callable[[Any], Any] | None:
    """How well chunks match each query of a block token by token, as
    ``matching(heads)`` of a row of chunks per query (see ranking.rerank_block),
    the queries' terms being ``terms`` (embedding.QueryTerms); None when the
    index holds no terms of its chunks."""
    matches = state.matches
    if matches is None:
        return None
    return lambda heads: matches.heads(terms, heads)


def _depth(top_k: int, matching: Any) -> int:
    """The chunks read for ``top_k`` hits by meaning: those that give way to other
    files' best chunks (see Ranked.file_first), and at least those reranked."""
    depth = top_k * _CANDIDATES_PER_HIT
    return max(depth, RERANKED) if matching is not None else depth
