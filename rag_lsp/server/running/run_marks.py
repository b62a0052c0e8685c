"""Run results kept per file, moved by edits, shown as diagnostics.

A run leaves :class:`~rag_lsp.core.running.marks.Mark` s in files (a case's figures on
its dataset line, a suite's verdict on its thresholds). :class:`RunMarks` keeps
them per file in a :class:`~rag_lsp.core.running.line_marks.LineMarks`:

* every edit of an open file moves them with their lines and drops those on
  edited lines; edits made while a run was out are replayed on its marks before
  they are put in place (:meth:`RunMarks.install`);
* a file opened or closed with another text keeps only the marks whose line
  reads as it did;
* they are published after the file's findings (at most
  :data:`RESULT_DIAGNOSTICS` per file, errors first), converted as the findings
  are (:mod:`..base.convert`), each conversion kept while the mark stays as it was.

Loop thread only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument

from ...core.reading.findings import Severity
from ...core.running.case_hover import hover_markdown
from ...core.running.line_marks import LineMarks
from ...core.running.marks import CASE, Mark
from ...core.running.results import describe_case
from ...core.workspace.settings import Settings
from ..base.convert import diagnostic_json, json_text, line_diagnostic, on_line, split_at_line_numbers
from ..base.diagnostics import FileDiagnostics
from ..base.uris import path_of

# Run results shown as diagnostics per file, at most (errors first); every case's
# lens and hover show its result whatever the count.
RESULT_DIAGNOSTICS = 1000


@dataclass(frozen=True, slots=True)
class LineEdit:
    """An edit of an open file: the text between two positions replaced by ``text``."""

    start_line: int
    start_character: int
    end_line: int
    end_character: int
    text: str


@dataclass(frozen=True, slots=True)
class WholeText:
    """An edit of an open file that replaced its whole text."""


Edit = LineEdit | WholeText


def edit_of(change: types.TextDocumentContentChangeEvent) -> Edit:
    if isinstance(change, types.TextDocumentContentChangePartial):
        start, end = change.range.start, change.range.end
        return LineEdit(start.line, start.character, end.line, end.character, change.text)
    return WholeText()


@dataclass(slots=True)
class MarkDiagnostic:
    """A mark converted for the client, kept while it stays on its line in the
    same encoding with the same severity."""

    line: int
    encoding: str
    severity: Severity | None
    diagnostic: types.Diagnostic
    json: str
    # ``json`` split where its line number is, once the mark has moved.
    json_parts: list[str] | None = None

    def moved_to(self, line: int) -> MarkDiagnostic:
        """The same diagnostic on another line (the mark moved with its text)."""
        parts = self.json_parts
        if parts is None:
            parts = self.json_parts = split_at_line_numbers(self.json)
        return MarkDiagnostic(line, self.encoding, self.severity, on_line(self.diagnostic, line), str(line).join(parts), parts)


def mark_diagnostic(mark: Mark, line: int, encoding: str, severity: Severity | None) -> MarkDiagnostic:
    """A mark's diagnostic on ``line``, and its JSON, as the findings' are converted."""
    diagnostic = line_diagnostic(line, mark.text, mark.start, mark.end, mark.message, severity, mark.code, encoding)
    return MarkDiagnostic(line, encoding, severity, diagnostic, json_text(diagnostic_json(diagnostic)))


def apply_edit(marks: LineMarks, edit: Edit) -> set[str]:
    """Move ``marks`` by one edit of their file; the runs (suite keys) the edit
    made stale by editing their suite (see LineMarks.edit)."""
    if type(edit) is LineEdit:
        return marks.edit(edit.start_line, edit.start_character, edit.end_line, edit.end_character, edit.text)
    return marks.replace_all()


@dataclass(frozen=True, slots=True)
class Placed:
    """What one suite's run leaves in one file, and which marks there it replaces."""

    path: Path
    marks: list[tuple[int, Mark]]
    key: str
    # True: every mark of the suite; else only its case marks on the new marks' lines.
    whole: bool


def lines_of(text: str) -> Callable[[int], str]:
    rows = text.split("\n")

    def line_text(line: int) -> str:
        if not 0 <= line < len(rows):
            return ""
        row = rows[line]
        return row[:-1] if row.endswith("\r") else row

    return line_text


class RunMarks:
    """The results runs left, by file (loop thread).

    ``documents(key)`` is the editor's open document of a URI as pygls keys it
    (None when it is not open); ``encoding()`` the negotiated position encoding;
    ``in_force`` the settings in force at each workspace root that ran, for the
    results' severities.
    """

    def __init__(
        self,
        documents: Callable[[str], TextDocument | None],
        encoding: Callable[[], str],
        in_force: dict[Path, Settings],
    ) -> None:
        self.marks: dict[Path, LineMarks] = {}
        self._documents = documents
        self._encoding = encoding
        self._in_force = in_force
        # Open documents: URI as pygls keys it -> path, and back.
        self._paths: dict[str, Path] = {}
        self._keys: dict[Path, str] = {}
        # Diagnostics made from marks, by file and mark.
        self._converted: dict[Path, dict[Mark, MarkDiagnostic]] = {}

    # -------------------------------------------------- open documents

    def open_path(self, key: str) -> Path | None:
        """The path of an open document, by its URI as pygls keys it."""
        return self._paths.get(key)

    def open_paths(self) -> list[Path]:
        return list(self._paths.values())

    def _document(self, path: Path) -> TextDocument | None:
        key = self._keys.get(path)
        return self._documents(key) if key is not None else None

    @staticmethod
    def _line_text(document: TextDocument) -> Callable[[int], str]:
        if hasattr(document, "line_text"):
            return document.line_text
        lines = document.lines
        return lambda line: lines[line].rstrip("\r\n") if 0 <= line < len(lines) else ""

    def opened(self, uri: str) -> None:
        path = path_of(uri)
        if path is None:
            return
        key = unquote(uri)
        self._paths[key] = path
        self._keys[path] = key
        marks = self.marks.get(path)
        document = self._document(path)
        if marks and document is not None:
            marks.verify(self._line_text(document))  # the editor's text may not be the one the run read

    def closed(self, uri: str) -> None:
        path = self._paths.pop(unquote(uri), None)
        if path is None:
            return
        self._keys.pop(path, None)
        marks = self.marks.get(path)
        if marks:
            # The disk's text counts again: keep only results that read the same there.
            try:
                text = path.read_text(encoding="utf-8-sig", errors="replace")
            except OSError:
                text = ""
            marks.verify(lines_of(text))

    def edited(self, path: Path, changes: list[types.TextDocumentContentChangeEvent], journals: list[list[Edit]]) -> set[Path]:
        """An open document changed: move its results with their lines (cheap when
        it has none), and note the edits in ``journals`` (those of the runs out).
        The files whose results went with an edited suite's (none, most often)."""
        marks = self.marks.get(path)
        if not marks and not journals:
            return set()
        stale: set[str] = set()
        for change in changes:
            edit = edit_of(change)
            if marks:
                stale |= apply_edit(marks, edit)
            for journal in journals:
                journal.append(edit)
        document = self._document(path)
        if marks and document is not None:
            marks.settle(self._line_text(document))
        return self._drop_runs(stale, path) if stale else set()

    def _drop_runs(self, keys: set[str], edited: Path) -> set[Path]:
        """Drop every mark of the runs ``keys`` (their suites were edited) from the
        files other than ``edited``, which dropped its own; the files that lost
        some, ``edited`` among them."""
        touched = {edited}
        for path, held in list(self.marks.items()):
            if path != edited and held.remove(lambda _, mark: mark.suite in keys):
                touched.add(path)
                if not len(held):
                    del self.marks[path]
        return touched

    def files_changed(self, paths: list[Path]) -> None:
        """Files changed on disk: results in files that are not open no longer match them."""
        for path in paths:
            if path not in self._keys and self.marks.pop(path, None) is not None:
                self._converted.pop(path, None)

    # -------------------------------------------------- publishing (the session's `extra`)

    def decorate(self, path: Path, file: FileDiagnostics) -> FileDiagnostics:
        """A file's findings with its run results after them."""
        marks = self.marks.get(path)
        if not marks:
            self._converted.pop(path, None)
            return file
        document = self._document(path)
        line_text = self._line_text(document) if document is not None else None
        encoding = self._encoding()
        # The settings in force where the results were made (the deepest root holding the file).
        holders = [root for root in self._in_force if root in path.parents]
        root = max(holders, key=lambda root: len(root.parts)) if holders else None
        settings = self._in_force[root] if root is not None else Settings()
        relative = path.relative_to(root).as_posix() if root is not None else path.name
        before = self._converted.get(path, {})
        now: dict[Mark, MarkDiagnostic] = {}
        diagnostics: list[types.Diagnostic] = []
        as_json: list[str] = []
        stale: set[Mark] = set()
        for line, mark in marks.shown(RESULT_DIAGNOSTICS):
            if line_text is not None and line_text(line) != mark.text:
                stale.add(mark)  # a safety net: edits should have dropped it already
                continue
            # The `severity` setting applies to results as to findings ("off" hides them).
            if mark.code is not None:
                severity = settings.severity_of(relative, mark.code, mark.severity)
                if severity is None:
                    continue
            else:
                severity = None
            entry = before.get(mark)
            if entry is None or entry.encoding != encoding or entry.severity != severity:
                entry = mark_diagnostic(mark, line, encoding, severity)
            elif entry.line != line:
                entry = entry.moved_to(line)
            now[mark] = entry
            diagnostics.append(entry.diagnostic)
            as_json.append(entry.json)
        self._converted[path] = now
        if stale:
            marks.remove(lambda _, mark: mark in stale)
        if not diagnostics:
            return file
        combined = file.json + as_json if file.complete_json is not None else []
        return FileDiagnostics(file.uri, file.version, file.diagnostics + diagnostics, file.root, combined)

    # -------------------------------------------------- reading

    def marks_at(self, path: Path, line: int) -> list[Mark]:
        marks = self.marks.get(path)
        return marks.at(line) if marks else []

    def hover(self, path: Path, line: int) -> str | None:
        """The results of the case on ``line``: with several suites, one line per
        suite first, then each suite's hits."""
        marks = [mark for mark in self.marks_at(path, line) if mark.run is not None]
        if not marks:
            return None
        details = "\n\n---\n\n".join(hover_markdown(mark.run) for mark in marks)
        if len(marks) == 1:
            return details
        lines = "\n".join(f"- `{mark.run.suite}`: {describe_case(mark.run.case)}" for mark in marks)
        return f"**Run results** · {len(marks)} suites\n\n{lines}\n\n---\n\n{details}"

    def clear(self, uri: str | None) -> set[Path]:
        """Clear the results shown in ``uri`` and those of the same suites
        elsewhere (every result when None); the files touched."""
        if uri is None:
            paths = set(self.marks)
            self.marks.clear()
        else:
            path = path_of(uri)
            marks = self.marks.get(path) if path is not None else None
            suites = {mark.suite for _, mark in marks} if marks else set()
            paths = set()
            for other, held in list(self.marks.items()):
                if other == path or held.remove(lambda _, mark: mark.suite in suites):
                    paths.add(other)
            if path is not None:
                self.marks.pop(path, None)
        for path in [path for path, held in self.marks.items() if not len(held)]:
            del self.marks[path]
        return paths

    def install(self, placements: list[Placed], journal: dict[Path, list[Edit]]) -> set[Path]:
        """Put a run's marks in place: replayed through the edits made meanwhile
        (``journal``, by file), replacing what they supersede; the files touched."""
        touched: set[Path] = set()
        replayed = []
        # Runs whose suite was edited while they ran: none of their marks is shown.
        stale: set[str] = set()
        for placed in placements:
            fresh = LineMarks()
            fresh.add(placed.marks)
            for edit in journal.get(placed.path, ()):
                stale |= apply_edit(fresh, edit)
            replayed.append((placed, fresh))
        for placed, fresh in replayed:
            if stale:
                fresh.remove(lambda _, mark: mark.suite in stale)
            document = self._document(placed.path)
            if document is not None:
                fresh.verify(self._line_text(document))
            new = list(fresh)
            lines = {line for line, _ in new}
            key = placed.key
            if placed.whole:

                def replaces(line: int, mark: Mark, key: str = key) -> bool:
                    return mark.suite == key

            else:

                def replaces(line: int, mark: Mark, key: str = key, lines: set[int] = lines) -> bool:
                    return mark.suite == key and mark.scope == CASE and line in lines

            held = self.marks.setdefault(placed.path, LineMarks())
            held.add(new, replaces)
            if not len(held):
                del self.marks[placed.path]
            touched.add(placed.path)
        return touched
