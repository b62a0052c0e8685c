"""The ``builtin`` target: BM25 keyword search over the workspace's text files.

```yaml
targets:
  vectors.query:
    builtin: {corpora: {code: ["src/**", "docs/**"]}}
```

With no config, ``vectors.query`` is this target over the whole workspace as
corpus ``code``. A corpus holds the workspace's text files its globs match,
leaving out ``.punica/`` and every hidden file or folder, VCS folders,
virtualenvs, dependencies, git-ignored files (the workspace's file list already
skips those) and binary files (a NUL byte, or not UTF-8). Each file is one
document; its text is split into words, code identifiers into their parts
(``rateLimit``, ``rate_limit`` → ``rate``, ``limit``), English stop words dropped
and the rest stemmed (Snowball), then indexed with ``bm25s``.

A case's ``input`` is ``{"query": str, "corpora": [str, ...], "topK": int}``:
``corpora`` picks the corpora to search (default: all of them), ``topK`` the number
of hits (default 10). Hits carry ``path`` (workspace-relative, "/"), ``id`` (the
path: one document per file), ``corpus``, ``score`` (BM25) and ``text`` (the
lines of the file that best match the query). Documents that share no word with
the query are not hits. The answer's mode is always ``keyword``: this is what
``vectors.query`` does when a corpus has no semantic index, and what a
``rag.mode.semantic`` threshold is there to catch.

The index is built on the first case and kept: before each run (and before a
single case, at most every two seconds) the corpus files' paths, sizes and
modification times are compared with those it was built from, and it is rebuilt
when they differ.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..files import glob_match
from ..suitefacts import BUILTIN_FIELDS, TargetInfo
from ..workspace import Workspace
from . import Answer, Hit, Request, Target, TargetError

KEYWORD = "keyword"
DEFAULT_TOP_K = 10
# Bytes read of a file to decide whether it is binary.
_SNIFF = 8192
# How long a checked index is trusted without looking at the files again.
_RECHECK_S = 2.0
_SNIPPET_CHARS = 240

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_A-Za-z]+")


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


@dataclass
class _Corpus:
    name: str
    paths: list[str]
    texts: list[str]
    signature: tuple
    retriever: Any = None  # bm25s.BM25, or None when the corpus is empty


@dataclass
class _Index:
    corpora: dict[str, _Corpus] = field(default_factory=dict)
    checked_at: float = 0.0


class BuiltinTarget(Target):
    kind = "builtin"

    def __init__(self, info: TargetInfo, workspace: Workspace, timeout_s: float) -> None:
        super().__init__(info, workspace, timeout_s)
        builtin = info.config.get("builtin")
        configured = builtin.get("corpora") if isinstance(builtin, dict) else None
        if configured is None:
            corpora = {"code": ["**"]}
        elif isinstance(configured, dict) and all(
            isinstance(name, str) and isinstance(globs, list) and all(isinstance(g, str) for g in globs)
            for name, globs in configured.items()
        ):
            corpora = {name: list(globs) for name, globs in configured.items()}
        else:
            raise TargetError(f"target {info.id!r}: `builtin.corpora` must map corpus names to lists of globs")
        self.corpora: dict[str, list[str]] = corpora
        self.fields = BUILTIN_FIELDS
        self._analyzer: Analyzer | None = None
        self._index = _Index()
        self._lock = threading.Lock()

    # -------------------------------------------------- the index

    def _candidates(self) -> list[str]:
        """Workspace files a corpus may hold: not .punica/, not hidden."""
        return [
            relative
            for relative in self.workspace.files()
            if not any(part.startswith(".") for part in relative.split("/"))
        ]

    def _signature(self, paths: list[str]) -> tuple:
        entries = []
        root = str(self.workspace.root)
        for relative in paths:
            try:
                stat = os.stat(os.path.join(root, relative))
            except OSError:
                continue
            entries.append((relative, stat.st_size, stat.st_mtime_ns))
        return tuple(entries)

    def refresh(self, force: bool = False) -> None:
        """Rebuild the corpora whose files changed since they were indexed."""
        now = time.monotonic()
        if not force and self._index.corpora and now - self._index.checked_at < _RECHECK_S:
            return
        candidates = self._candidates()
        corpora: dict[str, _Corpus] = {}
        for name, globs in self.corpora.items():
            paths = [relative for relative in candidates if glob_match(relative, globs)]
            signature = self._signature(paths)
            held = self._index.corpora.get(name)
            corpora[name] = held if held is not None and held.signature == signature else self._build(name, signature)
        self._index = _Index(corpora, time.monotonic())

    def _build(self, name: str, signature: tuple) -> _Corpus:
        paths: list[str] = []
        texts: list[str] = []
        limit = self.workspace.settings.max_file_bytes
        for relative, size, _ in signature:
            if size > limit:
                continue
            text = self._text_of(relative)
            if text is not None:
                paths.append(relative)
                texts.append(text)
        corpus = _Corpus(name, paths, texts, signature)
        if paths:
            import bm25s

            analyzer = self._terms()
            retriever = bm25s.BM25()
            retriever.index([analyzer.terms(text) or [""] for text in texts], show_progress=False)
            corpus.retriever = retriever
        return corpus

    def _text_of(self, relative: str) -> str | None:
        try:
            data = self.workspace.absolute(relative).read_bytes()
        except OSError:
            return None
        if b"\x00" in data[:_SNIFF]:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return text[1:] if text.startswith("\ufeff") else text

    def _terms(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = Analyzer()
        return self._analyzer

    # -------------------------------------------------- answering

    def answer(self, request: Request) -> Answer:
        with self._lock:
            self.refresh()
            index = self._index
        return self._answer(request, index, with_text=True)

    def _answer(self, request: Request, index: _Index, with_text: bool) -> Answer:
        """The answer to one case from ``index``; hits without their ``text`` (the
        lines that best match the query, the costliest part) unless asked for."""
        query, names, top_k = self._read_input(request.input)
        terms = self._terms().terms(query)
        scored: list[tuple[float, str, str, int]] = []
        for name in names:
            corpus = index.corpora[name]
            if corpus.retriever is None or not terms:
                continue
            import numpy

            scores = corpus.retriever.get_scores(terms)
            count = min(top_k, len(corpus.paths))
            best = numpy.argpartition(-scores, count - 1)[:count] if count < len(corpus.paths) else range(len(corpus.paths))
            for position in best:
                score = float(scores[position])
                if score > 0:
                    scored.append((score, corpus.paths[position], name, int(position)))
        # Highest score first; ties by path, so answers are stable run to run.
        scored.sort(key=lambda item: (-item[0], item[1], item[2]))
        analyzer = self._terms()
        hits = [
            Hit(
                path=path,
                id=path,
                corpus=name,
                score=round(score, 6),
                text=snippet(index.corpora[name].texts[position], terms, analyzer) if with_text else None,
            )
            for score, path, name, position in scored[:top_k]
        ]
        return Answer(hits, KEYWORD)

    def answer_many(self, requests, cancel=None, concurrency=1, fields=None):
        with self._lock:
            try:
                self.refresh(force=True)
            except Exception as error:  # noqa: BLE001 - an index that cannot be built fails each case
                failure = TargetError(f"the builtin index could not be built: {type(error).__name__}: {error}")
                for index in range(len(requests)):
                    yield index, failure
                return
            # A run answers from the index as it was when it began: looking at every
            # file again every few seconds would cost more than the run's own work.
            index = self._index
        with_text = fields is None or "text" in fields
        yield from self._one_after_the_other(requests, cancel, lambda request: self._answer(request, index, with_text))

    def _read_input(self, value: Any) -> tuple[str, list[str], int]:
        if not isinstance(value, dict):
            raise TargetError("the builtin target needs an `input` object with a `query` string")
        query = value.get("query")
        if not isinstance(query, str) or not query.strip():
            raise TargetError("the builtin target needs `input.query`, a non-empty string")
        names = value.get("corpora")
        if names is None:
            names = list(self.corpora)
        elif not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise TargetError("`input.corpora` must be a list of corpus names")
        unknown = [name for name in names if name not in self.corpora]
        if unknown:
            served = ", ".join(self.corpora)
            raise TargetError(
                f"the builtin target {self.id!r} has no corpus {', '.join(map(repr, unknown))}; it serves: {served} "
                "(configure corpora under `builtin.corpora` in .punica/targets.yaml)"
            )
        top_k = value.get("topK", DEFAULT_TOP_K)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise TargetError("`input.topK` must be an integer of at least 1")
        return query, list(dict.fromkeys(names)), top_k


def snippet(text: str, terms: list[str], analyzer: Analyzer) -> str:
    """The lines around the line that shares most terms with the query."""
    wanted = set(terms)
    lines = text.splitlines()
    best, best_count = 0, -1
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        count = len(wanted.intersection(analyzer.terms(line)))
        if count > best_count:
            best, best_count = number, count
    found = " ".join(line.strip() for line in lines[best : best + 3] if line.strip())
    return found if len(found) <= _SNIPPET_CHARS else found[: _SNIPPET_CHARS - 1] + "…"
