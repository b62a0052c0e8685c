"""The batches of a dataset's first reading, taken from both ends.

The caller of a :class:`~rag_lsp.core.checking.parallel.Helper` takes batches
from the front and the helper from the back, each without waiting for the other
(see rag_lsp.core.checking.parallel): :class:`SharedEnds` keeps the two
counters in a small file both processes map; :class:`TwoEnds` is the same for
one process alone.
"""

from __future__ import annotations

import mmap
import struct

# The shared counters at the start of a share's file: the caller's next batch
# (the front) and the lowest batch the helper has taken (the back); the text follows.
_COUNTER = struct.Struct("<q")
_FRONT, _BACK = 0, _COUNTER.size
HEADER_BYTES = 2 * _COUNTER.size


class TwoEnds:
    """Batch indexes ``[start, stop)`` for one process alone: all from the front."""

    def __init__(self, start: int, stop: int) -> None:
        self._front = start
        self._stop = stop

    def take_front(self) -> int | None:
        if self._front >= self._stop:
            return None
        self._front += 1
        return self._front - 1


class SharedEnds:
    """Batch indexes ``[start, stop)``, taken from the front by the caller and from
    the back by the helper, through two counters in a mapped file (see the
    module's docstring): each side writes its own counter and reads the other's."""

    def __init__(self, counters: mmap.mmap) -> None:
        self._counters = counters

    @staticmethod
    def header(start: int, stop: int) -> bytes:
        return _COUNTER.pack(start) + _COUNTER.pack(stop)

    def _get(self, offset: int) -> int:
        return _COUNTER.unpack_from(self._counters, offset)[0]

    def _set(self, offset: int, value: int) -> None:
        _COUNTER.pack_into(self._counters, offset, value)

    @property
    def front(self) -> int:
        """The caller's next batch: every batch below it is the caller's."""
        return self._get(_FRONT)

    @property
    def back(self) -> int:
        """The lowest batch the helper has taken."""
        return self._get(_BACK)

    def take_front(self) -> int | None:
        front = self._get(_FRONT)
        if front >= self._get(_BACK):
            return None
        self._set(_FRONT, front + 1)
        return front

    def take_back(self) -> int | None:
        back = self._get(_BACK) - 1
        if back < self._get(_FRONT):
            return None
        self._set(_BACK, back)
        return back

    def close_front(self) -> None:
        """Take every batch left (the caller gives up): the helper takes no more."""
        self._set(_FRONT, self._get(_BACK))
