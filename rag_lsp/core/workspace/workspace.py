"""The workspace: its root, its settings, and the facts that cross files.

Facts that several files need (the suites and the datasets they use, the
manifests, the targets, the index of workspace files) are computed once and kept
until :meth:`Workspace.invalidate` says a file changed. Reading files is
``core.reading.sources``'s, finding them ``core.workspace.files``'s, what a suite or target is
``core.workspace.suitefacts``'s, and reading a dataset's rows ``core.workspace.rows``'s.
Where a workspace's root is, and its settings file, is ``core.workspace.roots``'s;
the facts of the list of its files are ``core.workspace.filefacts``'s, and those
of one dataset ``core.workspace.datasetfacts``'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .settings import MAX_YAML_DEPTH
from .config import CONFIG_PATH, CONFIG_PATHS, PYPROJECT_PATH, ConfigFile, holds_settings, layered
from .datasetfacts import DatasetFacts
from .filefacts import FileFacts
from .files import glob_match
from ..reading.datasetlines import dataset_lines, read_lines
from ..reading.jsondocument import read_document
from ..reading.jsonrows import Row
from .manifests import ManifestRegistry, manifest_from, unreadable_manifest
from ..reading.paths import normalize_relative
from .roots import config_outside, located, read_workspace_config
from .rows import DatasetRow, looks_like_a_row, shape_of_rows
from .settings import Settings
from ..reading.sources import DiskSource, FileSource, SourceText, size_above
from .suitefacts import BUILTIN_FIELDS, DEFAULT_TARGET, SuiteInfo, TargetInfo, suite_info, target_info
from ..reading.text import LineIndex, Lines
from ..reading.yamltree import TooLarge, YamlDocument, YamlLimits, YamlProblem, parse_yaml

SUITE_FILE = "suite"
DATASET_FILE = "dataset"
MANIFEST_FILE = "manifest"
TARGETS_FILE = "targets"
CONFIG_FILE = "config"

TARGETS_PATHS = (".punica/targets.yaml", ".punica/targets.yml")
# The rows of a JSON Lines file that no glob or suite names looked at to tell
# whether it is a dataset (see Workspace.kind_of).
_ROWS_SNIFFED = 20
# Keys that only rows of ours have, as a line that is not JSON yet holds them.
_KEYS_OF_ROWS = ('"expect"', '"input_id"', '"retrieved_context"', '"reference_contexts"')


# ---------------------------------------------------------------- reading


# ---------------------------------------------------------------- facts


@dataclass
class ParsedYaml:
    text: str
    lines: LineIndex
    document: YamlDocument
    value: Any = None
    too_large: TooLarge | None = None
    # (offset, message) of a byte that was not UTF-8.
    decode_error: tuple[int, str] | None = None


_UNKNOWN = object()


@dataclass
class ParsedDataset:
    text: str
    lines: LineIndex
    # (line number, row) for every non-blank line, in order.
    rows: list[tuple[int, Row]] = field(default_factory=list)
    decode_error: tuple[int, str] | None = None
    # The majority row shape, computed once (see Workspace.dataset_shape).
    shape: Any = _UNKNOWN


class Workspace(FileFacts, DatasetFacts):
    """One workspace root, its settings, and its cross-file facts (with those of
    the list of its files, :class:`FileFacts`, and those of one dataset,
    :class:`DatasetFacts`)."""

    def __init__(
        self, root: Path, settings: Settings | None = None, source: FileSource | None = None, config: ConfigFile | None = None
    ) -> None:
        self.root = root.resolve()
        self.settings = settings or Settings()
        # The settings file these settings were read from (see configured).
        self.config = config
        self.source: FileSource = source or DiskSource(self.settings.max_file_bytes)
        self._yaml: dict[str, ParsedYaml] = {}
        self._datasets: dict[str, ParsedDataset] = {}
        # What was derived from the list of workspace files alone (kept while only
        # texts change, see invalidate), and what was derived from texts as well.
        self._file_facts: dict[str, Any] = {}
        self._facts: dict[str, Any] = {}
        # Datasets kept up to date by an editor (rag_lsp.core.checking.incremental), by
        # relative path: their facts are read from them, not parsed again.
        self.live_datasets: dict[str, Any] = {}
        # Counts the times the index of workspace files was dropped: what was
        # checked against an older index is checked again.
        self.files_version = 0
        # Whether the findings most rows of a dataset share for one cause are
        # reported once (see core.checking.folding); `rag-lsp check --unfold` lists each.
        self.folds_findings = True

    @classmethod
    def configured(cls, root: Path, editor: Mapping[str, Any] | None = None, source: FileSource | None = None) -> Workspace:
        """The workspace at ``root`` with the settings in force there: its settings
        file's (read through ``source``, so an editor's unsaved text counts), with
        ``editor``'s values on top (see core.workspace.config)."""
        root = root.resolve()
        config = read_workspace_config(root, source)
        return cls(root, layered(config, editor), source, config)

    # -------------------------------------------------- paths

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, "/"-separated (absolute when outside);
        a link inside the workspace is named where it is (see located)."""
        path = located(path)
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def absolute(self, relative: str) -> Path:
        return self.root / relative

    def contains(self, path: Path) -> bool:
        """Whether ``path``, with symlinks resolved, is inside the workspace."""
        try:
            path.resolve().relative_to(self.root)
        except (ValueError, OSError, RuntimeError):
            return False
        return True

    def read(self, relative: str) -> SourceText | None:
        path = self.absolute(relative)
        if not self.contains(path):
            return None
        return self.source.read(path)

    def read_lines(self, relative: str) -> tuple[list[str], int] | None:
        """A dataset's lines and its text's UTF-8 size, where its source reads
        them without the whole text (see sources.read_lines); else None, and
        :meth:`read` says what the file holds."""
        path = self.absolute(relative)
        reader = getattr(self.source, "read_lines", None)
        if reader is None or not self.contains(path):
            return None
        return reader(path)

    @property
    def yaml_limits(self) -> YamlLimits:
        # Clamped whatever set it: deeper YAML is read by recursion past what
        # the interpreter allows.
        return YamlLimits(min(self.settings.max_yaml_depth, MAX_YAML_DEPTH), self.settings.max_yaml_nodes)

    # -------------------------------------------------- invalidation

    def invalidate(self, relative: str | None = None, *, files_changed: bool = True) -> None:
        """Forget what was derived from ``relative`` (from every file when None).

        ``files_changed=False`` says only the file's text changed (an edit in the
        editor): the index of workspace files is kept, so what depends on it alone
        (expected paths, RAG203) is not checked again.
        """
        if relative is None:
            self._yaml.clear()
            self._datasets.clear()
        else:
            self._yaml.pop(relative, None)
            self._datasets.pop(relative, None)
        if files_changed:
            self._file_facts = {}
        if "file_set" not in self._file_facts:
            self.files_version += 1
        self._facts = {}

    def forget_text(self, relative: str) -> None:
        """Drop what was parsed from ``relative``'s text, keeping every other fact
        (an open dataset was edited: nothing but its own text changed)."""
        self._yaml.pop(relative, None)
        self._datasets.pop(relative, None)

    def lines_of(self, relative: str) -> Lines:
        """The lines of a file as it was last parsed (or of its text now, when it
        was not), to place findings: a large dataset's lines are not split twice.
        A dataset read through its model (see live_datasets) has them there."""
        live = self.live_datasets.get(relative)
        if live is not None:
            return live
        source = self.read(relative)
        text = source.text if source is not None else ""
        for parsed in (self._datasets.get(relative), self._yaml.get(relative)):
            if parsed is not None and parsed.lines.text == text:
                return parsed.lines
        return LineIndex(text)

    def memo(self, name: str) -> dict[Any, Any]:
        """A dict in which a rule keeps what it derived from the workspace's files
        and texts (a message per missing path, say), forgotten with every other
        fact (see invalidate): a value repeated over many lines is derived once."""
        return self._fact(f"memo {name}", dict)

    def _fact(self, name: str, compute: Any) -> Any:
        if name not in self._facts:
            self._facts[name] = compute()
        return self._facts[name]

    def _file_fact(self, name: str, compute: Any) -> Any:
        """A fact derived from the list of workspace files alone (see invalidate)."""
        if name not in self._file_facts:
            self._file_facts[name] = compute()
        return self._file_facts[name]

    # -------------------------------------------------- parsing (cached by text)

    def parsed_yaml(self, relative: str, source: SourceText | None = None) -> ParsedYaml | None:
        source = source or self.read(relative)
        if source is None or source.refused:
            return None
        cached = self._yaml.get(relative)
        if cached is not None and cached.text == source.text:
            return cached
        text = source.text
        size = size_above(text, self.settings.max_yaml_bytes)
        if size is not None:
            message = f"YAML file is {size:,} bytes, above the max-yaml-bytes limit of {self.settings.max_yaml_bytes:,}"
            document = YamlDocument(None, [YamlProblem("RAG005", 0, 0, message)])
        else:
            document = parse_yaml(text, self.yaml_limits)
        parsed = ParsedYaml(text, LineIndex(text), document, decode_error=source.decode_error)
        if document.root is not None and document.well_formed:
            try:
                parsed.value = document.to_python(self.yaml_limits)
            except TooLarge as too_large:
                parsed.too_large = too_large
        self._yaml[relative] = parsed
        return parsed

    def parsed_dataset(self, relative: str, source: SourceText | None = None) -> ParsedDataset | None:
        source = source or self.read(relative)
        if source is None or source.refused:
            return None
        cached = self._datasets.get(relative)
        if cached is not None and cached.text == source.text:
            return cached
        text = source.text
        parsed = ParsedDataset(text, LineIndex(text), decode_error=source.decode_error)
        # A text that is one JSON document or a table, not JSON Lines, has no
        # row (RAG002 says so for the whole file), however many lines it takes.
        if read_document(text) is None:
            # A byte that is not UTF-8 spoils its line only (RAG002), as a run reads it.
            parsed.rows.extend(read_lines(DatasetRow, dataset_lines(text), self.settings.max_line_bytes, source.undecodable))
        self._datasets[relative] = parsed
        return parsed

    # -------------------------------------------------- classification

    def kind_of(self, relative: str, parsed: ParsedYaml | None = None) -> str | None:
        """What ``relative`` is to us: suite, dataset, manifest, targets, config, or None."""
        name = relative.rsplit("/", 1)[-1]
        if relative in TARGETS_PATHS:
            return TARGETS_FILE
        if relative in CONFIG_PATHS:
            return CONFIG_FILE if self._holds_config(relative) else None
        if name.endswith(".jsonl"):
            if relative in self.recordings() or relative in self.documents_files():
                return None
            if relative in self.live_datasets or glob_match(relative, self.settings.dataset_globs) or relative in self.suite_datasets():
                return DATASET_FILE
            # Any other JSON Lines file is a dataset only when its rows say so:
            # pre-commit passes every .jsonl of a repository (training data, logs).
            return DATASET_FILE if self._begins_with_cases(relative) else None
        if not name.endswith((".yaml", ".yml")):
            return None
        if glob_match(relative, self.settings.manifest_globs):
            return MANIFEST_FILE
        if name.endswith((".suite.yaml", ".suite.yml")):
            return SUITE_FILE
        parsed = parsed or self.parsed_yaml(relative)
        top = parsed.document.root if parsed is not None else None
        if top is not None and top.is_map:
            if top.get("manifest_version") is not None and top.get("kind") is not None:
                return MANIFEST_FILE
            if top.entry("suites") is not None:
                return SUITE_FILE
            if top.entry("targets") is not None and relative.startswith(".punica/"):
                return TARGETS_FILE
            return None
        # Unreadable YAML where suites live is still reported (as RAG001).
        if glob_match(relative, self.settings.suite_globs) and (parsed is None or not parsed.document.well_formed):
            return SUITE_FILE
        return None

    def _begins_with_cases(self, relative: str) -> bool:
        """Whether one of the first rows of a JSON Lines file is plainly a rag case
        or a gdi_text_v1 row (see rows.looks_like_a_row)."""
        source = self.read(relative)
        if source is None or source.refused:
            return False
        text = source.text
        start = looked = 0
        # Line by line from the top: the file may be large, and open in an editor.
        while looked < _ROWS_SNIFFED and start < len(text):
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            line = text[start:end].strip()
            start = end + 1
            if not line:
                continue
            looked += 1
            try:
                value = json.loads(line)
            except ValueError:
                # A case being typed is not JSON yet: its keys still tell.
                if any(key in line for key in _KEYS_OF_ROWS):
                    return True
                continue
            if looks_like_a_row(value):
                return True
        return False

    def suite_datasets(self) -> frozenset[str]:
        """The datasets the workspace's suites name (as workspace paths)."""
        return self._fact("suite datasets", lambda: frozenset(suite.dataset for suite in self.suites() if suite.dataset))

    def _holds_config(self, relative: str) -> bool:
        """Whether ``relative`` is the settings file in force (the `[tool.rag-lsp]`
        table of pyproject.toml is read only when .punica/rag-lsp.toml is absent)."""
        if relative == PYPROJECT_PATH and self.absolute(CONFIG_PATH).is_file():
            return False
        if relative == CONFIG_PATH and config_outside(self.root, relative) is not None:
            return True  # refused, and reported
        source = self.read(relative)
        return source is not None and not source.refused and holds_settings(relative, source.text)

    # -------------------------------------------------- discovery

    def discover(self) -> dict[str, str]:
        """Every file of the workspace we check, with its kind."""
        return self._fact("discovered", self._discover)

    def _discover(self) -> dict[str, str]:
        found: dict[str, str] = {}
        yaml_globs = (*self.settings.suite_globs, *self.settings.manifest_globs)
        for relative in CONFIG_PATHS:
            if self.kind_of(relative) == CONFIG_FILE:
                found[relative] = CONFIG_FILE
        datasets = []
        nested = self._nested_prefixes()
        for relative in self.files():
            if nested and relative.startswith(nested):
                continue  # another workspace's (see nested_roots)
            if relative in TARGETS_PATHS:
                found[relative] = TARGETS_FILE
            elif relative.endswith((".yaml", ".yml")):
                if glob_match(relative, yaml_globs) and (kind := self.kind_of(relative)) is not None:
                    found[relative] = kind
            elif relative.endswith(".jsonl") and glob_match(relative, self.settings.dataset_globs):
                datasets.append(relative)
        for suite in self.suites():
            if suite.dataset is not None and suite.dataset in self.file_set() and not (nested and suite.dataset.startswith(nested)):
                found.setdefault(suite.dataset, DATASET_FILE)
        for relative in datasets:
            if relative not in self.recordings() and relative not in self.documents_files():
                found.setdefault(relative, DATASET_FILE)
        return dict(sorted(found.items()))

    # -------------------------------------------------- facts

    def suites(self) -> list[SuiteInfo]:
        """Every suite of every suite file, in file order."""
        return self._fact("suites", self._collect_suites)

    def suite_files(self) -> list[str]:
        """The workspace's suite files (those ``check`` checks as suites, unreadable
        ones included), in the order of the file listing."""

        def collect() -> list[str]:
            yaml_globs = self.settings.suite_globs
            nested = self._nested_prefixes()
            return [
                relative for relative in self.files()
                if relative.endswith((".yaml", ".yml"))
                and glob_match(relative, yaml_globs)
                and not (nested and relative.startswith(nested))
                and relative not in TARGETS_PATHS
                and self.kind_of(relative) == SUITE_FILE
            ]

        return self._fact("suite_files", collect)

    def _collect_suites(self) -> list[SuiteInfo]:
        return [suite for relative in self.suite_files() for suite in self.suites_of(relative)]

    def suites_of(self, relative: str) -> list[SuiteInfo]:
        parsed = self.parsed_yaml(relative)
        if parsed is None or parsed.document.root is None:
            return []
        suites_node = parsed.document.root.get("suites") if parsed.document.root.is_map else None
        if suites_node is None:
            return []
        return [suite_info(node, relative) for node in suites_node.elements() if node.is_map]

    def suites_by_id(self) -> dict[str, list[SuiteInfo]]:
        def collect() -> dict[str, list[SuiteInfo]]:
            by_id: dict[str, list[SuiteInfo]] = {}
            for suite in self.suites():
                if suite.id is not None:
                    by_id.setdefault(suite.id, []).append(suite)
            return by_id

        return self._fact("suites_by_id", collect)

    def manifests(self) -> ManifestRegistry:
        return self._fact("manifests", self._collect_manifests)

    def manifest_files(self) -> list[str]:
        return [relative for relative, kind in self.discover().items() if kind == MANIFEST_FILE]

    def _collect_manifests(self) -> ManifestRegistry:
        registry = ManifestRegistry.builtins()
        for relative in self.manifest_files():
            parsed = self.parsed_yaml(relative)
            manifest = manifest_from(parsed.value, relative) if parsed is not None and isinstance(parsed.value, dict) else None
            if manifest is None:
                text, value = (parsed.text, parsed.value) if parsed is not None else (None, None)
                registry.unreadable.append(unreadable_manifest(relative, text, value))
            else:
                registry.add(manifest)
        return registry

    def targets_file(self) -> str | None:
        for relative in TARGETS_PATHS:
            if self.read(relative) is not None:
                return relative
        return None

    def targets(self) -> dict[str, TargetInfo]:
        return self._fact("targets", self._collect_targets)

    def targets_readable(self) -> bool:
        """Whether the targets config, if there is one, could be read: while it
        cannot, which targets it configures is unknown."""
        relative = self.targets_file()
        if relative is None:
            return True
        parsed = self.parsed_yaml(relative)
        return parsed is not None and isinstance(parsed.value, dict)

    def _collect_targets(self) -> dict[str, TargetInfo]:
        targets: dict[str, TargetInfo] = {}
        relative = self.targets_file()
        parsed = self.parsed_yaml(relative) if relative else None
        configured = parsed.value.get("targets") if parsed is not None and isinstance(parsed.value, dict) else None
        if isinstance(configured, dict):
            for target_id, config in configured.items():
                if isinstance(config, dict):
                    info = target_info(str(target_id), config)
                    if info is not None:
                        targets[str(target_id)] = info
        if DEFAULT_TARGET not in targets:
            targets[DEFAULT_TARGET] = TargetInfo(
                DEFAULT_TARGET, "builtin", {"corpora": {"code": ["**"]}}, BUILTIN_FIELDS, ("code",), workspace_paths=True
            )
        return targets

    def recordings(self) -> frozenset[str]:
        """Files that recorded targets replay: JSON Lines, but not datasets."""

        def collect() -> frozenset[str]:
            found = set()
            for target in self.targets().values():
                if target.kind == "recorded" and isinstance(target.config.get("recorded"), str):
                    normal = normalize_relative(target.config["recorded"])
                    if normal:
                        found.add(normal)
            return frozenset(found)

        return self._fact("recordings", collect)

    def documents_files(self) -> frozenset[str]:
        """The documents files of builtin targets' corpora: JSON Lines, but not datasets."""
        from .suitefacts import documents_files

        return self._fact(
            "documents files", lambda: frozenset(file for target in self.targets().values() for file in documents_files(target))
        )

    def dataset_shape(self, relative: str) -> str | None:
        """The shape most parseable rows of the dataset have: rag case or gdi_text_v1."""
        live = self.live_datasets.get(relative)
        if live is not None:
            return live.shape
        parsed = self.parsed_dataset(relative)
        if parsed is None:
            return None
        if parsed.shape is _UNKNOWN:
            parsed.shape = shape_of_rows(row for _, row in parsed.rows)
        return parsed.shape
