"""The checking side of the server: core workspaces, their overlays, and analysis.

A :class:`Checker` lives on one worker thread (the core's caches are not shared
between threads); the message loop hands it a :class:`Snapshot` of the open
documents and gets back diagnostics per file, already in the client's encoding.
It never talks to the client itself.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from ...core.checking.analysis import Analysis
from ...core.workspace.documents import document_relative, drop_closed, hold_text
from ...core.reading.findings import Finding, shown_in_editor
from ...core.checking.incremental import DatasetModel
from ...core.checking.shown import ShownFindings
from ...core.workspace.config import CONFIG_PATHS
from ...core.workspace.settings import EditorSettings
from ...core.reading.text import LineIndex
from ...core.reading.sources import OverlaySource, lines_size, utf8_size
from ... import collector
from ...core.workspace.roots import find_root, read_workspace_config, settings_source
from ...core.workspace.workspace import DATASET_FILE, Workspace
from ..base.convert import Positions, file_uri
from ..base.diagnostics import FileDiagnostics
from ..base.uris import near
from .conversions import Conversions
from .snapshot import OpenDocument, PassResult, Snapshot

log = logging.getLogger(__name__)

# (files done, files in this pass)
ProgressCallback = Callable[[int, int], None]


# What _sync_dataset answers for an open dataset refused for its size.
_TOO_LARGE = object()
# The facts of an open dataset no check has shown its suites yet.
_UNSEEN = object()


def _utf8_size(document: OpenDocument) -> int:
    """The UTF-8 size of a whole document."""
    if document.size is not None:
        return document.size
    if document.text is not None:
        return utf8_size(document.text)
    return lines_size(document.lines or [""])


def _new_model(
    analysis: Analysis,
    workspace: Workspace,
    relative: str,
    text: str | None,
    lines: list[str] | None = None,
    size: int | None = None,
    encoding: str | None = None,
) -> DatasetModel:
    """A dataset model, kept out of later collections once built (see rag_lsp.collector)."""
    model = analysis.model(workspace, relative, text, lines, size, encoding)
    collector.settle()
    return model


def _root_of_folder(folder: Path) -> Path:
    """The workspace root a workspace folder is scanned as: the root above it
    when that is marked, else the folder itself."""
    root = find_root(folder)
    return root if _has_marker(root) else folder


def _has_marker(folder: Path) -> bool:
    return (folder / ".punica").is_dir() or (folder / ".git").exists()


def _with_settings_files(root: Path, documents: dict[Path, OpenDocument]) -> OverlaySource:
    """A source for ``root``'s workspace that reads its settings files as the
    editor has them (see settings_source)."""
    texts = {}
    for relative in CONFIG_PATHS:
        document = documents.get(root / relative)
        if document is not None and document.whole:
            texts[root / relative] = document.joined()
    return settings_source(root, texts)


class Checker:
    """Core workspaces by root, with the open documents in front of the disk."""

    def __init__(self, analysis: Analysis | None = None) -> None:
        """``analysis``: what checks the files (and owns the helper process that
        shares large readings); by default one of its own."""
        self.settings: EditorSettings | None = None
        self.workspaces: dict[Path, Workspace] = {}
        # Roots that may be walked for discovery (marked, or an editor's folder).
        self._scanned: set[Path] = set()
        # Datasets kept line by line (open ones follow the editor's changes; others
        # are read from disk once, until a watched change says otherwise).
        self.models: dict[Path, DatasetModel] = {}
        # Datasets whose model follows an open document's changes.
        self._following: set[Path] = set()
        # What each open dataset last showed its suites (see _suite_facts).
        self._facts_shown: dict[Path, tuple] = {}
        # Diagnostics already converted, by finding and the text of its lines.
        self._converted = Conversions()
        # The one way into checking: it picks how each file is read, and owns the
        # second process that shares the first reading of large datasets.
        self.analysis = analysis if analysis is not None else Analysis()
        # Set once a large message has been announced (see transport.on_large):
        # most likely a dataset the editor opens, whose reading begins as soon
        # as the message has arrived.
        self.large_document_coming = threading.Event()
        # The settings files open in the editor at the last pass, by root.
        self._settings_open: dict[Path, frozenset[Path]] = {}
        # The settings the workspaces were prepared with before the first pass (see prepare).
        self._prepared_with: EditorSettings | None = None

    def close(self) -> None:
        """Stop what the checker started (its analysis's helper process)."""
        self.analysis.close()

    # -------------------------------------------------- roots

    def root_of(self, path: Path, folders: tuple[Path, ...]) -> Path:
        """The workspace root of ``path``: ``.punica/`` or git root upwards, else the
        editor's workspace folder holding it, else its own folder."""
        root = find_root(path)
        if _has_marker(root):
            return root
        holders = [folder for folder in folders if path == folder or folder in path.parents]
        return max(holders, key=lambda folder: len(folder.parts)) if holders else root

    def workspace_for(self, path: Path, folders: tuple[Path, ...], settings: EditorSettings) -> Workspace:
        """The core workspace holding ``path`` (created when none does yet)."""
        return self._workspace(self.root_of(path, folders), self.settings or settings)

    def _workspace(self, root: Path, settings: EditorSettings, documents: dict[Path, OpenDocument] | None = None) -> Workspace:
        workspace = self.workspaces.get(root)
        if workspace is None:
            source = _with_settings_files(root, documents or {})
            workspace = Workspace.configured(root, settings.values, source)
            source.limit(workspace.settings.max_file_bytes)
            self.workspaces[root] = workspace
        return workspace

    def _settings_file_changed(self, root: Path, snapshot: Snapshot) -> bool:
        """Whether the settings file of ``root``'s workspace says something other
        than when the workspace was made (as the editor has it, else on disk)."""
        paths = [root / relative for relative in CONFIG_PATHS]
        # A settings file closed since (its unsaved text gone) is read from disk again.
        open_now = frozenset(path for path in paths if path in snapshot.documents)
        closed = bool(self._settings_open.get(root, frozenset()) - open_now)
        self._settings_open[root] = open_now
        if not snapshot.full and not closed and not any(path in snapshot.changed_files or path in snapshot.documents for path in paths):
            return False
        return read_workspace_config(root, _with_settings_files(root, snapshot.documents)) != self.workspaces[root].config

    @collector.pausing
    def prepare(self, folders: tuple[Path, ...], settings: EditorSettings) -> None:
        """Read what any check of the folders' workspaces needs first (their files,
        suites, manifests and targets) before the first pass: a document opened
        right after start-up is then checked without waiting for a walk of the
        workspace. Only before the first pass; the first pass keeps these
        workspaces if its settings are these."""
        if self.settings is not None:
            return
        self._prepared_with = settings
        large = False
        for folder in folders:
            workspace = self._workspace(_root_of_folder(folder), settings)
            try:
                discovered = workspace.discover()
                if self.analysis.expect_large_among(workspace, discovered):
                    # The scan reads that dataset (open or not) with the helper:
                    # it started now, while the editor sends its first documents.
                    large = True
                workspace.manifests()
                workspace.targets()
                workspace.normal_file_set()
                if DATASET_FILE in discovered.values() and not self.large_document_coming.is_set():
                    # A dataset's first missing path asks for the closest workspace
                    # file: the index of them by folder and name (a tenth of a
                    # second for 50,000 files) is built before its first check.
                    # Not while a large document arrives: this process alone would
                    # build it while the reading waits, where the reading's first
                    # missing path builds it while the helper reads on.
                    workspace.path_index()
            except Exception:  # the pass reads them again, and reports what fails
                log.exception("reading the workspace at %s failed", workspace.root)
        if not large and not self.large_document_coming.is_set():
            # Started with the server, ahead of any need (see `rag-lsp serve`):
            # no dataset here needs it, and a later one starts it again.
            self.analysis.idle()

    # -------------------------------------------------- one pass

    @collector.pausing  # a pass reads and checks whole datasets (see rag_lsp.collector)
    def run(self, snapshot: Snapshot, progress: ProgressCallback | None = None) -> PassResult:
        """Check what ``snapshot`` asks for (see Snapshot): the diagnostics of
        each file checked, converted for the client."""
        full = snapshot.full
        if snapshot.settings != self.settings:
            # Settings shape parsing and discovery: start every workspace afresh
            # (unless prepared with these settings, just before this first pass).
            self.settings = snapshot.settings
            if self._prepared_with != snapshot.settings:
                self.workspaces.clear()
            self._prepared_with = None
            self.models.clear()
            self._following.clear()
            full = True
        folders = snapshot.folders
        affected: set[Path] = set()
        for root in [root for root in self.workspaces if self._settings_file_changed(root, snapshot)]:
            # Settings shape parsing and discovery: the workspace starts afresh.
            scanned = root in self._scanned
            self._forget_root(root)
            if scanned:
                self._scanned.add(root)
            affected.add(root)
        for path in snapshot.changed_files:
            # What was derived from the file (and every cross-file fact: the files
            # index, suites, manifests, targets) is recomputed, and the whole
            # workspace re-checked, so the files that depend on it follow.
            for root, workspace in self.workspaces.items():
                if path == root or root in path.parents:
                    relative = document_relative(workspace, path)
                    workspace.invalidate(relative)
                    affected.add(root)
                    if path not in snapshot.documents:
                        self._forget_model(workspace, relative, path)
        by_root: dict[Path, dict[Path, OpenDocument]] = {}
        for path, document in snapshot.documents.items():
            by_root.setdefault(self.root_of(path, folders), {})[path] = document
        if full:
            affected |= set(self.workspaces)
            for folder in folders:
                roots = [_root_of_folder(folder)]
                # A folder below holding .punica/ is a workspace of its own (a
                # monorepo's), scanned as such: the outer one leaves its files.
                for root in roots:
                    roots += self._workspace(root, snapshot.settings, by_root.get(root)).nested_workspaces()
                affected.update(roots)
                self._scanned.update(roots)
        result = PassResult(snapshot.generation)
        if full and folders:
            # Workspace folders the editor no longer has: their files are forgotten
            # (and their diagnostics cleared), unless a document there is open.
            for root in [root for root in self.workspaces if root not in by_root and not near(root, folders)]:
                self._forget_root(root)
                affected.discard(root)
                result.checked_roots.add(root)
        for root in affected | set(by_root):
            self._workspace(root, snapshot.settings, by_root.get(root))
        # Only the edited lines of a dataset need checking: its other files, unless
        # an edit changed something they read (its row shape).
        edited: dict[Path, list[str]] = {}
        for root, workspace in self.workspaces.items():
            structural, datasets = self._sync_overlay(workspace, by_root.get(root, {}), result)
            if structural:
                affected.add(root)
            elif datasets:
                edited[root] = datasets
            if _has_marker(root) or root in folders:
                self._scanned.add(root)
        for path in snapshot.recheck:
            root = self.root_of(path, folders)
            if path in snapshot.documents and root not in affected:
                relative = document_relative(self.workspaces[root], path)
                again = edited.setdefault(root, [])
                if relative not in again:
                    again.append(relative)

        plans = [(root, self._files_to_check(root, by_root.get(root, {}), folders)) for root in sorted(affected)]
        plans += [(root, datasets) for root, datasets in sorted(edited.items()) if root not in affected]
        total = sum(len(files) for _, files in plans)
        done = 0
        for root, files in plans:
            workspace = self.workspaces[root]
            documents = by_root.get(root, {})
            lines: dict[str, Positions] = {}

            def positions(relative: str, workspace: Workspace = workspace, lines: dict[str, Positions] = lines) -> Positions:
                if relative not in lines:
                    model = self.models.get(workspace.absolute(relative))
                    if model is not None:
                        lines[relative] = Positions(model, snapshot.encoding)
                    else:
                        source = workspace.read(relative)
                        lines[relative] = Positions(LineIndex(source.text if source is not None else ""), snapshot.encoding)
                return lines[relative]

            def uri_of(relative: str, workspace: Workspace = workspace, documents: dict[Path, OpenDocument] = documents) -> str:
                path = workspace.absolute(relative)
                document = documents.get(path)
                return document.uri if document is not None else file_uri(path)

            # Datasets first: their models then answer what suites read of them (the
            # row shape), instead of a second parse of each dataset.
            for relative in sorted(files, key=lambda relative: not relative.endswith(".jsonl")):
                path = workspace.absolute(relative)
                document = documents.get(path)
                try:
                    findings = self._findings(workspace, relative, path)
                    diagnostics, as_json = self._converted.diagnostics(
                        path, findings, relative, positions, uri_of, snapshot.related_information, self.models.get(path)
                    )
                except Exception:  # one file failing must not hide the others
                    log.exception("checking %s failed", path)
                    diagnostics, as_json = [], []
                result.files[path] = FileDiagnostics(
                    document.uri if document is not None else file_uri(path),
                    document.version if document is not None else None,
                    diagnostics,
                    root,
                    as_json,
                )
                done += 1
                if progress is not None:
                    progress(done, total)
            if root in affected:
                result.checked_roots.add(root)
        return result

    def _findings(self, workspace: Workspace, relative: str, path: Path) -> list[Finding] | ShownFindings:
        """The findings of a file an editor is shown (see shown_in_editor); a
        dataset's from its model, which checks only what changed, as placed on
        their lines (see ShownFindings)."""
        model = self.models.get(path)
        if model is None and workspace.kind_of(relative) == DATASET_FILE:
            source = workspace.read(relative)
            # Unreadable bytes and refused files are the one-shot analysis's to report.
            if source is not None and not source.refused and source.decode_error is None:
                return self._first_findings(workspace, relative, path, source.text, source.encoding)
        limit = workspace.settings.max_findings_shown
        if model is None:
            return shown_in_editor(self.analysis.findings_in_one_go(workspace, relative), limit)
        if not model.checked:
            # Its first check allocates per line as well.
            shown = model.shown_as_placed(limit)
            collector.settle()
            return shown
        return model.shown_as_placed(limit)

    def _first_findings(self, workspace: Workspace, relative: str, path: Path, text: str, encoding: str | None = None) -> ShownFindings:
        """Read a dataset from disk (in ``encoding``, see SourceText.encoding) into a model and check it all."""
        model = self.models[path] = _new_model(self.analysis, workspace, relative, text, encoding=encoding)
        if relative not in workspace.live_datasets:
            workspace.live_datasets[relative] = model
        shown = model.shown_as_placed(workspace.settings.max_findings_shown)
        collector.settle()
        return shown


    def _sync_overlay(self, workspace: Workspace, documents: dict[Path, OpenDocument], result: PassResult) -> tuple[bool, list[str]]:
        """Put the open documents of ``workspace`` in front of the disk.

        Returns whether something other files read changed (then every file of the
        workspace is checked again), and the open datasets that were only edited.
        """
        wanted = {workspace.absolute(document_relative(workspace, path)): (path, document) for path, document in documents.items()}
        edited: list[str] = []
        closed = drop_closed(workspace, wanted)
        for path in closed:
            self._forget_model(workspace, document_relative(workspace, path), path)  # the disk's text counts again
        structural = bool(closed)
        for path, (document_path, document) in wanted.items():
            relative = document_relative(workspace, path)
            if relative.endswith(".jsonl") and workspace.kind_of(relative) == DATASET_FILE:
                changed = self._sync_dataset(workspace, relative, path, document)
                if changed is _TOO_LARGE:
                    structural = True
                elif changed is None:
                    result.resync.add(document_path)
                elif changed:
                    edited.append(relative)
                    # The row shape is read by the suites that use the dataset (RAG110),
                    # and so is whether most cases ask for fewer hits than their k
                    # (RAG207): they check again when either changed, or when they
                    # last read another text's (the disk's, before the dataset was opened).
                    facts = self._suite_facts(workspace, relative, path)
                    if self._facts_shown.get(path, _UNSEEN) != facts:
                        structural = True
                    self._facts_shown[path] = facts
                continue
            if hold_text(workspace, path, document.joined() if document.whole else ""):
                structural = True
        return structural, edited

    def _suite_facts(self, workspace: Workspace, relative: str, path: Path) -> tuple:
        """What the suites that use an open dataset read of it: its row shape, the
        topK most of its cases ask below each k its suites score, and the corpora
        most of them ask to search."""
        ks = workspace.dataset_use(relative).ks
        return (
            self.models[path].shape,
            tuple(workspace.top_k_most_asked_below(relative, k) for k in sorted(ks)),
            workspace.corpora_most_asked(relative),
        )

    def _sync_dataset(self, workspace: Workspace, relative: str, path: Path, document: OpenDocument) -> bool | None:
        """Bring the dataset's model to the document's version: whether it changed,
        None when it could not (the changes did not fit what the model holds)."""
        overlay = workspace.source
        model = self.models.get(path)
        # Its size, once: a pass over a large dataset's lines costs milliseconds,
        # before its reading can begin.
        size = _utf8_size(document) if document.whole else 0
        if document.whole and overlay.max_bytes is not None and size > overlay.max_bytes:
            return self._refuse(workspace, relative, path, document.joined())
        if document.whole:
            same = model is not None and (model.same_lines(document.lines) if document.lines is not None else model.text == document.text)
            if model is not None and same:
                # Already this text: the editor's own model (nothing changed), or the
                # disk's (a file the scan has read, opened unchanged), which now
                # follows the editor and is published for the document's version.
                opened = path not in self._following
                if opened and document.lines is not None:
                    model.share_lines(document.lines)  # the document holds them too
                # The editor's text now: how the file was encoded is the editor's to show.
                model.encoding = None
                self._following.add(path)
                overlay.texts[path] = model
                return opened
            model = _new_model(self.analysis, workspace, relative, document.text, document.lines, size)
        elif model is None or path not in self._following:
            return None  # changes to a text this checker does not hold
        else:
            try:
                for start, end, text in document.changes:
                    model.edit(start, end, text)
            except Exception:
                log.exception("applying changes to %s failed", relative)
                self._forget_model(workspace, relative, path)
                return None
            if not document.changes:
                return False
            if overlay.max_bytes is not None and model.size > overlay.max_bytes:
                return self._refuse(workspace, relative, path, model.text)
        self.models[path] = model
        self._following.add(path)
        overlay.texts[path] = model
        workspace.live_datasets[relative] = model
        # Parsed copies of the old text (from other files' checks) are stale now.
        workspace.forget_text(relative)
        return True

    def _refuse(self, workspace: Workspace, relative: str, path: Path, text: str) -> object:
        """An open dataset above the size limit is not kept line by line: its text
        goes in front of the disk as any open document's, and is refused (RAG005)
        as the file on disk would be. Its edits then come whole (see resync)."""
        self._forget_model(workspace, relative, path)
        workspace.source.texts[path] = text
        workspace.invalidate(relative, files_changed=False)
        return _TOO_LARGE

    def _forget_root(self, root: Path) -> None:
        del self.workspaces[root]
        self._scanned.discard(root)
        for path in [path for path in self.models if path == root or root in path.parents]:
            del self.models[path]
            self._facts_shown.pop(path, None)
            self._following.discard(path)
            self._converted.forget(path)

    def _forget_model(self, workspace: Workspace, relative: str, path: Path) -> None:
        """Drop a dataset's model: the next check reads the file again."""
        self.models.pop(path, None)
        self._facts_shown.pop(path, None)
        self._following.discard(path)
        workspace.live_datasets.pop(relative, None)

    def _files_to_check(self, root: Path, documents: dict[Path, OpenDocument], folders: tuple[Path, ...]) -> list[str]:
        """The files of ``root`` to check: every discovered file it owns, and its open documents."""
        workspace = self.workspaces[root]
        files: dict[str, None] = {}
        if root in self._scanned:
            owners: dict[Path, Path] = {}
            for relative in workspace.discover():
                folder = workspace.absolute(relative).parent
                if folder not in owners:
                    owners[folder] = self.root_of(folder, folders)
                # A nested workspace (its own .punica/) owns its files.
                if owners[folder] == root:
                    files[relative] = None
        for path in documents:
            files[document_relative(workspace, path)] = None
        return list(files)
