"""A run's progress, told to whoever listens at most every 50 ms.

Both shells listen: ``rag-lsp run``'s progress bar and the language server's
work-done progress.
"""

from __future__ import annotations

import time
from typing import Callable

Progress = Callable[[int, int], None]


class Reporter:
    """Calls the progress callback at most every 50 ms, and once at the end.

    The run loop reports every ``every`` cases (one case at a time when a
    callback listens; never when none does), so a 100k-case replay does not pay
    for a clock read per case.
    """

    def __init__(self, callback: Progress | None, total: int) -> None:
        self.callback = callback
        self.total = total
        self.count = 0
        self.offset = 0
        self._last = 0.0
        self.every = 1 if callback is not None else max(total, 1) + 1

    def one(self) -> None:
        self.offset += 1
        self.at(0)

    def at(self, done: int) -> None:
        self.count = self.offset + done
        if self.callback is not None:
            now = time.monotonic()
            if now - self._last >= 0.05:
                self._last = now
                self.callback(self.count, self.total)

    def many(self, count: int) -> None:
        self.count += count
        if self.callback is not None and count:
            self._last = time.monotonic()
            self.callback(self.count, self.total)

    def done(self, count: int | None = None) -> None:
        if count is not None:
            self.count = count
        if self.callback is not None:
            self.callback(self.count, self.total)
