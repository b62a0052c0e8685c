"""What a workspace knows from the list of its files alone.

Kept until the list changes (see :meth:`.workspace.Workspace.invalidate`): the
files and those in normal form, those a builtin target may return, the index of
their paths, and the workspaces nested below.
"""

from __future__ import annotations

from itertools import filterfalse
from operator import itemgetter, methodcaller
from pathlib import Path
from typing import Iterable

from ..reading.paths import not_normal_among
from .files import globs_matcher, list_files, named_like_binary
from .pathindex import PathIndex
from .suitefacts import Corpora, DatasetUse


class FileFacts:
    """The facts of a :class:`~.workspace.Workspace` derived from the list of its
    files alone: a part of the workspace, whose root, source and file facts it
    reads."""

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

    def folder_set(self) -> frozenset[str]:
        """Every folder that holds a workspace file in normal form, however deep
        (`src` and `src/api` for `src/api/a.py`): where an expected path that is
        no file begins to leave them, a corpus that lives elsewhere most likely begins."""

        def collect() -> set[str]:
            folders: set[str] = set()
            for folder in {path.rpartition("/")[0] for path in self.normal_file_set()}:
                while folder and folder not in folders:
                    folders.add(folder)
                    folder = folder.rpartition("/")[0]
            return frozenset(folders)

        return self._file_fact("folder_set", collect)

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
