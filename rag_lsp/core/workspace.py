"""The workspace: its root, its files, and the facts that cross files.

All reading goes through a :class:`FileSource`, so the language server can put the
editor's unsaved text in front of the disk and the core never knows the difference.
Facts that several files need (the suites and the datasets they use, the manifests,
the targets, the index of workspace files) are computed once and kept until
:meth:`Workspace.invalidate` says a file changed.
"""

from __future__ import annotations

import bisect
import gc
import itertools
import os
import posixpath
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Protocol, Sequence, TypeVar

import pathspec

from .config import CONFIG_PATH, CONFIG_PATHS, PYPROJECT_PATH, ConfigFile, find_config, holds_settings, layered
from .jsonrows import Row, fine_row
from .manifests import GDI_TEXT, RAG_CASE, ManifestRegistry, manifest_from, unreadable_manifest
from .pathindex import PathIndex
from .settings import Settings
from .text import LineIndex
from .yamltree import TooLarge, YamlDocument, YamlLimits, YamlProblem, YNode, parse_yaml

# Folders that never hold workspace files: VCS, virtualenvs, dependencies, caches.
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".jj", "node_modules", ".venv", "venv", ".tox", ".nox",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
        ".eggs", ".cache", ".idea", ".vscode",
    }
)

SUITE_FILE = "suite"
DATASET_FILE = "dataset"
MANIFEST_FILE = "manifest"
TARGETS_FILE = "targets"
CONFIG_FILE = "config"

TARGETS_PATHS = (".punica/targets.yaml", ".punica/targets.yml")
DEFAULT_TARGET = "vectors.query"
BUILTIN_FIELDS = frozenset({"path", "id", "corpus", "score", "text"})
MATCH_FIELDS = ("path", "id", "corpus")
# The facts derived from the list of workspace files alone: kept while only texts change.
_FILE_FACTS = ("files", "file_set", "normal_file_set", "path_index")


# ---------------------------------------------------------------- roots


def read_workspace_config(root: Path, source: FileSource | None = None) -> ConfigFile | None:
    """The settings file in force at ``root``, read (None when there is none)."""
    reader = source or DiskSource(Settings().max_file_bytes)

    def text_of(relative: str) -> str | None:
        found = reader.read(root / relative)
        return found.text if found is not None and not found.refused else None

    return find_config(text_of)


def find_root(start: Path) -> Path:
    """The nearest folder upwards holding ``.punica/``, else the git root, else ``start``."""
    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".punica").is_dir():
            return candidate
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


# ---------------------------------------------------------------- reading


@dataclass(frozen=True)
class SourceText:
    """A file's text, or why it was not read in full."""

    text: str
    # Set when the file was refused (too large): the message of the RAG005.
    refused: str | None = None
    # (offset, message) of a byte that is not UTF-8; the text holds U+FFFD there.
    decode_error: tuple[int, str] | None = None
    # (line, column, message) of the first such byte of each line that has one
    # (lines split at "\n"): a dataset reads every other line.
    undecodable: tuple[tuple[int, int, str], ...] = ()


class FileSource(Protocol):
    def read(self, path: Path) -> SourceText | None:
        """The text of ``path``, or None when it is missing or not a file."""


class DiskSource:
    """Reads files from disk, refusing those above the size limit."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes

    def read(self, path: Path) -> SourceText | None:
        try:
            size = path.stat().st_size
            if not path.is_file():
                return None
            if size > self.max_bytes:
                return SourceText("", refused=f"file is {size:,} bytes, above the limit of {self.max_bytes:,}")
            data = path.read_bytes()
        except OSError:
            return None
        return decode(data)


class HasText(Protocol):
    @property
    def text(self) -> str:
        """The current text."""


class OverlaySource:
    """Texts held in memory (an editor's open documents) in front of another source.

    A text is a string, or an object whose ``text`` is read only when asked (an
    open dataset's model joins its lines only then). A string above the size limit
    of the source below is refused as that file would be: an open document is
    checked no further than the file on disk."""

    def __init__(self, base: FileSource) -> None:
        self.base = base
        self.max_bytes: int | None = getattr(base, "max_bytes", None)
        self.texts: dict[Path, str | HasText] = {}

    def limit(self, max_bytes: int) -> None:
        """Refuse files above ``max_bytes`` from now on (the workspace's settings
        are known only once its settings file is read, through this source)."""
        self.max_bytes = max_bytes
        if isinstance(self.base, DiskSource):
            self.base.max_bytes = max_bytes

    def read(self, path: Path) -> SourceText | None:
        text = self.texts.get(path)
        if text is None:
            return self.base.read(path)
        if not isinstance(text, str):
            return SourceText(text.text)
        size = size_above(text, self.max_bytes)
        if size is not None:
            return SourceText("", refused=f"document is {size:,} bytes, above the limit of {self.max_bytes:,}")
        return SourceText(text)


def utf8_size(text: str) -> int:
    """The size of ``text`` in UTF-8 (its length when it is ASCII, which CPython
    knows without looking)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def lines_size(lines: Sequence[str]) -> int:
    """The UTF-8 size of ``lines`` joined by "\n" (their lengths, when all are
    ASCII: told by a C method per line, where a dataset has a hundred thousand)."""
    if all(map(str.isascii, lines)):
        return sum(map(len, lines)) + len(lines) - 1
    return sum(map(utf8_size, lines)) + len(lines) - 1


def lines_size_above(lines: Sequence[str], limit: int | None) -> int | None:
    """:func:`size_above` for a text given as its lines."""
    if limit is None or (sum(map(len, lines)) + len(lines)) * 4 <= limit:
        return None
    size = lines_size(lines)
    return size if size > limit else None


def size_above(text: str, limit: int | None) -> int | None:
    """The UTF-8 size of ``text`` when it is above ``limit``, else None (encoding
    only a text whose length alone does not decide)."""
    if limit is None or len(text) * 4 <= limit:
        return None
    size = utf8_size(text)
    return size if size > limit else None


def decode(data: bytes) -> SourceText:
    """UTF-8 text; a byte that is not UTF-8 is kept as U+FFFD and reported."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        offset = len(data[: error.start].decode("utf-8", "replace"))
        text = data.decode("utf-8", "replace")
        return SourceText(
            _strip_bom(text),
            decode_error=(offset, f"byte 0x{data[error.start]:02x} is not valid UTF-8"),
            undecodable=_undecodable_lines(data, text.startswith("\ufeff")),
        )
    return SourceText(_strip_bom(text))


def _undecodable_lines(data: bytes, bom: bool) -> tuple[tuple[int, int, str], ...]:
    """(line, code-point column, message) of the first byte that is not UTF-8 on
    each line that has one. A newline is never part of a multi-byte character, so
    the lines of the bytes are those of the text."""
    found = []
    for number, line in enumerate(data.split(b"\n")):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            column = len(line[: error.start].decode("utf-8", "replace"))
            if bom and number == 0:
                column -= 1  # the text starts after the byte order mark
            found.append((number, column, f"byte 0x{line[error.start]:02x} is not valid UTF-8"))
    return tuple(found)


def _strip_bom(text: str) -> str:
    # A BOM is not content; keep columns true by replacing it with nothing only at 0.
    return text[1:] if text.startswith("\ufeff") else text


# ---------------------------------------------------------------- facts


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
    # are not workspace files (see contexts.PathTally), so RAG203 reports that
    # once for the file instead of once per value.
    paths_elsewhere: bool = False

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


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cycle collector while building many small objects.

    Decoding a 100k-line dataset allocates millions of containers, none in a
    cycle; the collector would otherwise run hundreds of times for nothing (it
    doubles the time to read a dataset).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def is_normal(value: str) -> bool:
    """Whether ``normalize_relative(value) == value``, without normalizing: a few
    searches in C, where a dataset lists hundreds of thousands of distinct paths.
    What makes a path differ from its normal form: a backslash, a leading, doubled
    or trailing "/", a "." or ".." part, a drive."""
    if "\\" in value or "//" in value or "/./" in value or "/../" in value or value in (".", ".."):
        return False
    if value.startswith(("/", "./", "../")) or value.endswith(("/", "/.", "/..")):
        return False
    return value[1:2] != ":"


# What a value not in normal form holds (see is_normal), in values joined by "\n"
# with one before the first and after the last: each part is found by str.find,
# a search in C where a regular expression would try every position, and each
# value holding one is then looked at alone.
_UNUSUAL_PARTS = ("\\", "//", "/.", "\n.", "\n/", "/\n")
_DRIVE = re.compile(r"\n[^\n]:")


def not_normal_among(values: list[str]) -> set[str]:
    """The values that are not in normal form (see is_normal), found by a few
    searches over them all (a dataset's many distinct paths are nearly all in
    normal form), or one by one when a value holds a line break."""
    if not values:
        return set()
    joined = "\n" + "\n".join(values) + "\n"
    if joined.count("\n") != len(values) + 1:
        return {value for value in values if not is_normal(value)}
    # Where each part was found: the offset of a character of the value it is in.
    inside: list[int] = []
    for part in _UNUSUAL_PARTS:
        shift = 1 if part[0] == "\n" else 0
        at = joined.find(part)
        while at >= 0:
            inside.append(at + shift)
            at = joined.find(part, at + 1)
    inside.extend(match.start() + 1 for match in _DRIVE.finditer(joined))
    if not inside:
        return set()
    starts = list(itertools.accumulate(len(value) + 1 for value in values[:-1]))
    starts.insert(0, 0)
    # Value i starts at 1 + starts[i] in the joined text.
    unusual = {values[bisect.bisect_right(starts, offset - 1) - 1] for offset in inside}
    return {value for value in unusual if not is_normal(value)}


@lru_cache(maxsize=65536)
def normalize_relative(value: str) -> str | None:
    """A workspace-relative path in normal form, or None when it leaves the workspace."""
    candidate = value.replace("\\", "/")
    if candidate.startswith("/") or (len(candidate) > 1 and candidate[1] == ":"):
        return None
    normal = posixpath.normpath(candidate)
    if normal == ".." or normal.startswith("../"):
        return None
    return "" if normal == "." else normal


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
        self._facts: dict[str, Any] = {}
        # Datasets kept up to date by an editor (rag_lsp.core.incremental), by
        # relative path: their facts are read from them, not parsed again.
        self.live_datasets: dict[str, Any] = {}
        # Counts the times the index of workspace files was dropped: what was
        # checked against an older index is checked again.
        self.files_version = 0
        # Set where only which lines have findings matters, not what they say (a
        # helper process screening lines that the server checks again): a rule may
        # then skip the costly part of a message (a did-you-mean search).
        self.screening = False

    @classmethod
    def configured(cls, root: Path, editor: Mapping[str, Any] | None = None, source: FileSource | None = None) -> Workspace:
        """The workspace at ``root`` with the settings in force there: its settings
        file's (read through ``source``, so an editor's unsaved text counts), with
        ``editor``'s values on top (see core.config)."""
        root = root.resolve()
        config = read_workspace_config(root, source)
        return cls(root, layered(config, editor), source, config)

    # -------------------------------------------------- paths

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, "/"-separated (absolute when outside)."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return path.resolve().as_posix()

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
        return YamlLimits(self.settings.max_yaml_depth, self.settings.max_yaml_nodes)

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
        kept = {name: self._facts[name] for name in _FILE_FACTS if not files_changed and name in self._facts}
        if "file_set" not in kept:
            self.files_version += 1
        self._facts = kept

    def forget_text(self, relative: str) -> None:
        """Drop what was parsed from ``relative``'s text, keeping every other fact
        (an open dataset was edited: nothing but its own text changed)."""
        self._yaml.pop(relative, None)
        self._datasets.pop(relative, None)

    def line_index(self, relative: str) -> LineIndex:
        """The line index of a file as it was last parsed (or of its text now, when
        it was not), to place findings: a large dataset's is not built twice."""
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

    # -------------------------------------------------- parsing (cached by text)

    def parsed_yaml(self, relative: str, source: SourceText | None = None) -> ParsedYaml | None:
        source = source or self.read(relative)
        if source is None or source.refused:
            return None
        cached = self._yaml.get(relative)
        if cached is not None and cached.text == source.text:
            return cached
        text = source.text
        if len(text) > self.settings.max_yaml_bytes:
            limit = self.settings.max_yaml_bytes
            message = f"YAML file is {len(text):,} characters, above the limit of {limit:,}"
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
        with gc_paused():
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

    def _matches(self, relative: str, globs: Iterable[str]) -> bool:
        return any(_glob_regex(pattern).fullmatch(relative) for pattern in globs)

    def kind_of(self, relative: str, parsed: ParsedYaml | None = None) -> str | None:
        """What ``relative`` is to us: suite, dataset, manifest, targets, config, or None."""
        name = relative.rsplit("/", 1)[-1]
        if relative in TARGETS_PATHS:
            return TARGETS_FILE
        if relative in CONFIG_PATHS:
            return CONFIG_FILE if self._holds_config(relative) else None
        if name.endswith(".jsonl"):
            if relative in self.recordings():
                return None
            return DATASET_FILE
        if not name.endswith((".yaml", ".yml")):
            return None
        if self._matches(relative, self.settings.manifest_globs):
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
        if self._matches(relative, self.settings.suite_globs) and (parsed is None or not parsed.document.well_formed):
            return SUITE_FILE
        return None

    def _holds_config(self, relative: str) -> bool:
        """Whether ``relative`` is the settings file in force (the `[tool.rag-lsp]`
        table of pyproject.toml is read only when .punica/rag-lsp.toml is absent)."""
        if relative == PYPROJECT_PATH and self.absolute(CONFIG_PATH).is_file():
            return False
        source = self.read(relative)
        return source is not None and not source.refused and holds_settings(relative, source.text)

    # -------------------------------------------------- discovery

    def files(self) -> list[str]:
        """Every workspace file (relative), skipping VCS, environments, dependencies and ignored files."""
        return self._fact("files", self._list_files)

    def adopt_files(self, files: list[str]) -> None:
        """Take ``files`` as the workspace's files (as another process's workspace
        listed them), so that both judge expected paths alike."""
        self._facts["files"] = files

    def file_set(self) -> frozenset[str]:
        return self._fact("file_set", lambda: frozenset(self.files()))

    def normal_file_set(self) -> frozenset[str]:
        """The workspace files whose path is its own normal form (nearly all): an
        expected value among them needs no normalizing to be found."""
        def collect() -> frozenset[str]:
            files = self.files()
            unusual = not_normal_among(files)
            return frozenset(files).difference(unusual) if unusual else frozenset(files)

        return self._fact("normal_file_set", collect)

    def path_index(self) -> PathIndex:
        """The workspace files by folder and name, for did-you-mean suggestions."""
        return self._fact("path_index", lambda: PathIndex(self.files()))

    def _list_files(self) -> list[str]:
        found: list[str] = []
        self._list_folder(str(self.root), "", [], found)
        return found

    def _list_folder(self, folder: str, prefix: str, ignores: list[tuple[str, pathspec.PathSpec]], found: list[str]) -> None:
        """Add the files of ``folder`` (``prefix`` from the root), then those of its
        folders, each in name order, as a walk from the top lists them. A folder
        entry tells whether it is a link without another system call: a tree of
        50,000 files is listed in a fraction of a second."""
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            return
        # As git does, a .gitignore that is a link is not followed: it may
        # point anywhere, and nothing outside the workspace is read.
        for entry in entries:
            if entry.name == ".gitignore" and not entry.is_symlink():
                ignores = [*ignores, (prefix, _gitignore(Path(entry.path)))]
                break
        folders = []
        for entry in entries:
            name = entry.name
            relative = prefix + name
            try:
                is_folder = entry.is_dir()
            except OSError:
                is_folder = False
            if is_folder:
                # A link to a folder is not walked into (nor listed).
                if name not in SKIPPED_DIRS and not entry.is_symlink() and not _ignored(ignores, relative + "/"):
                    folders.append(entry)
                continue
            if ignores and _ignored(ignores, relative):
                continue
            # A symlink to a file outside the workspace is not a workspace file.
            if entry.is_symlink() and not self.contains(Path(entry.path)):
                continue
            found.append(relative)
        for entry in folders:
            self._list_folder(entry.path, prefix + entry.name + "/", ignores, found)

    def discover(self) -> dict[str, str]:
        """Every file of the workspace we check, with its kind."""
        return self._fact("discovered", self._discover)

    def _discover(self) -> dict[str, str]:
        found: dict[str, str] = {}
        yaml_globs = (*self.settings.suite_globs, *self.settings.manifest_globs)
        for relative in CONFIG_PATHS:
            if self.kind_of(relative) == CONFIG_FILE:
                found[relative] = CONFIG_FILE
        for relative in self.files():
            if relative in TARGETS_PATHS:
                found[relative] = TARGETS_FILE
            elif relative.endswith((".yaml", ".yml")) and self._matches(relative, yaml_globs):
                kind = self.kind_of(relative)
                if kind is not None:
                    found[relative] = kind
        for suite in self.suites():
            if suite.dataset is not None and suite.dataset in self.file_set():
                found.setdefault(suite.dataset, DATASET_FILE)
        for relative in self.files():
            if relative.endswith(".jsonl") and self._matches(relative, self.settings.dataset_globs):
                if relative not in self.recordings():
                    found.setdefault(relative, DATASET_FILE)
        return dict(sorted(found.items()))

    # -------------------------------------------------- facts

    def suites(self) -> list[SuiteInfo]:
        """Every suite of every suite file, in file order."""
        return self._fact("suites", self._collect_suites)

    def _collect_suites(self) -> list[SuiteInfo]:
        suites: list[SuiteInfo] = []
        yaml_globs = self.settings.suite_globs
        candidates = [r for r in self.files() if r.endswith((".yaml", ".yml")) and self._matches(r, yaml_globs)]
        for relative in candidates:
            if relative in TARGETS_PATHS or self.kind_of(relative) != SUITE_FILE:
                continue
            suites.extend(self.suites_of(relative))
        return suites

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
        searching = (
            suite.target
            for suite in users
            if suite.match == "path" and suite.target in targets and targets[suite.target].workspace_paths
        )
        return DatasetUse(
            matches=frozenset(suite.match for suite in users),
            ks=frozenset(suite.k for suite in users if suite.k is not None),
            suites=tuple(suite.id or "?" for suite in users),
            accepts=frozenset(accepts),
            workspace_targets=tuple(dict.fromkeys(searching)),
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


# ---------------------------------------------------------------- helpers


def row_shape(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    if "input_id" in value or "retrieved_context" in value or "reference_contexts" in value:
        return GDI_TEXT
    if "input" in value or "expect" in value:
        return RAG_CASE
    return None


R = TypeVar("R", bound=Row)
DR = TypeVar("DR", bound="DatasetRow")


def read_lines(kind: type[R], lines: list[str], limit: int) -> list[tuple[int, R]]:
    """(line number, row) for each line of a dataset that is not blank: rows of
    ``kind``, refused (RAG005) when longer than ``limit``. Lines are the text split
    at "\n"; a "\r" before it is part of the ending, as in LineIndex."""
    numbers: list[int] = []
    texts: list[str] = []
    refused: list[tuple[int, R]] = []
    for number, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]
        if not line or line.isspace():
            continue
        if len(line) <= limit:
            numbers.append(number)
            texts.append(line)
        else:
            refused.append((number, kind.too_long(line, limit)))
    rows = list(zip(numbers, kind.read_many(texts)))
    # Line numbers are distinct: sorting never compares two rows.
    return sorted(rows + refused, key=lambda item: item[0]) if refused else rows


class DatasetRow(Row):
    """A dataset line's row with its shape (see row_shape), settled once: the
    file's shape, which rows are cases and which schema a row meets all ask."""

    __slots__ = ("shape",)

    def __init__(self, text: str, refused: str | None = None) -> None:
        super().__init__(text, refused)
        self.shape = row_shape(self.value)

    @classmethod
    def read_fine(cls: type[DR], text: str, value: Any) -> DR:
        row = fine_row(cls, text, value)
        row.shape = row_shape(value)
        return row

    @classmethod
    def undecodable(cls: type[DR], text: str, column: int, message: str) -> DR:
        """The row of a line holding a byte that is not UTF-8 (at ``column``): not
        read, like a line that is not JSON (JSON text is UTF-8)."""
        row = fine_row(cls, text, None)
        row.shape = None
        row.error = (column, f"{message}; a dataset is UTF-8 text: save the file as UTF-8")
        return row


def shape_of_rows(rows: Iterable[DatasetRow]) -> str | None:
    counts = {RAG_CASE: 0, GDI_TEXT: 0}
    for row in rows:
        shape = row.shape
        if shape is not None:
            counts[shape] += 1
    if not any(counts.values()):
        return None
    # A tie reads as rag cases: the engine format is the primary one.
    return RAG_CASE if counts[RAG_CASE] >= counts[GDI_TEXT] else GDI_TEXT


def suite_info(node: YNode, file: str) -> SuiteInfo:
    dataset = node.get("dataset")
    dataset_text = dataset.text() if dataset is not None else None
    options = node.get("options")
    rag = options.get("rag") if options is not None and options.is_map else None
    match_node = rag.get("match") if rag is not None and rag.is_map else None
    match = match_node.text() if match_node is not None else None
    k_node = rag.get("k") if rag is not None and rag.is_map else None
    k = k_node.scalar() if k_node is not None else None
    engines = node.get("engines")
    metrics = node.get("metrics")
    target = node.get("target")
    target_id = target.get("id") if target is not None and target.is_map else None
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
        corpora_names = tuple(corpora) if isinstance(corpora, dict) else ("code",)
        return TargetInfo(target_id, kind, config, BUILTIN_FIELDS, corpora_names, workspace_paths=True)
    return TargetInfo(
        target_id,
        kind,
        config,
        frozenset(f for f in fields_value if isinstance(f, str)) if isinstance(fields_value, list) else None,
        tuple(c for c in corpora_value if isinstance(c, str)) if isinstance(corpora_value, list) else None,
        workspace_paths=config.get("workspace_paths") is True,
    )


def _gitignore(path: Path) -> pathspec.PathSpec:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(ignores: list[tuple[str, pathspec.PathSpec]], relative: str) -> bool:
    # As git: the deepest .gitignore with a pattern for the path decides, so a
    # nested "!name" re-includes what a parent folder's file ignored.
    ignored = False
    for prefix, spec in ignores:
        if relative.startswith(prefix):
            verdict = spec.check_file(relative[len(prefix):]).include
            if verdict is not None:
                ignored = verdict
    return ignored


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A workspace glob as a regex: ``*`` and ``?`` stay inside a folder, ``**/``
    spans any number of folders (none included), ``{a,b}`` is either, as in
    editors' file globs."""
    regex = ""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            regex += "(?:.*/)?"
            index += 3
            continue
        if pattern.startswith("**", index):
            regex += ".*"
            index += 2
            continue
        if char == "{" and "}" in pattern[index:]:
            # Editors' brace alternatives: "*.y{a,}ml" is "*.yaml" or "*.yml".
            close = pattern.index("}", index)
            options = pattern[index + 1 : close].split(",")
            regex += "(?:" + "|".join(re.escape(option) for option in options) + ")"
            index = close + 1
            continue
        regex += "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char)
        index += 1
    return re.compile(regex)


def glob_match(relative: str, globs: Iterable[str]) -> bool:
    """Whether a workspace-relative path matches one of the workspace globs."""
    return any(_glob_regex(pattern).fullmatch(relative) for pattern in globs)
