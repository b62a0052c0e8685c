"""What other files need to know of a suite and of a target, read from their YAML.

A suite file's suites and the targets config are parsed once per text (see
Workspace); the facts here are what the checks, the runner and the editor
features read of them: a suite's id, dataset, engines, metrics, `match` and `k`,
where its nodes are, and how each target is reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..reading.paths import normalize_relative
from ..reading.yamltree import YNode


DEFAULT_TARGET = "vectors.query"


BUILTIN_FIELDS = frozenset({"path", "id", "corpus", "score", "text"})


MATCH_FIELDS = ("path", "id", "corpus")


@dataclass
class SuiteInfo:
    """What other files need to know about one suite."""

    id: str | None
    file: str
    node: YNode
    dataset: str | None  # normalized workspace-relative path, when inside
    match: str = "path"
    k: int | None = None
    engines: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    target: str | None = None

    @property
    def scores_metrics_only(self) -> bool:
        """Whether the suite scores its rows by metrics alone, with no engine (a
        gdi_text_v1 suite): then it has no `match`, and its rows are not cases."""
        return bool(self.metrics) and not self.engines

    @property
    def match_node(self) -> YNode | None:
        """Where the suite's `match` is written (``options.rag.match``), if it is."""
        return match_node(self.node)

    @property
    def target_id_node(self) -> YNode | None:
        """Where the suite names its target (``target.id``), if it does."""
        return target_id_node(self.node)


# A builtin target's corpora: each name with its globs.
Corpora = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class DatasetUse:
    """How a dataset is read: by the suites that reference it, and what its
    expected paths are checked against."""

    matches: frozenset[str] = frozenset({"path"})
    ks: frozenset[int] = frozenset()
    suites: tuple[str, ...] = ()
    # Row shapes the referencing suites accept (empty: not referenced).
    accepts: frozenset[str] = frozenset()
    # The targets through which a suite reads the dataset with `match: path` and
    # searches this workspace (builtin, or declaring `workspace_paths: true`):
    # then an expected path must be a workspace file (RAG203).
    workspace_targets: tuple[str, ...] = ()
    # Set by the dataset's reader, not its suites: most of its expected paths
    # are not workspace files (see expectedpaths.PathTally), so RAG203 reports that
    # once for the file instead of once per value.
    paths_elsewhere: bool = False
    # (target id, the corpora it serves) of each target a suite sends the cases
    # to that declares its corpora (the builtin does): a case's `input.corpora`
    # must name corpora each of them serves.
    served_corpora: tuple[tuple[str, frozenset[str]], ...] = ()
    # (target id, its corpora as (name, globs) pairs) of each builtin target of
    # ``workspace_targets``: it returns only the text files its corpora hold, so
    # an expected path must be one of those as well (RAG203).
    builtin_corpora: tuple[tuple[str, Corpora], ...] = ()

    @property
    def corpora_served_by_all(self) -> frozenset[str]:
        """The corpora that every target of ``served_corpora`` serves: those a
        case may search (asked only when some target declares its corpora)."""
        return frozenset.intersection(*(corpora for _, corpora in self.served_corpora))

    @property
    def paths_in_workspace(self) -> bool:
        """Whether expected paths are checked against the workspace's files: when
        a suite searches the workspace for them, or when no suite reads the
        dataset (its corpus is then taken to be the workspace)."""
        return bool(self.workspace_targets) or not self.suites


@dataclass(frozen=True)
class TargetInfo:
    id: str
    kind: str  # builtin | command | http | recorded
    config: dict[str, Any]
    fields: frozenset[str] | None = None
    corpora: tuple[str, ...] | None = None
    # Whether its hits' paths are files of this workspace (RAG203 applies).
    workspace_paths: bool = False


def builtin_corpora(info: TargetInfo) -> Corpora | None:
    """The corpora of a builtin target, as it reads them (``code``: every file
    when none are configured); None when they are written wrong (RAG004's)."""
    builtin = info.config.get("builtin")
    configured = builtin.get("corpora") if isinstance(builtin, dict) else None
    if configured is None:
        return (("code", ("**",)),)
    if not isinstance(configured, dict):
        return None
    corpora = []
    for name, globs in configured.items():
        if isinstance(name, str) and _documents_of(globs):
            # A documents file: the corpus holds that one file.
            corpora.append((name, (_documents_of(globs),)))
            continue
        if not isinstance(name, str) or not isinstance(globs, list) or not all(isinstance(glob, str) for glob in globs):
            return None
        corpora.append((name, tuple(globs)))
    return tuple(corpora)


def _documents_of(value: Any) -> str | None:
    """The workspace-relative documents file a corpus written ``{documents: FILE}`` names."""
    if not isinstance(value, dict) or set(value) != {"documents"} or not isinstance(value["documents"], str):
        return None
    return normalize_relative(value["documents"]) or None


def documents_files(info: TargetInfo) -> tuple[str, ...]:
    """The documents files of a builtin target's corpora (see targets.builtin)."""
    builtin = info.config.get("builtin")
    configured = builtin.get("corpora") if isinstance(builtin, dict) else None
    if info.kind != "builtin" or not isinstance(configured, dict):
        return ()
    return tuple(file for value in configured.values() if (file := _documents_of(value)))


def match_node(node: YNode) -> YNode | None:
    """Where a suite (its mapping) writes its `match`: ``options.rag.match``."""
    return _option_node(node, "match")


def target_id_node(node: YNode) -> YNode | None:
    """Where a suite (its mapping) names its target: ``target.id``."""
    target = node.get("target")
    return target.get("id") if target is not None and target.is_map else None


def _option_node(node: YNode, name: str) -> YNode | None:
    options = node.get("options")
    rag = options.get("rag") if options is not None and options.is_map else None
    return rag.get(name) if rag is not None and rag.is_map else None


def suite_info(node: YNode, file: str) -> SuiteInfo:
    dataset = node.get("dataset")
    dataset_text = dataset.text() if dataset is not None else None
    match_at = match_node(node)
    match = match_at.text() if match_at is not None else None
    k_node = _option_node(node, "k")
    k = k_node.scalar() if k_node is not None else None
    engines = node.get("engines")
    metrics = node.get("metrics")
    target_id = target_id_node(node)
    return SuiteInfo(
        id=_text(node.get("id")),
        file=file,
        node=node,
        dataset=normalize_relative(dataset_text) if dataset_text else None,
        # An invalid match is reported on the suite (RAG108); its dataset is read
        # with the default meanwhile.
        match=match if match in MATCH_FIELDS else "path",
        k=k if isinstance(k, int) and not isinstance(k, bool) and k >= 1 else None,
        engines=tuple(t for t in (e.text() for e in engines.elements()) if t) if engines is not None else (),
        metrics=tuple(str(key.scalar()) for key, _ in metrics.items()) if metrics is not None else (),
        target=_text(target_id),
    )


def _text(node: YNode | None) -> str | None:
    if node is None:
        return None
    value = node.scalar()
    return str(value) if value is not None and not isinstance(value, (dict, list)) else None


def target_info(target_id: str, config: dict[str, Any]) -> TargetInfo | None:
    kinds = [kind for kind in ("builtin", "command", "http", "recorded") if kind in config]
    if len(kinds) != 1:
        return None
    fields_value = config.get("fields")
    corpora_value = config.get("corpora")
    kind = kinds[0]
    if kind == "builtin":
        builtin = config.get("builtin") if isinstance(config.get("builtin"), dict) else {}
        corpora = builtin.get("corpora")
        # A name YAML reads as another scalar (`~:`, `3:`) is no corpus name (RAG004 says so).
        corpora_names = tuple(name for name in corpora if isinstance(name, str)) if isinstance(corpora, dict) else ("code",)
        return TargetInfo(target_id, kind, config, BUILTIN_FIELDS, corpora_names, workspace_paths=True)
    return TargetInfo(
        target_id,
        kind,
        config,
        frozenset(f for f in fields_value if isinstance(f, str)) if isinstance(fields_value, list) else None,
        tuple(c for c in corpora_value if isinstance(c, str)) if isinstance(corpora_value, list) else None,
        workspace_paths=config.get("workspace_paths") is True,
    )
