"""What the targets config names on disk, checked where the schema cannot: the
file a recorded target replays, and the globs of a builtin target's corpora.

Both are read only at a run. A recording that is not there, or a corpus glob
that matches no file, breaks every case of the suites that use the target (or
quietly leaves a folder out of the search): said here, it is found while the
config is written rather than when CI runs the suites.
"""

from __future__ import annotations

import os
import re
from typing import Iterator

from ...workspace.files import globs_matcher, hidden
from ...reading.paths import normalize_relative
from ...reading.yamltree import YNode
from ._suite import did_you_mean, meant_file, string_keys

# Where a glob's literal part ends.
_WILDCARD = re.compile(r"[*?{]")


def recording_problem(workspace, written: str) -> tuple[str, str | None] | None:
    """What is wrong with the file a `recorded:` value names, if anything, and
    the file it probably meant."""
    relative = normalize_relative(written)
    if relative is None:
        return (
            f"the recording {written!r} is outside the workspace, and is never read: keep it inside "
            "the workspace and name it relative to the workspace root (e.g. .punica/runs/answers.jsonl)",
            None,
        )
    path = workspace.absolute(relative)
    if relative and not workspace.contains(path):
        return (
            f"the recording {written!r} is a link to a location outside the workspace, which is never read: "
            "copy it into the workspace",
            None,
        )
    # os.path answers False for a name the file system refuses (too long), where pathlib raises.
    if relative and os.path.isfile(path):
        return None
    if not relative or os.path.exists(path):
        return f"the recording {written!r} is not a file: name the JSON Lines file a run was recorded to", None
    meant = _similar_recording(workspace, relative)
    return (
        f"the recording {written!r} does not exist{did_you_mean([meant] if meant else [])}: record a run there, "
        "or fix the path (relative to the workspace root)",
        meant,
    )


def documents_problem(workspace, written: str) -> str | None:
    """What is wrong with the documents file a builtin corpus names
    (``{documents: FILE}``), if anything."""
    relative = normalize_relative(written)
    if relative is None:
        return (
            f"the documents file {written!r} is outside the workspace, and is never read: keep it inside "
            "the workspace and name it relative to the workspace root (e.g. .punica/corpora/docs.jsonl)"
        )
    path = workspace.absolute(relative)
    if relative and not workspace.contains(path):
        return f"the documents file {written!r} is a link to a location outside the workspace, which is never read: copy it into the workspace"
    if relative and os.path.isfile(path):
        return None
    if not relative or os.path.exists(path):
        return f"the documents file {written!r} is not a file: name a JSON Lines file of {{\"_id\", \"title\", \"text\"}} documents"
    return (
        f"the documents file {written!r} does not exist: the corpus would hold nothing; fix the path (relative "
        "to the workspace root), or write the file (`rag-lsp import` writes one from a BEIR folder)"
    )


def corpus_documents(corpora: YNode | None) -> Iterator[tuple[str, YNode]]:
    """(corpus name, path node) of each corpus written ``{documents: FILE}`` in ``corpora``."""
    for name, _, value in string_keys(corpora):
        if value.is_map:
            node = value.get("documents")
            if node is not None and isinstance(node.scalar(), str) and node.text():
                yield name, node


def _similar_recording(workspace, relative: str) -> str | None:
    """A JSON Lines file that no suite reads which the path probably meant (see meant_file)."""
    datasets = {suite.dataset for suite in workspace.suites()}
    meant = meant_file(relative, [path for path in workspace.files() if path.endswith(".jsonl") and path not in datasets])
    return meant[0] if meant else None


def corpus_globs(corpora: YNode | None) -> Iterator[tuple[str, YNode]]:
    """(corpus name, glob node) of each glob written as a string in ``corpora``."""
    for name, _, globs in string_keys(corpora):
        for node in globs.elements():
            if node.text():
                yield name, node


class CorpusFiles:
    """The workspace files a builtin corpus may hold, listed when first asked."""

    def __init__(self, workspace) -> None:
        self._workspace = workspace
        self._searched: list[str] | None = None
        self._folders: set[str] | None = None

    def searched(self) -> list[str]:
        if self._searched is None:
            self._searched = [path for path in self._workspace.files() if not hidden(path)]
        return self._searched

    def hidden_files(self) -> list[str]:
        """The workspace's hidden files, which no corpus holds."""
        return [path for path in self._workspace.files() if hidden(path)]

    def folders(self) -> set[str]:
        if self._folders is None:
            folders: set[str] = set()
            for path in self.searched():
                folder = path.rpartition("/")[0]
                while folder and folder not in folders:
                    folders.add(folder)
                    folder = folder.rpartition("/")[0]
            self._folders = folders
        return self._folders

    def any_match(self, glob: str, paths: list[str] | None = None) -> bool:
        match = globs_matcher((glob,))
        return any(match(path) for path in (self.searched() if paths is None else paths))


def glob_problem(files: CorpusFiles, corpus: str, glob: str) -> tuple[str, str | None] | None:
    """What is wrong with a builtin corpus glob, if anything, and the glob it
    probably meant (when one matches files)."""
    if normalize_relative(_literal_part(glob) or ".") is None:
        return (
            f"corpus {corpus!r}: the glob {glob!r} leaves the workspace, and the builtin target reads only "
            "workspace files: write it relative to the workspace root (e.g. 'src/**')",
            None,
        )
    if files.any_match(glob):
        return None
    if files.any_match(glob, files.hidden_files()):
        return (
            f"corpus {corpus!r}: the glob {glob!r} matches only hidden files (a name beginning with a dot), "
            "which the builtin target never searches: move the files, or search them with a target of your own",
            None,
        )
    meant = _meant_glob(files, glob)
    return (
        f"corpus {corpus!r}: the glob {glob!r} matches no file the builtin target searches"
        f"{did_you_mean([meant] if meant else [])}: globs are relative to the workspace root, "
        "`**` spans folders (e.g. 'src/**')",
        meant,
    )


def _meant_glob(files: CorpusFiles, glob: str) -> str | None:
    """A glob that matches files, close to one that matches none: a folder named
    without its files (``src``, ``./src/``), or a misspelled folder (``scr/**``)."""
    written = glob.replace("\\", "/")
    while written.startswith("./"):
        written = written[2:]
    candidates = []
    folder = written.strip("/")
    if folder in files.folders():
        candidates.append(f"{folder}/**")
    candidates.append(written)
    misspelled = _literal_part(written).rpartition("/")[0]
    if misspelled and misspelled not in files.folders():
        near = _near_folder(misspelled, files.folders())
        if near is not None:
            candidates.append(near + written[len(misspelled):])
    for candidate in candidates:
        if candidate != glob and files.any_match(candidate):
            return candidate
    return None


def _literal_part(glob: str) -> str:
    """The glob up to its first wildcard: the folders it names as they are."""
    wildcard = _WILDCARD.search(glob)
    return glob[: wildcard.start()] if wildcard else glob


def _near_folder(misspelled: str, folders: set[str]) -> str | None:
    """The folder one or two edits away (a letter left out, added, changed, or two
    swapped): folder names are short, and a ratio of likeness rates "scr" against
    "src" as far apart as two unrelated names."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    edits = 1 if len(misspelled) < 8 else 2
    found = process.extractOne(misspelled, sorted(folders), scorer=OSA.distance, score_cutoff=edits)
    return found[0] if found else None
