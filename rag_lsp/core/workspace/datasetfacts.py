"""What the suites that use a dataset, and its rows, tell about it."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from ..reading.findings import FOLD_FROM_ROWS
from .rows import corpora_asked, top_k_asked
from .suitefacts import DatasetUse, builtin_corpora


class DatasetFacts:
    """The facts of a :class:`~.workspace.Workspace` about one dataset: how the
    suites that use it use it, and the ``input.topK`` and corpora most of its
    cases ask; a part of the workspace, whose suites, manifests, targets and
    datasets it reads."""

    def dataset_use(self, relative: str) -> DatasetUse:
        """The matches, ks and accepted shapes of the suites that use ``relative``."""
        users = [suite for suite in self.suites() if suite.dataset == relative]
        if not users:
            return DatasetUse()
        registry = self.manifests()
        accepts: set[str] = set()
        for suite in users:
            for engine in suite.engines:
                manifest = registry.engine(engine)
                if manifest is not None:
                    accepts |= manifest.accepts
            for metric in suite.metrics:
                manifest = registry.metric_manifest(metric)
                if manifest is not None:
                    accepts |= manifest.accepts
        targets = self.targets()
        searching = tuple(dict.fromkeys(
            suite.target
            for suite in users
            if suite.match == "path" and suite.target in targets and targets[suite.target].workspace_paths
        ))
        builtins = ((target, builtin_corpora(targets[target])) for target in searching if targets[target].kind == "builtin")
        served = {
            suite.target: frozenset(targets[suite.target].corpora)
            for suite in users
            if suite.engines and suite.target in targets and targets[suite.target].corpora is not None
        }
        return DatasetUse(
            matches=frozenset(suite.match for suite in users),
            ks=frozenset(suite.k for suite in users if suite.k is not None),
            suites=tuple(suite.id or "?" for suite in users),
            accepts=frozenset(accepts),
            workspace_targets=searching,
            served_corpora=tuple(sorted(served.items())),
            builtin_corpora=tuple((target, corpora) for target, corpora in builtins if corpora is not None),
        )

    def top_ks_asked(self, relative: str) -> tuple[Counter[int], int]:
        """How many rows of a dataset ask each ``input.topK`` (a positive integer),
        and how many rows it has: what tells whether a suite's ``k`` stands above
        what most of its cases ask (RAG207). A dataset read through its model
        (see live_datasets) is counted there, as its lines change."""
        live = self.live_datasets.get(relative)
        if live is not None:
            return live.top_ks_asked()
        parsed = self.parsed_dataset(relative)
        if parsed is None:
            return Counter(), 0
        return top_ks_of(row.value for _, row in parsed.rows), len(parsed.rows)

    def corpora_asked(self, relative: str) -> tuple[Counter[str], int]:
        """How many rows of a dataset ask to search each corpus (``input.corpora``),
        and how many rows it has (a model's count, as for top_ks_asked)."""
        live = self.live_datasets.get(relative)
        if live is not None:
            return live.corpora_asked()
        parsed = self.parsed_dataset(relative)
        if parsed is None:
            return Counter(), 0
        asked: Counter[str] = Counter()
        for _, row in parsed.rows:
            asked.update(corpora_asked(row.value))
        return asked, len(parsed.rows)

    def corpora_most_asked(self, relative: str) -> tuple[str, ...]:
        """The corpora most cases of a dataset ask to search (and at least as many
        as a folded finding needs), in order of name."""
        asked, rows = self.corpora_asked(relative)
        if rows < FOLD_FROM_ROWS:
            return ()
        return tuple(sorted(name for name, count in asked.items() if count >= rows // 2 + 1))

    def top_k_most_asked_below(self, relative: str, k: int) -> int | None:
        """The ``input.topK`` most cases of a dataset ask for, when most ask for
        fewer hits than ``k`` (see most_asked_below); None otherwise."""
        asked, rows = self.top_ks_asked(relative)
        return most_asked_below(asked, rows, k)


def top_ks_of(values: Iterable[Any]) -> Counter[int]:
    """How many of ``values`` (decoded rows) ask each ``input.topK`` that is a
    positive integer."""
    return Counter(top_k for top_k in map(top_k_asked, values) if top_k)


def most_asked_below(asked: Counter[int], rows: int, k: int) -> int | None:
    """The ``input.topK`` most of ``rows`` cases ask for, when most ask for fewer
    hits than ``k`` (and they are at least as many as a folded finding needs):
    a suite's ``k`` then stands above what its cases ask (RAG207). None otherwise."""
    below = {top_k: count for top_k, count in asked.items() if top_k < k}
    if rows < FOLD_FROM_ROWS or sum(below.values()) < rows // 2 + 1:
        return None
    return max(below, key=lambda top_k: (below[top_k], top_k))
