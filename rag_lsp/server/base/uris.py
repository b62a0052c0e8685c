"""The editor's URIs as file system paths, and workspace roots beside its folders."""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path


def path_of(uri: str) -> Path | None:
    """The file system path of a ``file:`` URI, its folders resolved (a symlink
    in the last part is kept: it is the document the editor opened); None for
    other schemes."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    if not path:
        return None
    path_ = Path(path)
    try:
        return path_.parent.resolve() / path_.name
    except (OSError, RuntimeError):
        return path_


def near(root: Path, folders: tuple[Path, ...]) -> bool:
    """Whether ``root`` is one of ``folders``, inside one, or holds one."""
    return any(root == folder or folder in root.parents or root in folder.parents for folder in folders)
