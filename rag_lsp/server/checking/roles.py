"""What the checking side uses of the rest of the server.

The editing features (completion, hover, links, definitions, symbols) and the
code actions are given these narrow interfaces, never the server or the run
manager itself (see :mod:`rag_lsp.server.base.client`). The runs, in the other
room, answer them without either room importing the other: the server
(:mod:`rag_lsp.server.server`) hands its run manager over where a
:class:`Suggestions` is asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..base.client import Client

if TYPE_CHECKING:
    from ...core.editing.suggest import IndexSearch
    from .session import Session


class Suggestions(Protocol):
    """The builtin targets' indexes, asked about a case being written: what
    completion and the "Add the top hit" action suggest from."""

    def index_search(self, root: Path) -> IndexSearch:
        """Asks the indexes already held for ``root`` (never builds one)."""
        ...

    def load_wanted(self) -> None:
        """Loads, in the background, the cached index of each target that had none to answer from."""
        ...


class Editing(Client, Protocol):
    """What the editing features use: the client, the session whose worker
    answers them, and the indexes that suggest expected files."""

    @property
    def session(self) -> Session: ...

    @property
    def runs(self) -> Suggestions: ...
