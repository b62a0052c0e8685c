"""Opening a file a setting, a flag or a cache names, only when it is one.

A path named by a setting or a flag may lead anywhere: to a named pipe (reading
it waits for a writer forever), a device (``/dev/zero`` never ends), a folder, or
through a link out of the workspace. :func:`read_regular` opens a path without
blocking, asks the open file what it is, and reads it only when it is a regular
file no larger than a limit, reading at most that limit; otherwise it raises
:class:`Refused`, whose message says why, in words for people.

:func:`writable_target` says whether a file may be replaced by a new one moved
into its place: only a regular file, or nothing, may. A link is refused rather
than replaced (the user's link would become a plain file, and the file it leads
to would not change), and so are pipes, devices and folders.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator

# Past the size a file had when opened, a read takes at most this many bytes at once.
_CHUNK = 1 << 20


class Refused(Exception):
    """A path that is not read or written; the message says why."""


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words ("a named pipe (FIFO)")."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def read_regular(path: Path | str, max_bytes: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    Refused (with why) when the path is missing, a folder, a pipe, a device or a
    socket, a link when ``follow_links`` is false, larger than ``max_bytes``, or
    cannot be read. Opening never blocks: a named pipe without a writer is
    refused, not waited for."""
    descriptor, size = _open_regular(path, max_bytes, follow_links)
    try:
        # The size it had is read at once (a byte more, to see it grew): in
        # pieces, each piece and then their join would be new memory, the
        # system's pages of a large dataset given three times over.
        parts = list(_pieces(path, descriptor, max_bytes, size + 1, _CHUNK))
        return parts[0] if len(parts) == 1 else b"".join(parts)  # none: an empty file
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    finally:
        os.close(descriptor)


def read_regular_pieces(path: Path | str, max_bytes: int, piece: int) -> Iterator[bytes]:
    """The bytes of the regular file at ``path``, ``piece`` bytes at a time, for
    a reader that keeps what it makes of each piece and not the piece: the
    memory of one piece is used again for the next. Refused as read_regular
    refuses."""
    descriptor, _ = _open_regular(path, max_bytes, True)
    try:
        yield from _pieces(path, descriptor, max_bytes, piece, piece)
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    finally:
        os.close(descriptor)


def _pieces(path: Path | str, descriptor: int, max_bytes: int, first: int, then: int) -> Iterator[bytes]:
    """The bytes of the open file, ``first`` at most at once, then ``then`` at
    most; refused once they pass ``max_bytes`` (the file grew while it was read)."""
    left = max_bytes + 1
    want = min(left, first)
    while left > 0:
        try:
            part = os.read(descriptor, want)
        except BlockingIOError:
            # A regular file never blocks; be safe anyway.
            return
        if not part:
            return
        left -= len(part)
        if left <= 0:
            raise Refused(f"{path} is above the limit of {max_bytes:,} bytes")
        yield part
        want = min(left, then)


def _open_regular(path: Path | str, max_bytes: int, follow_links: bool) -> tuple[int, int]:
    """The open descriptor of the regular file at ``path`` and its size, when it
    is a regular file of at most ``max_bytes`` (see read_regular)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise Refused(f"{path} does not exist") from None
    except IsADirectoryError:
        raise Refused(f"{path} is a folder, not a file") from None
    except OSError as error:
        if not follow_links and os.path.islink(path):
            raise Refused(f"{path} is a symbolic link, which is not followed here") from None
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise Refused(f"{path} is {kind_of(status.st_mode)}, not a regular file")
        if status.st_size > max_bytes:
            raise Refused(f"{path} is {status.st_size:,} bytes, above the limit of {max_bytes:,}")
    except OSError as error:
        os.close(descriptor)
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    except Refused:
        os.close(descriptor)
        raise
    return descriptor, status.st_size


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, with its links resolved, lies inside ``root``."""
    try:
        Path(path).resolve().relative_to(Path(root).resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def writable_target(path: Path | str) -> None:
    """Refused (with why) unless ``path`` is a regular file, not a link, or does
    not exist: what a new file may be moved over without replacing something else
    of the user's."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise Refused(f"cannot write {path}: {error.strerror or error}") from None
    if stat.S_ISLNK(status.st_mode):
        raise Refused(
            f"{path} is a symbolic link: it is not replaced by a plain file, nor is the file it leads to "
            "written through it; give the path of the file itself"
        )
    if not stat.S_ISREG(status.st_mode):
        raise Refused(f"{path} is {kind_of(status.st_mode)}, not a regular file: it is not replaced")


def open_regular(path: Path | str, *, follow_links: bool = True):
    """``path`` opened for reading in binary, when it is a regular file (see
    :func:`read_regular`); Refused otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError as error:
        os.close(descriptor)
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise Refused(f"{path} is {kind_of(mode)}, not a regular file")
    return os.fdopen(descriptor, "rb")


def write_replacing(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path``: into a new file beside it, then moved into its
    place, so no reader sees it half-written. Refused (with why) when ``path`` is
    a link, a pipe, a device or a folder (see :func:`writable_target`), or when it
    cannot be written; what it named is then left as it was."""
    import tempfile

    path = Path(path)
    writable_target(path)
    folder = path.parent
    try:
        descriptor, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=folder)
    except OSError as error:
        raise Refused(f"cannot write {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        # The new file has the mode a plain create would give it, not mkstemp's 0600.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(partial, 0o666 & ~umask)
        writable_target(path)  # it may have changed while the file was written
        os.replace(partial, path)
    except BaseException as error:
        try:
            os.unlink(partial)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise Refused(f"cannot write {path}: {error.strerror or error}") from None
        raise
