"""Findings converted into diagnostics for the client, kept from pass to pass.

A finding's conversion (its JSON, and its diagnostic object, built only when
something reads it) is kept while the finding and the text of its lines stay as
they were (:class:`Conversions`): an edit leaves most findings of a dataset as
they were, and one whose line moved is the earlier conversion with its line
numbers shifted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, NamedTuple, Sequence

import attrs
import orjson
from lsprotocol import types
from pygls.protocol import default_converter

from ...core.checking.shown import ShownFindings
from ...core.reading.findings import Finding
from ..base.convert import Positions, finding_json, json_text as _json_text, split_at_line_numbers, wire_json


def _on_one_line(finding: Finding) -> bool:
    """Whether all of a finding's places (range, fix edits) are on its own line,
    with no related places."""
    line = finding.range.start.line
    if not finding.fixes:
        return finding.range.end.line == line and not finding.related
    return (
        finding.range.end.line == line
        and not finding.related
        and all(edit.range.start.line == line == edit.range.end.line for fix in finding.fixes for edit in fix.edits)
    )


class _Converted:
    """A finding converted for the client, kept from pass to pass: its JSON, and
    its diagnostic object, built only when something reads it (a code action):
    clients are sent the JSON alone. A finding of a dataset line is
    kept as it was placed on its line, which may have moved since: its
    conversion is on the line it is on now, ``moved_by`` lines below its own."""

    __slots__ = ("finding", "moved_by", "line_texts", "json", "wire", "_diagnostic", "_moved_from", "_json_parts", "_one_line_parts")

    def __init__(
        self,
        finding: Finding,
        line_texts: str | list[str],
        json: str,
        json_parts: list[str] | None = None,
        moved_from: types.Diagnostic | None = None,
        moved_by: int = 0,
    ) -> None:
        self.finding = finding
        self.moved_by = moved_by
        # The texts of the finding's lines when it was converted (see _line_texts):
        # its columns in the client's encoding depend on them.
        self.line_texts = line_texts
        # The whole diagnostic, its fixes included: what the server reads back.
        self.json = json
        # What the client is sent (see wire_json).
        self.wire = wire_json(json)
        self._diagnostic: types.Diagnostic | None = None
        # The diagnostic this one is, moved to the finding's line (see moved_to).
        self._moved_from = moved_from
        # ``json`` split where its line number is (see moved_to), once it is moved.
        self._json_parts = json_parts
        # ``json`` and ``wire`` split there, for a finding all of whose places are
        # on its own line (see shifted); False for another finding.
        self._one_line_parts: tuple[list[str], list[str]] | bool | None = None

    @property
    def line(self) -> int:
        """The line the finding starts on now."""
        return self.finding.range.start.line + self.moved_by

    @property
    def diagnostic(self) -> types.Diagnostic:
        diagnostic = self._diagnostic
        if diagnostic is None:
            if self._moved_from is not None and _on_one_line(self.finding):
                diagnostic = _on_line(self._moved_from, self.line)
            else:  # places on several lines: read back from the JSON, which has them all
                diagnostic = _STRUCTURE.structure(orjson.loads(self.json), types.Diagnostic)
            self._diagnostic = diagnostic
            self._moved_from = None
        return diagnostic

    def moved_to(self, finding: Finding, related_information: bool) -> _Converted | None:
        """This conversion for ``finding``, the same finding with its places moved
        with their lines (their texts as they were): only the line numbers change,
        in the JSON now and in the diagnostic when it is read. This costs a
        microsecond or two, a new conversion a hundred times more. None when the
        JSON does not hold the finding's places as expected."""
        return self._relined(finding, _json_lines(finding, related_information), 0)

    def shifted(self, moved_by: int, related_information: bool) -> _Converted | None:
        """This conversion with the finding's places ``moved_by`` lines below where
        it was placed (see moved_to): its line moved, unedited, with those above.
        Pressing Enter above a thousand findings shifts them all: for a finding of
        one line, every line number its JSON holds is that line's, and the new
        JSON is its pieces joined by the new number."""
        parts = self._one_line_parts
        if parts is None:
            parts = self._one_line_parts = self._split_on_one_line(related_information)
        if parts is False:
            lines = [line + moved_by for line in _json_lines(self.finding, related_information)]
            return self._relined(self.finding, lines, moved_by)
        json_parts, wire_parts = parts
        key = f'"line":{self.finding.range.start.line + moved_by}'
        # Built field by field: this runs for each of a thousand findings.
        entry = _Converted.__new__(_Converted)
        entry.finding = self.finding
        entry.moved_by = moved_by
        entry.line_texts = self.line_texts
        entry.json = key.join(json_parts)
        entry.wire = key.join(wire_parts)
        entry._diagnostic = None
        entry._moved_from = self._diagnostic if self._diagnostic is not None else self._moved_from
        entry._json_parts = None
        entry._one_line_parts = parts
        return entry

    def _split_on_one_line(self, related_information: bool) -> tuple[list[str], list[str]] | bool:
        """``json`` and ``wire`` split at their ``"line":N`` keys, when each is the
        finding's own line, N (see shifted); else False. Each of those places is
        on that line, so no other line number (N followed by more digits, say)
        is in the JSON to be cut by mistake; JSON written by the standard
        encoder (``"line": N``) is not cut, and is shifted the general way."""
        if not _on_one_line(self.finding):
            return False
        key = f'"line":{self.line}'
        json_parts = self.json.split(key)
        if len(json_parts) - 1 != len(_json_lines(self.finding, related_information)):
            return False
        return json_parts, self.wire.split(key)

    def _relined(self, finding: Finding, lines: list[int], moved_by: int) -> _Converted | None:
        parts = self._json_parts
        if parts is None:
            parts = self._json_parts = split_at_line_numbers(self.json)
        if len(lines) != len(parts) - 1:
            return None
        if len(lines) == 2:  # a range alone: most findings
            text = f"{parts[0]}{lines[0]}{parts[1]}{lines[1]}{parts[2]}"
        elif len(lines) == 4:  # a range and one fix edit: most of the others
            text = f"{parts[0]}{lines[0]}{parts[1]}{lines[1]}{parts[2]}{lines[2]}{parts[3]}{lines[3]}{parts[4]}"
        else:
            text = parts[0] + "".join(str(line) + part for line, part in zip(lines, parts[1:]))
        source = self._diagnostic if self._diagnostic is not None else self._moved_from
        return _Converted(finding, self.line_texts, text, parts, source, moved_by)


_STRUCTURE = default_converter()


class _FileConversions(NamedTuple):
    """A file's findings as last converted (see Conversions.diagnostics), their
    conversions in the same order, and the conversions by the id of their finding."""

    findings: list[Finding]
    lines: list[int] | None
    entries: list[_Converted]
    by_finding: dict[int, _Converted]


def _common_ends(old: list[Finding], new: list[Finding], old_lines: list[int] | None, new_lines: list[int] | None) -> tuple[int, int]:
    """How many findings at the start and at the end of ``new`` are the very
    objects at those places of ``old``, on the same lines (those two never overlap)."""
    most = min(len(old), len(new))
    head = 0
    while head < most and old[head] is new[head]:
        head += 1
    tail = 0
    most -= head
    while tail < most and old[-1 - tail] is new[-1 - tail]:
        tail += 1
    if (old_lines is None) != (new_lines is None):
        return 0, 0
    if old_lines is not None and new_lines is not None:
        # The same findings moved with their lines (a line inserted above them)
        # are converted again: they end the runs.
        head = next((index for index in range(head) if old_lines[index] != new_lines[index]), head)
        tail = next((count for count in range(tail) if old_lines[-1 - count] != new_lines[-1 - count]), tail)
    return head, tail


def _json_lines(finding: Finding, related_information: bool) -> list[int]:
    """The line numbers of a finding's places in the order its diagnostic's JSON
    holds them (see finding_json): its range, its related places (when the
    client takes them), the edits of its fixes."""
    start, end = finding.range.start.line, finding.range.end.line
    lines = [start, end]
    if not finding.fixes and not finding.related:
        return lines
    if related_information:
        for item in finding.related:
            lines += (item.range.start.line, item.range.end.line)
    for fix in finding.fixes:
        for edit in fix.edits:
            lines += (edit.range.start.line, edit.range.end.line)
    return lines


class ConvertedDiagnostics(Sequence[types.Diagnostic]):
    """The diagnostics of a file's converted findings, in order; each diagnostic
    object is built when it is first read (see _Converted.diagnostic)."""

    __slots__ = ("_entries",)

    def __init__(self, entries: list[_Converted]) -> None:
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [entry.diagnostic for entry in self._entries[index]]
        return self._entries[index].diagnostic

    def __iter__(self) -> Iterator[types.Diagnostic]:
        return (entry.diagnostic for entry in self._entries)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != len(self):
            return False
        return all(mine == theirs for mine, theirs in zip(self, other))

    def starting_on(self, first: int, last: int) -> list[types.Diagnostic]:
        """The diagnostics that start on a line from ``first`` to ``last``, the
        others left unbuilt (a finding's line is its diagnostic's)."""
        return [entry.diagnostic for entry in self._entries if first <= entry.line <= last]

    def __add__(self, other: Sequence[types.Diagnostic]) -> list[types.Diagnostic]:
        return [*self, *other]


def _on_line(diagnostic: types.Diagnostic, line: int) -> types.Diagnostic:
    """A diagnostic of one line (see _on_one_line) moved to ``line``: its range
    and the line numbers of its data (fix edits)."""
    start, end = diagnostic.range.start, diagnostic.range.end
    moved = _copy_of(diagnostic)
    moved.range = types.Range(types.Position(line, start.character), types.Position(line, end.character))
    if diagnostic.data is not None:
        moved.data = _with_line(diagnostic.data, line)
    return moved


def _copy_of(diagnostic: types.Diagnostic) -> types.Diagnostic:
    """A shallow copy of a diagnostic, field by field (attrs.evolve runs its
    initializer, at twice the cost)."""
    copy = object.__new__(types.Diagnostic)
    for name in _DIAGNOSTIC_FIELDS:
        object.__setattr__(copy, name, getattr(diagnostic, name))
    return copy


_DIAGNOSTIC_FIELDS = tuple(field.name for field in attrs.fields(types.Diagnostic))


def _with_line(value: Any, line: int) -> Any:
    """Plain JSON data with every ``line`` set to ``line``."""
    if isinstance(value, dict):
        return {key: line if key == "line" else _with_line(item, line) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_line(item, line) for item in value]
    return value


def _line_texts(finding: Finding, positions: Positions) -> str | list[str]:
    """The texts of the lines a finding's places are on in its own file: its
    converted columns depend on them (UTF-16 counts differ from code points).
    The text of its line alone for a finding of one line (see _on_one_line)."""
    line = finding.range.start.line
    if _on_one_line(finding):
        return positions.lines.line_text(line)  # the usual case
    lines = {line, finding.range.end.line}
    for item in finding.related:
        if item.path == finding.path:
            lines.update((item.range.start.line, item.range.end.line))
    for fix in finding.fixes:
        for edit in fix.edits:
            lines.update((edit.range.start.line, edit.range.end.line))
    return [positions.lines.line_text(number) for number in sorted(lines)]


def _reads_as(texts: str | list[str], finding: Finding, positions: Positions) -> bool:
    """Whether the lines of ``finding`` read as ``texts`` (its _line_texts when
    it was converted): for a finding of one line, a look at that line."""
    if type(texts) is str:
        return positions.lines.line_text(finding.range.start.line) == texts
    return _line_texts(finding, positions) == texts


class Conversions:
    """The diagnostics of each file as last converted, kept from pass to pass
    by the checker, by finding and the text of its lines."""

    def __init__(self) -> None:
        self._files: dict[Path, _FileConversions] = {}

    def diagnostics(self, path, shown, relative, positions, uri_of, related_information, model) -> tuple[Sequence[types.Diagnostic], list[str]]:
        """Findings as diagnostics (and as JSON), reusing those converted before for
        the same finding object on the same lines: an edit leaves most findings of a
        dataset as they were, and reusing them keeps an edit's cost to its lines.
        A dataset's findings come as placed on their lines (see ShownFindings): one
        whose line moved is the earlier conversion with its line numbers shifted.
        A new conversion is written straight as JSON (see finding_json): pushed
        and pulled diagnostics are sent as it, and its objects are built only
        when read (see _Converted). ``model`` is the file's dataset model, when
        it has one."""
        findings, lines = (shown.placed, shown.lines) if isinstance(shown, ShownFindings) else (shown, None)
        last = self._files.get(path)
        converter = positions(relative)
        moves = model.take_moves() if model is not None else {}
        # A dataset model gives out the same finding object only while the text of
        # its line stays as it was (an edited line is checked again; a line that
        # moved keeps its findings, given on the line it is on now): its lines
        # need no look.
        same_lines = model is not None
        if last is None:
            before: dict[int, _Converted] = {}
            head = tail = 0
        else:
            before = last.by_finding
            # The findings before and after those an edit changed are the very
            # ones converted last time: their conversions are kept without a look.
            head, tail = _common_ends(last.findings, findings, last.lines, lines) if same_lines else (0, 0)
        converted: list[_Converted] = []
        for index in range(head, len(findings) - tail):
            finding = findings[index]
            moved_by = lines[index] - finding.range.start.line if lines is not None else 0
            entry = before.get(id(finding))
            if entry is not None and not (entry.finding is finding and (same_lines or _reads_as(entry.line_texts, finding, converter))):
                entry = None
            if entry is not None and entry.moved_by != moved_by:
                entry = entry.shifted(moved_by, related_information)
            if entry is None:
                texts = None
                move = moves.get(id(finding))
                if move is not None and move[0] is finding:
                    # A finding across lines (never one placed on a line that
                    # moved since) moved with its lines since it was converted:
                    # shift that. A finding of one line moved with that line,
                    # unedited (an edited line's findings are new): its text
                    # needs no look either.
                    earlier = before.get(id(move[1]))
                    if earlier is not None and earlier.finding is move[1]:
                        if type(earlier.line_texts) is not str:
                            texts = _line_texts(finding, converter)
                        if texts is None or earlier.line_texts == texts:
                            entry = earlier.moved_to(finding, related_information)
                if entry is None:
                    # Converted where its line is now.
                    current = finding.moved(moved_by) if moved_by else finding
                    texts = _line_texts(current, converter) if texts is None else texts
                    as_json = finding_json(current, converter, positions, uri_of, related_information)
                    entry = _Converted(finding, texts, _json_text(as_json), moved_by=moved_by)
            converted.append(entry)
        if last is None or not (head or tail):
            entries = converted
            # The finding itself is kept in its entry, so its id cannot be reused.
            by_finding = {id(entry.finding): entry for entry in entries}
        else:
            entries = last.entries[:head] + converted + last.entries[len(last.entries) - tail :]
            by_finding = before
            for finding in last.findings[head : len(last.findings) - tail]:
                by_finding.pop(id(finding), None)
            for entry in converted:
                by_finding[id(entry.finding)] = entry
        self._files[path] = _FileConversions(findings, lines, entries, by_finding)
        return ConvertedDiagnostics(entries), [entry.wire for entry in entries]

    def forget(self, path: Path) -> None:
        """Drop what was converted for ``path``."""
        self._files.pop(path, None)
