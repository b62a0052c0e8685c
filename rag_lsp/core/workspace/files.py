"""Finding the workspace's files: a walk that skips what is never a workspace file
(VCS folders, virtualenvs, dependencies, caches, git-ignored paths, links leading
out), and the workspace globs that say which files are suites, datasets and
manifests.
"""

from __future__ import annotations

import operator
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

import pathspec


# Folders that never hold workspace files: VCS, virtualenvs, dependencies, caches.
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".jj", "node_modules", ".venv", "venv", ".tox", ".nox",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
        ".eggs", ".cache", ".idea", ".vscode",
    }
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
    editors' file globs. A leading ``./`` names the workspace root, as paths
    are relative to it anyway: ``./evals/**`` is ``evals/**``."""
    while pattern.startswith("./"):
        pattern = pattern[2:]
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


@lru_cache(maxsize=64)
def _globs_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    """Workspace globs as one regex: a path is matched once, not once per glob
    (a large workspace holds thousands of YAML files to look at)."""
    return re.compile("|".join(f"(?:{_glob_regex(pattern).pattern})" for pattern in globs) or "(?!)")


# A glob with more wildcards than this (``*``, ``**``) is not matched by a regex:
# a backtracking regex takes time that grows as the path's length to the power
# of their count (``**a**a**a**a**a**a**b`` against a name of 100 a's took over a
# minute). Such globs are matched by an automaton, in time linear in the path.
_MOST_WILDCARDS_FOR_REGEX = 2
_WILDCARDS = re.compile(r"\*\*/|\*\*|\*")


def _wildcards(pattern: str) -> int:
    return len(_WILDCARDS.findall(pattern))


@lru_cache(maxsize=64)
def _matcher(globs: tuple[str, ...]) -> Callable[[str], Any]:
    """Whether a path matches one of ``globs`` (a truthy value), in time at most
    linear in the path's length whatever the globs."""
    plain = tuple(glob for glob in globs if _wildcards(glob) <= _MOST_WILDCARDS_FOR_REGEX)
    if len(plain) == len(globs):
        return _globs_regex(globs).fullmatch
    regex = _globs_regex(plain).fullmatch if plain else None
    automata = [_GlobAutomaton(glob) for glob in globs if glob not in plain]

    def matches(path: str) -> bool:
        return bool((regex is not None and regex(path)) or any(automaton.matches(path) for automaton in automata))

    return matches


# The instructions of a glob's automaton (see _GlobAutomaton).
_CHAR, _NOT_SLASH, _ANY, _SPLIT, _MATCH = range(5)


class _GlobAutomaton:
    """A glob matched as the regex :func:`_glob_regex` makes of it would match,
    by following every way through the glob at once (a Thompson automaton, its
    sets of states remembered as they are met): each character of a path is
    looked at once."""

    # States remembered at most, per glob: then forgotten and met again.
    _MOST_REMEMBERED = 4096

    def __init__(self, pattern: str) -> None:
        while pattern.startswith("./"):
            pattern = pattern[2:]
        program: list[tuple[int, Any]] = []

        def loop(kind: int) -> None:
            # kind*: split to the step or past it; the step jumps back.
            split = len(program)
            program.append((_SPLIT, (split + 1, split + 3)))
            program.append((kind, None))
            program.append((_SPLIT, (split,)))

        index = 0
        while index < len(pattern):
            char = pattern[index]
            if pattern.startswith("**/", index):
                # (?:.*/)?: past it, or any characters then "/".
                split = len(program)
                program.append((_SPLIT, None))  # patched below
                loop(_ANY)
                program.append((_CHAR, "/"))
                program[split] = (_SPLIT, (split + 1, len(program)))
                index += 3
                continue
            if pattern.startswith("**", index):
                loop(_ANY)
                index += 2
                continue
            if char == "{" and "}" in pattern[index:]:
                close = pattern.index("}", index)
                options = pattern[index + 1 : close].split(",")
                split = len(program)
                program.append((_SPLIT, None))
                starts, ends = [], []
                for option in options:
                    starts.append(len(program))
                    program.extend((_CHAR, letter) for letter in option)
                    ends.append(len(program))
                    program.append((_SPLIT, None))  # jump to the end, patched below
                program[split] = (_SPLIT, tuple(starts))
                for end in ends:
                    program[end] = (_SPLIT, (len(program),))
                index = close + 1
                continue
            if char == "*":
                loop(_NOT_SLASH)
            elif char == "?":
                program.append((_NOT_SLASH, None))
            else:
                program.append((_CHAR, char))
            index += 1
        program.append((_MATCH, None))
        self.program = program
        self.start = self._closure((0,))
        self.steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _closure(self, pcs: Iterable[int]) -> frozenset[int]:
        """The states reached from ``pcs`` without reading a character."""
        program = self.program
        seen: set[int] = set()
        stack = list(pcs)
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            kind, argument = program[pc]
            if kind == _SPLIT:
                stack.extend(argument)
        return frozenset(pc for pc in seen if program[pc][0] != _SPLIT)

    def _step(self, states: frozenset[int], char: str) -> frozenset[int]:
        program = self.program
        following = []
        for pc in states:
            kind, argument = program[pc]
            if kind == _ANY or (kind == _NOT_SLASH and char != "/") or (kind == _CHAR and argument == char):
                following.append(pc + 1)
        return self._closure(following)

    def matches(self, path: str) -> bool:
        steps = self.steps
        if len(steps) > self._MOST_REMEMBERED:
            steps.clear()
        states = self.start
        for char in path:
            key = (states, char)
            found = steps.get(key)
            if found is None:
                found = steps[key] = self._step(states, char)
            states = found
            if not states:
                return False
        match = len(self.program) - 1
        return match in states


_HIDDEN = re.compile(r"(?:^|/)\.")


def hidden(relative: str) -> bool:
    """Whether a workspace path has a hidden part (a file or folder whose name
    begins with a dot, ``.punica/`` among them): never in a builtin corpus."""
    return _HIDDEN.search(relative) is not None


def glob_match(relative: str, globs: Iterable[str]) -> bool:
    """Whether a workspace-relative path matches one of the workspace globs."""
    return bool(_matcher(tuple(globs))(relative))


def globs_matcher(globs: Iterable[str]) -> Callable[[str], Any]:
    """:func:`glob_match` for many paths: whether each matches (a truthy value)."""
    return _matcher(tuple(globs))


# The endings of file formats that hold no text: images, archives, compiled
# code, office documents, media, databases, model weights. The builtin target
# searches text files only, so an expected path that ends so is read to tell
# whether it could ever come back (RAG203); nothing else is read for that.
_BINARY_ENDINGS = frozenset(
    """
    png jpg jpeg gif webp bmp ico tif tiff psd heic avif
    pdf doc docx xls xlsx ppt pptx odt ods odp epub
    zip gz tgz bz2 xz zst 7z rar tar jar war whl egg
    exe dll so dylib a o obj lib class pyc pyo wasm bin
    db sqlite sqlite3 parquet arrow feather avro orc npy npz pkl pickle
    pt pth ckpt onnx safetensors h5 hdf5 gguf
    mp3 mp4 m4a wav ogg flac mov avi mkv webm
    woff woff2 ttf otf eot
    """.split()
)


def named_like_binary(relative: str) -> bool:
    """Whether a path ends like a format that holds no text (``.pdf``, ``.png``)."""
    return relative.rpartition(".")[2].lower() in _BINARY_ENDINGS


# Bytes read of a file to decide whether it is binary.
SNIFF_BYTES = 8192


def text_of(data: bytes) -> str:
    """A file's text, or "" when it is binary (a NUL byte) or not UTF-8."""
    if b"\x00" in data[:SNIFF_BYTES]:
        return ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return text[1:] if text.startswith("\ufeff") else text


# Why the builtin target never returns a workspace file (see
# expectedpaths.never_searched): these five are its reasons.
HIDDEN = "hidden"
IN_NO_CORPUS = "in no corpus"
TOO_LARGE = "too large"
BINARY = "binary"
NOT_UTF8 = "not UTF-8"


def why_no_text(path: Path, max_bytes: int) -> str | None:
    """Why the builtin target finds no text to search in the file at ``path``,
    as it reads files (see search.index.builder.FileReader): TOO_LARGE (past
    ``max_bytes``), BINARY or NOT_UTF8; None when it holds text or cannot be read."""
    try:
        with open(path, "rb") as file:
            if os.fstat(file.fileno()).st_size > max_bytes:
                return TOO_LARGE
            data = file.read(max_bytes + 1)
    except OSError:
        return None
    if b"\x00" in data[:SNIFF_BYTES]:
        return BINARY
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return NOT_UTF8
    return None


_NAME = operator.attrgetter("name")


def list_files(root: Path, inside: Callable[[Path], bool]) -> list[str]:
    """Every file of the workspace at ``root`` (relative, "/"-separated), folder by
    folder in name order, as a walk from the top lists them; ``inside`` says
    whether a path a link leads to is in the workspace."""
    found: list[str] = []
    # Folders still to list, the next on top: a stack, not recursion, so a tree
    # nested a thousand folders deep is listed as any other.
    pending: list[tuple[str, str, list[tuple[str, pathspec.PathSpec]]]] = [(str(root), "", [])]
    while pending:
        folder, prefix, ignores = pending.pop()
        pending.extend(reversed(_list_folder(folder, prefix, ignores, found, inside)))
    return found


def _utf8(name: str) -> bool:
    """Whether a file name read from the system is text (the bytes of one that is
    not UTF-8 are kept as lone surrogates, which no UTF-8 text can hold)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _regular_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _list_folder(
    folder: str, prefix: str, ignores: list[tuple[str, pathspec.PathSpec]], found: list[str], inside: Callable[[Path], bool]
) -> list[tuple[str, str, list[tuple[str, pathspec.PathSpec]]]]:
    """Add the files of ``folder`` (``prefix`` from the root); its folders to
    list next, in order, with the ignore files in force there. A folder entry tells whether it is a link without another system
    call: a tree of 50,000 files is listed in a fraction of a second."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=_NAME)
    except OSError:
        return []
    # As git does, a .gitignore that is a link is not followed: it may
    # point anywhere, and nothing outside the workspace is read.
    for entry in entries:
        if entry.name == ".gitignore" and not entry.is_symlink() and _regular_file(entry):
            ignores = [*ignores, (prefix, _gitignore(Path(entry.path)))]
            break
    folders = []
    for entry in entries:
        name = entry.name
        if not name.isascii() and not _utf8(name):
            # A name whose bytes are not UTF-8 (Linux allows any): no suite or
            # dataset, written in UTF-8, can name it, nor any output show it.
            continue
        relative = prefix + name
        try:
            # Nearly every entry: a regular file, told by its type alone (no
            # system call); anything else is looked at below.
            plain_file = entry.is_file(follow_symlinks=False)
        except OSError:
            plain_file = False
        if plain_file:
            if not (ignores and _ignored(ignores, relative)):
                found.append(relative)
            continue
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
        # A named pipe, socket or device is no file to read (reading a pipe
        # would wait for a writer forever); the entry's type says so without a
        # system call, except for a link (followed).
        if not _regular_file(entry):
            continue
        # A symlink to a file outside the workspace is not a workspace file.
        if entry.is_symlink() and not inside(Path(entry.path)):
            continue
        found.append(relative)
    return [(entry.path, prefix + entry.name + "/", ignores) for entry in folders]
