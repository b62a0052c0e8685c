"""The editor's open documents, held in front of the disk.

The language server checks files and runs suites in workspaces of their own (a
run must not wait for a check, nor a check for a run), and each workspace reads
the documents the editor has open instead of the files on disk. Which texts a
workspace holds, and what it forgets when a document opens, changes or closes,
is decided here, once for both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Container

from ..reading.sources import OverlaySource
from .workspace import Workspace


def document_relative(workspace: Workspace, path: Path) -> str:
    """``path`` relative to the workspace root, its folders resolved but not a
    symlink in its last part: an editor's document opened through a link to a file
    is a document of its own (as the scan lists it), not the file it points at."""
    try:
        return path.relative_to(workspace.root).as_posix()
    except ValueError:
        return workspace.relative(path)


def drop_closed(workspace: Workspace, open_paths: Container[Path]) -> list[Path]:
    """Stop holding the documents that are not in ``open_paths`` (absolute paths):
    the disk's text counts again, and what was derived from theirs is forgotten.
    The paths dropped."""
    overlay = _overlay(workspace)
    closed = [path for path in overlay.texts if path not in open_paths]
    for path in closed:
        del overlay.texts[path]
        # A document that was never saved is no workspace file any more.
        unsaved = path.is_relative_to(workspace.root) and not path.exists()
        workspace.invalidate(document_relative(workspace, path), files_changed=unsaved)
    return closed


def hold_text(workspace: Workspace, path: Path, text: str) -> bool:
    """Hold ``text`` as the file at ``path`` (absolute); what was derived from the
    text held before is forgotten. Whether the text changed."""
    overlay = _overlay(workspace)
    held = overlay.texts.get(path)
    if held == text:
        return False
    overlay.texts[path] = text
    relative = document_relative(workspace, path)
    # A document opened that the files listed do not hold (not saved yet, or
    # created since they were listed, with no word from the editor's file
    # watcher) has the files listed again: a suite opened so is a suite at once,
    # its dataset checked with it. Once, when it opens, not at each edit (an
    # ignored file stays unlisted).
    opened_unlisted = held is None and path.is_relative_to(workspace.root) and not workspace.knows_file(relative)
    workspace.invalidate(relative, files_changed=opened_unlisted)
    return True


def _overlay(workspace: Workspace) -> OverlaySource:
    overlay = workspace.source
    if not isinstance(overlay, OverlaySource):
        raise TypeError("the workspace holds no open documents: it was made without an OverlaySource")
    return overlay
