"""Which suites a run is of: what a folder, a suite file or a dataset names.

``rag-lsp run PATH`` and the editor's run commands and code lenses ask the same
questions: the suites under a folder, the suites of a suite file, the suites that
read a dataset, and the one of a suite file at a line. A suite without an id is
named by its place among its file's suites (:func:`suite_key`), so results of
two such suites do not replace each other.

Pure: reads only the workspace's facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..workspace.suitefacts import SuiteInfo
from ..workspace.workspace import DATASET_FILE, SUITE_FILE, Workspace


@dataclass(frozen=True, slots=True)
class IndexedSuite:
    """A suite with its place among the suites of its file (0 for the first)."""

    suite: SuiteInfo
    index: int

    @property
    def key(self) -> str:
        return suite_key(self.suite, self.index)


def suite_key(suite: SuiteInfo, index: int) -> str:
    """A suite's name for results: its file and id (its place in the file when it has no id)."""
    return f"{suite.file}#{suite.id if suite.id is not None else f'@{index}'}"


def indexed_suites(workspace: Workspace) -> list[IndexedSuite]:
    """Every suite of the workspace with its place in its file, in workspace order."""
    counts: dict[str, int] = {}
    indexed = []
    for suite in workspace.suites():
        index = counts.get(suite.file, 0)
        counts[suite.file] = index + 1
        indexed.append(IndexedSuite(suite, index))
    return indexed


def readers_of(suites: Iterable[SuiteInfo], dataset: str) -> list[SuiteInfo]:
    """The suites (of ``suites``, in their order) that read ``dataset``."""
    return [suite for suite in suites if suite.dataset == dataset]


def indexed_readers_of(indexed: Iterable[IndexedSuite], dataset: str) -> list[IndexedSuite]:
    """The suites that read ``dataset``, with their places."""
    return [item for item in indexed if item.suite.dataset == dataset]


def shares_dataset(indexed: Sequence[IndexedSuite], suite: SuiteInfo) -> bool:
    """Whether other suites read ``suite``'s dataset too (their results share its lines)."""
    return sum(1 for item in indexed if item.suite.dataset == suite.dataset) > 1


def suites_under(workspace: Workspace, folder: str) -> list[SuiteInfo]:
    """The suites of the suite files under ``folder`` (relative; "" or "." for the root)."""
    prefix = "" if folder in ("", ".") else folder + "/"
    return [suite for suite in workspace.suites() if suite.file.startswith(prefix)]


def suite_files_without_suites(workspace: Workspace, folder: str) -> list[str]:
    """The suite files under ``folder`` (as :func:`suites_under` reads it) that hold
    no suite that can be read: YAML that is not well-formed, refused, or without a
    list of suites. A run reports them instead of leaving them out unseen."""
    prefix = "" if folder in ("", ".") else folder + "/"
    return [relative for relative in workspace.suite_files() if relative.startswith(prefix) and not workspace.suites_of(relative)]


def suites_named_by_file(workspace: Workspace, relative: str) -> list[SuiteInfo] | None:
    """The suites a file names: a suite file's own, a dataset's readers; None
    when the file is neither."""
    kind = workspace.kind_of(relative)
    if kind == SUITE_FILE:
        return workspace.suites_of(relative)
    if kind == DATASET_FILE:
        return readers_of(workspace.suites(), relative)
    return None


@dataclass(frozen=True, slots=True)
class Choice:
    """The suites an editor's run is of, or why it is of none."""

    suites: list[IndexedSuite]
    # Why nothing is run, for people; None when suites were chosen.
    note: str | None = None


def choose_for_case(workspace: Workspace, relative: str, suite_id: str | None) -> Choice:
    """Run case on a line of ``relative``: the suites that read it as their
    dataset (only ``suite_id`` when given)."""
    if workspace.kind_of(relative) != DATASET_FILE:
        return Choice([], f"{relative} is not a dataset: Run case runs a dataset line")
    chosen = [item for item in indexed_readers_of(indexed_suites(workspace), relative) if suite_id is None or item.suite.id == suite_id]
    if not chosen:
        named = f"suite {suite_id!r}" if suite_id else "any suite"
        return Choice([], f"{relative} is not the dataset of {named}: name it as a suite's `dataset` to run its cases")
    return Choice(chosen)


def choose_for_suite(workspace: Workspace, relative: str, line: int | None, suite_id: str | None) -> Choice:
    """Run suite in ``relative``: in a suite file, the suite named ``suite_id``,
    else the one at ``line`` (0-based), else every suite of the file; in a
    dataset, the suites that read it (only ``suite_id`` when given)."""
    kind = workspace.kind_of(relative)
    indexed = indexed_suites(workspace)
    if kind == SUITE_FILE:
        own = [item for item in indexed if item.suite.file == relative]
        if suite_id is not None:
            chosen = [item for item in own if item.suite.id == suite_id]
        elif line is not None:
            parsed = workspace.parsed_yaml(relative)
            above = [item for item in own if parsed is not None and parsed.lines.position(item.suite.node.start).line <= line]
            chosen = above[-1:] or own[:1]
        else:
            chosen = own
        if not chosen:
            return Choice([], f"{relative} has no suite {suite_id!r}" if suite_id else f"{relative} has no suite to run")
        return Choice(chosen)
    if kind == DATASET_FILE:
        readers = indexed_readers_of(indexed, relative)
        chosen = [item for item in readers if suite_id is None or item.suite.id == suite_id]
        if not chosen and readers:
            names = ", ".join(repr(item.suite.id) for item in readers)
            return Choice([], f"no suite {suite_id!r} reads {relative}; the suites reading it: {names}")
        if not chosen:
            return Choice([], f"no suite reads {relative}")
        return Choice(chosen)
    return Choice([], f"{relative} is neither a suite file nor a dataset")
