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

from .sources import OverlaySource
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
        workspace.invalidate(document_relative(workspace, path), files_changed=False)
    return closed


def hold_text(workspace: Workspace, path: Path, text: str) -> bool:
    """Hold ``text`` as the file at ``path`` (absolute); what was derived from the
    text held before is forgotten. Whether the text changed."""
    overlay = _overlay(workspace)
    if overlay.texts.get(path) == text:
        return False
    overlay.texts[path] = text
    workspace.invalidate(document_relative(workspace, path), files_changed=False)
    return True


def _overlay(workspace: Workspace) -> OverlaySource:
    overlay = workspace.source
    if not isinstance(overlay, OverlaySource):
        raise TypeError("the workspace holds no open documents: it was made without an OverlaySource")
    return overlay
