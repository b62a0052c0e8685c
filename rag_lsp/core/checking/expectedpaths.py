"""What a dataset's expected paths are, measured against the workspace: how
many a case lists and how many are not workspace files (RAG203's tally), the
first missing one, and why a path no target returns is never searched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Any, Callable, Collection, Container

from ..workspace.expected import NEVER_SEARCHED, NOT_IN_WORKSPACE
from ..workspace.files import BINARY, HIDDEN, IN_NO_CORPUS, NOT_UTF8, TOO_LARGE, globs_matcher, hidden, why_no_text
from ..workspace.manifests import RAG_CASE
from ..reading.paths import is_normal, normalize_relative, not_normal_among
from ..workspace.suitefacts import Corpora
from ..workspace.workspace import Workspace


@dataclass(frozen=True, slots=True)
class PathTally:
    """How many expected paths a dataset lists, and how many of them are not
    workspace files (counted where RAG203 applies, see RowsContext.paths)."""

    listed: int = 0
    absent: int = 0
    # Whether missing paths may be reported once for the file: not where every
    # occurrence of every finding is asked for (see Workspace.folds_findings).
    said_once: bool = True

    @property
    def elsewhere(self) -> bool:
        """Whether most expected paths are not workspace files, and enough of them
        that one finding for the file says more than one per value: the corpus
        the cases expect most likely lives elsewhere (a service's index)."""
        return self.said_once and self.absent >= PATHS_ELSEWHERE_FROM and self.absent * 2 > self.listed


# The fewest missing paths reported once for a file rather than one by one: a
# small dataset's few missing paths are each worth their own did-you-mean.
PATHS_ELSEWHERE_FROM = 20


def tallied_as_case(row: Any) -> bool:
    """Whether a dataset model counts the expected paths of ``row`` (a dataset
    row holding its value): an object of no other shape than a rag case's,
    whatever the file's shape (see case_path_tallies)."""
    return type(row.value) is dict and row.shape in (None, RAG_CASE)


def case_path_tallies(workspace: Workspace, cases: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """:func:`path_tally` of each rag case's expected list ((0, 0) when it has
    none), as :attr:`RowsContext.paths` counts it, counted together. A dataset
    that describes a corpus elsewhere lists hundreds of thousands of paths that
    are not workspace files: their values not in normal form are found by one
    search over them all (see not_normal_among), and each case's are then
    counted by a few calls in C instead of a test of each value."""
    files = workspace.normal_file_set()
    tallies: list[tuple[int, int]] = []
    # The cases listing something other than workspace files: their place in
    # ``tallies`` and their string values.
    off: list[tuple[int, list[str]]] = []
    for case in cases:
        expect = case.get("expect")
        relevant = expect.get("relevant") if type(expect) is dict else None
        if type(relevant) is not list or not relevant:
            tallies.append((0, 0))
        elif all_among(files, relevant):
            tallies.append((len(relevant), 0))
        else:
            off.append((len(tallies), [value for value in relevant if type(value) is str]))
            tallies.append((0, 0))
    if off:
        found_otherwise = files_written_otherwise(workspace, not_normal_among([value for _, strings in off for value in strings]))
        for place, strings in off:
            tallies[place] = tally_of(strings, files, found_otherwise)
    return tallies


def files_written_otherwise(workspace: Workspace, not_normal: Collection[str]) -> frozenset[str]:
    """Those of ``not_normal`` (values not in normal form) whose normal form is a
    workspace file (``./a.md``): each looked at once, not once per case listing it."""
    if not not_normal:
        return frozenset()
    known = workspace.file_set()
    # Each value is judged once for the workspace's files, not once per batch
    # listing it: a dataset written by another tool writes every path so.
    held = workspace.memo("written otherwise")
    if held.get("files") is not known:
        held.clear()
        held["files"], held["verdicts"] = known, {}
    verdicts: dict[str, bool] = held["verdicts"]
    found = []
    for value in not_normal:
        verdict = verdicts.get(value)
        if verdict is None:
            verdict = verdicts[value] = normalize_relative(value) in known
        if verdict:
            found.append(value)
    return frozenset(found)


def tally_of(strings: list[str], files: frozenset[str], found_otherwise: frozenset[str]) -> tuple[int, int]:
    """(values, those not workspace files) of a case's string values. ``files``:
    the normal file set; ``found_otherwise``: values not in normal form whose
    normal form is a workspace file (see files_written_otherwise)."""
    found = sum(map(files.__contains__, strings))
    if found_otherwise:
        found += sum(map(found_otherwise.__contains__, strings))
    return len(strings), len(strings) - found


def path_tally(
    workspace: Workspace, files: frozenset[str], relevant: list[Any], not_normal: Container[str] | None = None
) -> tuple[int, int]:
    """(expected values that are strings, those that are not workspace files) of
    one case's non-empty expected list; ``files`` is the normal file set, and
    ``not_normal``, when known, holds those of its values not in normal form."""
    if all_among(files, relevant):
        return len(relevant), 0
    listed = absent = 0
    known = workspace.file_set()
    for value in relevant:
        if type(value) is str:
            listed += 1
            if _missing(value, files, known, not_normal):
                absent += 1
    return listed, absent


def first_missing_index(workspace: Workspace, relevant: list[Any]) -> int:
    """The index of the first expected value that is a string and not a workspace file."""
    files = workspace.normal_file_set()
    known = workspace.file_set()
    for index, value in enumerate(relevant):
        if type(value) is str and _missing(value, files, known):
            return index
    return 0


def unreachable_paths(
    workspace: Workspace, corpora: Corpora | None = None, held: Collection[str] | None = None
) -> Callable[[str], tuple[str, str] | None]:
    """RAG203's test of one expected path, for a run to say why a value was
    missed: a Miss reason and message when it is not a workspace file, as written
    nor in normal form, or, for a builtin target with ``corpora``, a file it never
    searches (see never_searched); else None. The workspace's files are listed
    once, here. Of a builtin target, a missed file that is named like text is read
    (once) too: it may hold none the target searches (NUL bytes, not UTF-8, past
    `max-file-bytes`), which the checks, reading no file, leave unsaid; unless it
    is among ``held``, the files the target's index holds text of (a run of
    100,000 cases misses tens of thousands of them)."""
    files = workspace.normal_file_set()
    known = workspace.file_set()
    never = workspace.unsearched_files(corpora) if corpora is not None else frozenset()
    without_text: dict[str, str | None] = {}

    def never_returned(value: str) -> tuple[str, str] | None:
        if corpora is None:
            return None
        if value in never:
            why = never_searched(workspace, value, corpora)
            said = f"{NEVER_SEARCHED_AS_SAID[why]}, RAG203" if why else None
        else:
            if held is not None and value in held:
                return None
            if value not in without_text:
                without_text[value] = why_no_text(workspace.absolute(value), workspace.settings.max_file_bytes)
            why = without_text[value]
            said = NEVER_SEARCHED_AS_SAID[why] if why else None
        return (NEVER_SEARCHED, f"never searched by the builtin target: {said}") if said else None

    def unreachable(value: str) -> tuple[str, str] | None:
        if value in files:
            return never_returned(value)
        return (NOT_IN_WORKSPACE, "not a file in the workspace, RAG203") if _missing(value, files, known) else None

    return unreachable


# What never_searched finds, as a run's report and a hover say it.
NEVER_SEARCHED_AS_SAID = {
    HIDDEN: "a hidden file",
    IN_NO_CORPUS: "in none of its corpora",
    TOO_LARGE: "larger than max-file-bytes",
    BINARY: "a binary file",
    NOT_UTF8: "not UTF-8 text",
}


def never_searched(workspace: Workspace, value: str, corpora: Corpora) -> str | None:
    """Why a builtin target with ``corpora`` never returns the workspace file
    ``value`` (in normal form): HIDDEN, IN_NO_CORPUS, or as files.why_no_text
    says (TOO_LARGE, BINARY, NOT_UTF8); None when it may. Only a file named like
    a binary one is read."""
    if value not in workspace.unsearched_files(corpora):
        return None
    if hidden(value):
        return HIDDEN
    if not globs_matcher(glob for _, globs in corpora for glob in globs)(value):
        return IN_NO_CORPUS
    return why_no_text(workspace.absolute(value), workspace.settings.max_file_bytes)


def _missing(value: str, files: frozenset[str], known: frozenset[str], not_normal: Container[str] | None = None) -> bool:
    """Whether an expected path is not a workspace file: not one as written (in
    ``files``, the normal file set), nor in normal form (among ``known``, every
    file); a value in normal form that is not a file's path names none in another
    form. ``not_normal``, when known, holds the values not in normal form."""
    if value in files:
        return False
    unnormal = value in not_normal if not_normal is not None else not is_normal(value)
    return not unnormal or normalize_relative(value) not in known


def all_among(found: AbstractSet[Any], values: list[Any]) -> bool:
    """Whether every value is in ``found`` (one call in C; False for a value
    that cannot be in a set, a list say)."""
    try:
        return found.issuperset(values)
    except TypeError:
        return False
