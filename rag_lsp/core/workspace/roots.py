"""Where a workspace is: its root, and the settings file in force there.

The root is the nearest folder upwards holding ``.punica/``, else the git root,
else the folder itself (:func:`find_root`); its settings file is read from disk,
or as an editor holds it (:func:`settings_source`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from ..reading.safefiles import inside
from ..reading.sources import DiskSource, FileSource, OverlaySource
from .config import CONFIG_PATH, CONFIG_PATHS, ConfigFile, find_config, outside_config
from .settings import SHARED_DEFAULTS, Settings


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
