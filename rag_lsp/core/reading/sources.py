"""Reading files: a file's text, decoded, or why it was not read in full.

All reading goes through a :class:`FileSource`, so the language server can put the
editor's unsaved text in front of the disk (:class:`OverlaySource`) and the core
never knows the difference. Text is UTF-8; a byte that is not is kept as U+FFFD
and reported on its line, and a file above the size limit is refused, not read.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from .safefiles import Refused, read_regular, read_regular_pieces


@dataclass(frozen=True)
class SourceText:
    """A file's text, or why it was not read in full."""

    text: str
    # Set when the file was refused (too large): the message of the RAG005.
    refused: str | None = None
    # (offset, message) of a byte that is not UTF-8; the text holds U+FFFD there.
    decode_error: tuple[int, str] | None = None
    # (line, column, message) of the first such byte of each line that has one
    # (lines split at "\n"): a dataset reads every other line.
    undecodable: tuple[tuple[int, int, str], ...] = ()
    # The encoding the text was read in where it is not UTF-8 ("UTF-16LE"): a
    # UTF-16 or UTF-32 file, told by its first bytes (see decode).
    encoding: str | None = None


class FileSource(Protocol):
    def read(self, path: Path) -> SourceText | None:
        """The text of ``path``, or None when it is missing or not a file."""

    def read_lines(self, path: Path) -> tuple[list[str], int] | None:
        """The lines of ``path`` (see read_lines) and its text's UTF-8 size; None
        where :meth:`read` is to be asked instead."""


class DiskSource:
    """Reads files from disk, refusing those above the size limit."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes

    def read(self, path: Path) -> SourceText | None:
        try:
            size = path.stat().st_size
            if not path.is_file():
                return None
            if size > self.max_bytes:
                return SourceText("", refused=f"file is {size:,} bytes, above the max-file-bytes limit of {self.max_bytes:,}")
            # Opened without blocking and asked again what it is: a file that
            # became a pipe or a device since is not read.
            data = read_regular(path, self.max_bytes)
        except (OSError, Refused):
            return None
        return decode(data)

    def read_lines(self, path: Path) -> tuple[list[str], int] | None:
        try:
            return read_lines(path, self.max_bytes)
        except (OSError, Refused):
            return None


# How much of a file read_lines decodes at a time: a piece, its text and the
# text carried over from the piece before stay in the memory the last ones used.
_PIECE = 1 << 16
_BOM = "\ufeff"


def read_lines(path: Path, max_bytes: int) -> tuple[list[str], int] | None:
    """The text of the file at ``path`` split at "\n" (as a dataset's lines are,
    see core.reading.datasetlines), and the text's UTF-8 size, read a piece at a
    time: the file's bytes and its text are never held whole besides the lines,
    each of which would be new memory, tens of megabytes for a large dataset
    (the system's pages cost about a millisecond per megabyte, first touched).
    None for a file :func:`decode` reports a byte of (its undecodable lines are
    found by reading it whole). Refused as read_regular refuses."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    lines: list[str] = []
    carried = ""
    size = 0
    first = True  # no text decoded yet
    try:
        for piece in read_regular_pieces(path, max_bytes, _PIECE):
            if first and _other_encoding(piece) is not None:
                return None  # see decode
            size += len(piece)
            text = decoder.decode(piece)
            if first and text:
                first = False
                if text.startswith(_BOM):
                    text = text[1:]  # as decode does: not content
                    size -= len(_BOM.encode())
            if carried:
                text = carried + text
            parts = text.split("\n")
            carried = parts.pop()
            lines += parts
        carried += decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return None
    lines.append(carried)
    return lines, size


class HasText(Protocol):
    @property
    def text(self) -> str:
        """The current text."""


class OverlaySource:
    """Texts held in memory (an editor's open documents) in front of another source.

    A text is a string, or an object whose ``text`` is read only when asked (an
    open dataset's model joins its lines only then). A string above the size limit
    of the source below is refused as that file would be: an open document is
    checked no further than the file on disk."""

    def __init__(self, base: FileSource) -> None:
        self.base = base
        self.max_bytes: int | None = getattr(base, "max_bytes", None)
        self.texts: dict[Path, str | HasText] = {}

    def limit(self, max_bytes: int) -> None:
        """Refuse files above ``max_bytes`` from now on (the workspace's settings
        are known only once its settings file is read, through this source)."""
        self.max_bytes = max_bytes
        if isinstance(self.base, DiskSource):
            self.base.max_bytes = max_bytes

    def read_lines(self, path: Path) -> tuple[list[str], int] | None:
        # An open document's text is what read gives.
        reader = getattr(self.base, "read_lines", None)
        return None if path in self.texts or reader is None else reader(path)

    def read(self, path: Path) -> SourceText | None:
        text = self.texts.get(path)
        if text is None:
            return self.base.read(path)
        if not isinstance(text, str):
            return SourceText(text.text)
        size = size_above(text, self.max_bytes)
        if size is not None:
            return SourceText("", refused=f"document is {size:,} bytes, above the max-file-bytes limit of {self.max_bytes:,}")
        return SourceText(text)


def utf8_size(text: str) -> int:
    """The size of ``text`` in UTF-8 (its length when it is ASCII, which CPython
    knows without looking)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def lines_size(lines: Sequence[str]) -> int:
    """The UTF-8 size of ``lines`` joined by "\n" (their lengths, when all are
    ASCII: told by a C method per line, where a dataset has a hundred thousand)."""
    if all(map(str.isascii, lines)):
        return sum(map(len, lines)) + len(lines) - 1
    return sum(map(utf8_size, lines)) + len(lines) - 1


def size_above(text: str, limit: int | None) -> int | None:
    """The UTF-8 size of ``text`` when it is above ``limit``, else None (encoding
    only a text whose length alone does not decide)."""
    if limit is None or len(text) * 4 <= limit:
        return None
    size = utf8_size(text)
    return size if size > limit else None


def decode(data: bytes) -> SourceText:
    """UTF-8 text; a byte that is not UTF-8 is kept as U+FFFD and reported.
    A file in UTF-16 or UTF-32 (as Windows PowerShell 5 writes what `>` sends to
    a file), told by its first bytes, is read in that encoding, which the text
    names: read as UTF-8, each of its lines would be a slip of its own."""
    encoding = _other_encoding(data)
    if encoding is not None:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            pass
        else:
            text = _strip_bom(text)
            if "\x00" not in text:
                return SourceText(text, encoding=_ENCODING_NAMES[encoding])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        offset = len(data[: error.start].decode("utf-8", "replace"))
        text = data.decode("utf-8", "replace")
        return SourceText(
            _strip_bom(text),
            decode_error=(offset, not_utf8(data[error.start])),
            undecodable=_undecodable_lines(data, text.startswith("\ufeff")),
        )
    return SourceText(_strip_bom(text))


# The encodings other than UTF-8 a JSON text may be in (see _other_encoding),
# by their codecs, each named with its byte order.
_ENCODING_NAMES = {"utf-16-le": "UTF-16LE", "utf-16-be": "UTF-16BE", "utf-32-le": "UTF-32LE", "utf-32-be": "UTF-32BE"}
_MARKED = {
    codecs.BOM_UTF32_LE: "utf-32-le",
    codecs.BOM_UTF32_BE: "utf-32-be",
    codecs.BOM_UTF16_LE: "utf-16-le",
    codecs.BOM_UTF16_BE: "utf-16-be",
}


def _other_encoding(data: bytes) -> str | None:
    """The encoding of a text in UTF-16 or UTF-32, told from its first bytes as
    JSON's RFC 4627 tells them: a byte order mark, else the zero bytes around
    its first character where that is ASCII (JSON's `{` or `[`); None for any
    other text (UTF-8, or bytes that are no text). The codec named keeps a byte
    order mark as U+FEFF, which decode strips."""
    for mark, encoding in _MARKED.items():  # UTF-32LE's mark starts with UTF-16LE's: tried first
        if data.startswith(mark):
            return encoding
    encoding = json.detect_encoding(data[:4])
    if encoding in _ENCODING_NAMES:
        width = 4 if encoding.startswith("utf-32") else 2
        first = data[:width].decode(encoding, "replace")
        return encoding if first in ("{", "[") else None
    return None


def not_utf8(byte: int) -> str:
    """What to say of ``byte``, where it is not UTF-8: the character it is in
    Windows-1252 as well, where it is a letter or a sign there (an 8-bit file
    most often is in that encoding, or in Latin-1, which shares its letters)."""
    said = f"byte 0x{byte:02x} is not valid UTF-8"
    try:
        character = bytes([byte]).decode("cp1252")
    except UnicodeDecodeError:
        return said
    return f"{said} (in Windows-1252 it is {character!r})" if character.isprintable() and not character.isspace() else said


def _undecodable_lines(data: bytes, bom: bool) -> tuple[tuple[int, int, str], ...]:
    """(line, code-point column, message) of the first byte that is not UTF-8 on
    each line that has one. A newline is never part of a multi-byte character, so
    the lines of the bytes are those of the text."""
    found = []
    for number, line in enumerate(data.split(b"\n")):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            column = len(line[: error.start].decode("utf-8", "replace"))
            if bom and number == 0:
                column -= 1  # the text starts after the byte order mark
            found.append((number, column, not_utf8(line[error.start])))
    return tuple(found)


def _strip_bom(text: str) -> str:
    # A BOM is not content; keep columns true by replacing it with nothing only at 0.
    return text[1:] if text.startswith("\ufeff") else text
