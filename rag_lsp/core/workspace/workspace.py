"""The workspace: its root, its settings, and the facts that cross files.

Facts that several files need (the suites and the datasets they use, the
manifests, the targets, the index of workspace files) are computed once and kept
until :meth:`Workspace.invalidate` says a file changed. Reading files is
``core.reading.sources``'s, finding them ``core.workspace.files``'s, what a suite or target is
``core.workspace.suitefacts``'s, and reading a dataset's rows ``core.workspace.rows``'s.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from itertools import filterfalse
from operator import itemgetter, methodcaller
from pathlib import Path
from collections import Counter
from typing import Any, Iterable, Mapping

from .settings import MAX_YAML_DEPTH
from .config import CONFIG_PATH, CONFIG_PATHS, PYPROJECT_PATH, ConfigFile, find_config, holds_settings, layered, outside_config
from ..reading.safefiles import inside
from ..reading.findings import FOLD_FROM_ROWS
from .files import glob_match, globs_matcher, list_files, named_like_binary
from ..reading.jsonrows import Row
from .manifests import ManifestRegistry, manifest_from, unreadable_manifest
from .pathindex import PathIndex
from ..reading.paths import not_normal_among, normalize_relative
from .rows import DatasetRow, corpora_asked, looks_like_a_row, read_lines, shape_of_rows, top_k_asked
from .settings import SHARED_DEFAULTS, Settings
from ..reading.sources import DiskSource, FileSource, OverlaySource, SourceText, size_above
from .suitefacts import BUILTIN_FIELDS, DEFAULT_TARGET, Corpora, DatasetUse, SuiteInfo, TargetInfo, builtin_corpora, suite_info, target_info
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


# ---------------------------------------------------------------- roots


def read_workspace_config(root: Path, source: FileSource | None = None) -> ConfigFile | None:
    """The settings file in force at ``root``, read (None when there is none)."""
    reader = source or DiskSource(Settings().max_file_bytes)
    refused = config_outside(root, CONFIG_PATH)
    if refused is not None:
        return refused

    def text_of(relative: str) -> str | None:
        if not inside(root, root / relative):
            return None  # a link out of the workspace is not read
        found = reader.read(root / relative)
        return found.text if found is not None and not found.refused else None

    return find_config(text_of)


def config_outside(root: Path, relative: str) -> ConfigFile | None:
    """The settings file ``relative`` refused, when it is a link that leads out
    of the workspace at ``root`` (see config.outside_config); else None."""
    path = root / relative
    if not os.path.islink(path) or inside(root, path):
        return None
    try:
        target = str(path.resolve())
    except (OSError, RuntimeError):
        target = os.readlink(path)
    return outside_config(relative, target)


def settings_source(root: Path, texts: Mapping[Path, str]) -> OverlaySource:
    """A source for the workspace at ``root`` that reads its settings files as an
    editor holds them (``texts``: open documents' texts by path), from disk
    otherwise: the settings are read before the workspace, and its limits, exist."""
    source = OverlaySource(DiskSource(Settings().max_file_bytes))
    for relative in CONFIG_PATHS:
        text = texts.get(root / relative)
        if text is not None:
            source.texts[root / relative] = text
    return source


# What marks a workspace root, in order, from the defaults shared with the
# editors (settings.py): a name, and whether it must be a folder.
ROOT_MARKERS: tuple[tuple[str, bool], ...] = tuple(
    (marker["name"], marker["kind"] == "folder") for marker in SHARED_DEFAULTS["rootMarkers"]
)


def find_root(start: Path) -> Path:
    """The nearest folder upwards holding ``.punica/``, else the git root, else
    ``start``'s folder: the first of the ROOT_MARKERS found upwards."""
    start = located(start)
    folder = start if start.is_dir() else start.parent
    for name, folder_only in ROOT_MARKERS:
        for candidate in (folder, *folder.parents):
            marker = candidate / name
            if marker.is_dir() if folder_only else marker.exists():
                return candidate
    return folder


def located(path: Path) -> Path:
    """``path`` made absolute, with links resolved in its folders but not in its
    last part: a file that is a link is where it is linked from, as the
    workspace's files list it (where it leads is a finding, RAG106)."""
    path = Path(os.path.abspath(path))
    return path.parent.resolve() / path.name if path.parent != path else path


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


class Workspace:
    """One workspace root, its settings, and its cross-file facts."""

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
        parsed.rows.extend(read_lines(DatasetRow, text.split("\n"), self.settings.max_line_bytes))
        if source.undecodable:
            # A byte that is not UTF-8 spoils its line only (RAG002), as a run reads it.
            bad = {line: (column, message) for line, column, message in source.undecodable}
            parsed.rows[:] = [
                (number, DatasetRow.undecodable(row.text, *bad[number]) if number in bad and not row.refused else row)
                for number, row in parsed.rows
            ]
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

    def files(self) -> list[str]:
        """Every workspace file (relative), skipping VCS, environments, dependencies and
        ignored files; and the editor's documents that are not on disk (yet)."""

        def collect() -> list[str]:
            listed = list_files(self.root, self.contains)
            unsaved = self._unsaved_documents(listed)
            return listed + unsaved if unsaved else listed

        return self._file_fact("files", collect)

    def _unsaved_documents(self, listed: list[str]) -> list[str]:
        """The editor's documents in the workspace that ``listed`` does not hold:
        a suite typed into a new buffer is a suite, and names its dataset, before
        it is saved."""
        held = getattr(self.source, "texts", None)
        if not held:
            return []
        known = set(listed)
        unsaved = []
        for path in held:
            try:
                relative = path.relative_to(self.root).as_posix()
            except ValueError:
                continue
            if relative not in known and not path.exists():
                unsaved.append(relative)
        return sorted(unsaved)

    def knows_file(self, relative: str) -> bool:
        """Whether ``relative`` is among the files listed (see files)."""
        return relative in self.file_set()

    def adopt_files(self, files: list[str], not_normal: Iterable[str] | None = None) -> None:
        """Take ``files`` as the workspace's files (as another process's workspace
        listed them), so that both judge expected paths alike; and ``not_normal``
        as those of them not in normal form, when that workspace knows them (see
        not_normal_files)."""
        self._file_facts["files"] = files
        if not_normal is not None:
            self._file_facts["not_normal_files"] = frozenset(not_normal)

    def file_set(self) -> frozenset[str]:
        return self._file_fact("file_set", lambda: frozenset(self.files()))

    def normal_file_set(self) -> frozenset[str]:
        """The workspace files whose path is its own normal form (nearly all): an
        expected value among them needs no normalizing to be found."""
        def collect() -> frozenset[str]:
            unusual = self.not_normal_files()
            return self.file_set().difference(unusual) if unusual else self.file_set()

        return self._file_fact("normal_file_set", collect)

    def searched_files(self, use: DatasetUse) -> frozenset[str]:
        """The workspace files in normal form that every builtin target of
        ``use`` may return (all of them when none reads the dataset): an
        expected path among them is one a hit can carry (RAG203)."""
        if not use.builtin_corpora:
            return self.normal_file_set()

        def collect() -> frozenset[str]:
            never = frozenset().union(*(self.unsearched_files(corpora) for _, corpora in use.builtin_corpora))
            return self.normal_file_set().difference(never) if never else self.normal_file_set()

        return self._file_fact(("searched", use.builtin_corpora), collect)

    def unsearched_files(self, corpora: Corpora) -> frozenset[str]:
        """The workspace files a builtin target with ``corpora`` may never return:
        hidden ones, those in none of its corpora, and those named like a binary
        file (each read when an expected path names it, to tell)."""

        def collect() -> frozenset[str]:
            files = self.normal_file_set()
            # Hidden, as files.hidden() says: a part of the path begins with a dot.
            never = {*self._files_holding("/."), *self._files_holding("\n.")}
            # Each ending is judged once (a workspace has a few dozen), by calls
            # in C over the files; the files are looked at again only for an
            # ending of a binary format.
            endings = set(map(itemgetter(2), map(methodcaller("rpartition", "."), files)))
            binary = {ending for ending in endings if named_like_binary(ending)}
            if binary:
                never.update(relative for relative in files if relative.rpartition(".")[2] in binary)
            globs = {glob for _, patterns in corpora for glob in patterns}
            if "**" not in globs:
                held = globs_matcher(globs)
                never.update(filterfalse(held, files))
            return frozenset(never & files)

        return self._file_fact(("unsearched", corpora), collect)

    def not_normal_files(self) -> frozenset[str]:
        """The workspace files whose path is not its own normal form (hardly any;
        one search over every path finds them: twenty milliseconds for 50,000)."""
        return self._file_fact("not_normal_files", lambda: frozenset(not_normal_among(self.files())))

    def path_index(self) -> PathIndex:
        """The workspace files by folder and name, for did-you-mean suggestions."""
        return self._file_fact("path_index", lambda: PathIndex(self.files()))

    def discover(self) -> dict[str, str]:
        """Every file of the workspace we check, with its kind."""
        return self._fact("discovered", self._discover)

    def _files_holding(self, part: str) -> list[str]:
        """The workspace files whose path holds ``part`` (a path begins after a
        "\n": "\n." finds those beginning with a dot), found by a search of
        their joined paths, as few hold it: a test of each path in Python takes
        ten times as long."""
        joined = self._file_fact("joined", lambda: "\n" + "\n".join(self.files()) + "\n")
        found = []
        at = joined.find(part)
        while at >= 0:
            start = joined.rfind("\n", 0, at + 1) + 1
            end = joined.find("\n", at + 1)
            found.append(joined[start:end])
            at = joined.find(part, end)
        return found

    def nested_roots(self) -> tuple[str, ...]:
        """The folders below the root that hold a ``.punica/`` of their own
        (relative, shortest first): each is the root of its own workspace, whose
        suites, datasets and settings are checked there, not here."""

        def collect() -> tuple[str, ...]:
            marked = {relative[: relative.index("/.punica/")] for relative in self._files_holding("/.punica/")}
            return tuple(sorted(marked, key=lambda folder: (folder.count("/"), folder)))

        return self._file_fact("nested roots", collect)

    def _nested_prefixes(self) -> tuple[str, ...]:
        """The folders of nested_roots, as prefixes of the paths they hold
        (``str.startswith`` takes them all at once)."""
        return tuple(folder + "/" for folder in self.nested_roots())

    def nested_workspaces(self, prefix: str = "") -> list[Path]:
        """The roots of the workspaces below this one (see nested_roots) under
        the folder ``prefix`` ("" or a relative folder ending in "/"), outermost
        first; one inside another is that one's to find."""
        nested = self.nested_roots()
        return [
            self.root / folder
            for folder in nested
            if (folder + "/").startswith(prefix) and not any(folder.startswith(outer + "/") for outer in nested if outer != folder)
        ]

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


# ---------------------------------------------------------------- helpers


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



