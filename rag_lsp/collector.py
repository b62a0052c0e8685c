"""When Python's cycle collector runs in rag-lsp's processes: the one place that
decides it, for the command line and the language server. The core never touches
the collector; the shells call these around the core's work.

Why it is not left alone: reading and checking a large dataset allocates
millions of small containers (rows, their values, findings), none of them in a
reference cycle. The collector runs every 700 allocations, so it runs thousands
of times during such a read, each time walking again objects that can never be
garbage: that doubles the time to open a 100,000-line dataset. And a dataset
model, once built, lives as long as its document is open: every full collection
after would walk all of it again.

* A one-shot process (``rag-lsp check``, ``rag-lsp run``) turns the collector
  off (:func:`one_shot`): it ends soon, and what it built goes with it. So does
  the helper process that screens shares of large datasets for the server (it
  is started with this policy), which collects once after each share instead.
* The language server, a long-lived process, pauses the collector while it
  checks or runs (:func:`paused`), and after building a dataset model moves
  what is alive into the permanent generation (:func:`settle`), which later
  collections skip. Between passes the collector runs as usual.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from functools import wraps
from typing import Callable, Iterator, ParamSpec, TypeVar

Parameters = ParamSpec("Parameters")
Result = TypeVar("Result")


def one_shot() -> None:
    """Turn the collector off for the rest of this process."""
    gc.disable()


@contextmanager
def paused() -> Iterator[None]:
    """No collection while the block runs (nested blocks included); the collector
    is as it was after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def pausing(function: Callable[Parameters, Result]) -> Callable[Parameters, Result]:
    """``function``, run with the collector :func:`paused`."""

    @wraps(function)
    def paused_call(*args: Parameters.args, **kwargs: Parameters.kwargs) -> Result:
        with paused():
            return function(*args, **kwargs)

    return paused_call


def settle() -> None:
    """Keep every object alive now out of later collections: called after a large,
    long-lived, acyclic structure (a dataset model) was built."""
    gc.freeze()
