"""The checking side of the server: core workspaces, their overlays, and analysis.

A :class:`Checker` lives on one worker thread (the core's caches are not shared
between threads); the message loop hands it a :class:`Snapshot` of the open
documents and gets back diagnostics per file, already in the client's encoding.
It never talks to the client itself.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from lsprotocol import types

from ..core.analyze import analyze_file
from ..core.settings import Settings
from ..core.text import LineIndex
from ..core.workspace import DiskSource, OverlaySource, Workspace, find_root
from .convert import Positions, file_uri, to_diagnostic

log = logging.getLogger(__name__)

# (files done, files in this pass)
ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class OpenDocument:
    uri: str
    version: int | None
    text: str


@dataclass(frozen=True)
class Snapshot:
    """What one check pass looks at, captured on the message loop."""

    generation: int
    documents: dict[Path, OpenDocument]
    folders: tuple[Path, ...]
    settings: Settings
    encoding: str
    related_information: bool = True
    # Re-check every known workspace (start-up scan, new settings).
    full: bool = False
    # Files created, changed or deleted on disk (watched files) since the last pass.
    changed_files: tuple[Path, ...] = ()


@dataclass
class FileDiagnostics:
    uri: str
    version: int | None
    diagnostics: list[types.Diagnostic]
    root: Path


@dataclass
class PassResult:
    generation: int
    # Roots whose files were all re-checked: a file of such a root missing from
    # ``files`` has no findings any more.
    checked_roots: set[Path] = field(default_factory=set)
    files: dict[Path, FileDiagnostics] = field(default_factory=dict)


def document_relative(workspace: Workspace, path: Path) -> str:
    """``path`` relative to the workspace root, its folders resolved but not a
    symlink in its last part: an editor's document opened through a link to a file
    is a document of its own (as the scan lists it), not the file it points at."""
    try:
        return path.relative_to(workspace.root).as_posix()
    except ValueError:
        return workspace.relative(path)


def _has_marker(folder: Path) -> bool:
    return (folder / ".punica").is_dir() or (folder / ".git").exists()


class Checker:
    """Core workspaces by root, with the open documents in front of the disk."""

    def __init__(self) -> None:
        self.settings: Settings | None = None
        self.workspaces: dict[Path, Workspace] = {}
        # Roots that may be walked for discovery (marked, or an editor's folder).
        self._scanned: set[Path] = set()

    # -------------------------------------------------- roots

    def root_of(self, path: Path, folders: tuple[Path, ...]) -> Path:
        """The workspace root of ``path``: ``.punica/`` or git root upwards, else the
        editor's workspace folder holding it, else its own folder."""
        root = find_root(path)
        if _has_marker(root):
            return root
        holders = [folder for folder in folders if path == folder or folder in path.parents]
        return max(holders, key=lambda folder: len(folder.parts)) if holders else root

    def workspace_for(self, path: Path, folders: tuple[Path, ...], settings: Settings) -> Workspace:
        """The core workspace holding ``path`` (created when none does yet)."""
        return self._workspace(self.root_of(path, folders), self.settings or settings)

    def _workspace(self, root: Path, settings: Settings) -> Workspace:
        workspace = self.workspaces.get(root)
        if workspace is None:
            source = OverlaySource(DiskSource(settings.max_file_bytes))
            workspace = self.workspaces[root] = Workspace(root, settings, source)
        return workspace

    # -------------------------------------------------- one pass

    def run(self, snapshot: Snapshot, progress: ProgressCallback | None = None) -> PassResult:
        full = snapshot.full
        if snapshot.settings != self.settings:
            # Settings shape parsing and discovery: start every workspace afresh.
            self.settings = snapshot.settings
            self.workspaces.clear()
            full = True
        folders = snapshot.folders
        affected: set[Path] = set()
        for path in snapshot.changed_files:
            # What was derived from the file (and every cross-file fact: the files
            # index, suites, manifests, targets) is recomputed, and the whole
            # workspace re-checked, so the files that depend on it follow.
            for root, workspace in self.workspaces.items():
                if path == root or root in path.parents:
                    workspace.invalidate(document_relative(workspace, path))
                    affected.add(root)
        if full:
            affected |= set(self.workspaces)
            for folder in folders:
                root = find_root(folder)
                root = root if _has_marker(root) else folder
                affected.add(root)
                self._scanned.add(root)
        by_root: dict[Path, dict[Path, OpenDocument]] = {}
        for path, document in snapshot.documents.items():
            by_root.setdefault(self.root_of(path, folders), {})[path] = document
        for root in affected | set(by_root):
            self._workspace(root, snapshot.settings)
        for root, workspace in self.workspaces.items():
            if self._sync_overlay(workspace, by_root.get(root, {})):
                affected.add(root)
            if _has_marker(root) or root in folders:
                self._scanned.add(root)

        result = PassResult(snapshot.generation)
        plans = [(root, self._targets(root, by_root.get(root, {}), folders)) for root in sorted(affected)]
        total = sum(len(targets) for _, targets in plans)
        done = 0
        for root, targets in plans:
            workspace = self.workspaces[root]
            documents = by_root.get(root, {})
            lines: dict[str, Positions] = {}

            def positions(relative: str, workspace: Workspace = workspace, lines: dict[str, Positions] = lines) -> Positions:
                if relative not in lines:
                    source = workspace.read(relative)
                    lines[relative] = Positions(LineIndex(source.text if source is not None else ""), snapshot.encoding)
                return lines[relative]

            def uri_of(relative: str, workspace: Workspace = workspace, documents: dict[Path, OpenDocument] = documents) -> str:
                path = workspace.absolute(relative)
                document = documents.get(path)
                return document.uri if document is not None else file_uri(path)

            for relative in targets:
                path = workspace.absolute(relative)
                document = documents.get(path)
                try:
                    findings = analyze_file(workspace, relative)
                    diagnostics = [
                        to_diagnostic(finding, positions(relative), positions, uri_of, snapshot.related_information)
                        for finding in findings
                    ]
                except Exception:  # one file failing must not hide the others
                    log.exception("checking %s failed", path)
                    diagnostics = []
                result.files[path] = FileDiagnostics(
                    document.uri if document is not None else file_uri(path),
                    document.version if document is not None else None,
                    diagnostics,
                    root,
                )
                done += 1
                if progress is not None:
                    progress(done, total)
            result.checked_roots.add(root)
        return result

    def _sync_overlay(self, workspace: Workspace, documents: dict[Path, OpenDocument]) -> bool:
        """Put the open documents of ``workspace`` in front of the disk; whether anything changed."""
        overlay = workspace.source
        assert isinstance(overlay, OverlaySource)
        wanted = {workspace.absolute(document_relative(workspace, path)): document.text for path, document in documents.items()}
        changed = False
        for path in [path for path in overlay.texts if path not in wanted]:
            del overlay.texts[path]
            workspace.invalidate(document_relative(workspace, path))
            changed = True
        for path, text in wanted.items():
            if overlay.texts.get(path) != text:
                overlay.texts[path] = text
                workspace.invalidate(document_relative(workspace, path))
                changed = True
        return changed

    def _targets(self, root: Path, documents: dict[Path, OpenDocument], folders: tuple[Path, ...]) -> list[str]:
        """The files of ``root`` to check: every discovered file it owns, and its open documents."""
        workspace = self.workspaces[root]
        targets: dict[str, None] = {}
        if root in self._scanned:
            owners: dict[Path, Path] = {}
            for relative in workspace.discover():
                folder = workspace.absolute(relative).parent
                if folder not in owners:
                    owners[folder] = self.root_of(folder, folders)
                # A nested workspace (its own .punica/) owns its files.
                if owners[folder] == root:
                    targets[relative] = None
        for path in documents:
            targets[document_relative(workspace, path)] = None
        return list(targets)
