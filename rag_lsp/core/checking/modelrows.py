"""A dataset model's rows, and how a helper process describes each line.

A :class:`ModelRow` keeps what the model's indexes need of a line (its shape,
what the groupings keep, its counts) and drops its decoded value once the line
is checked. A helper process that screens a batch answers a byte per line
(:data:`BLANK`, :data:`LOOK`, one of :data:`PLAIN` or :data:`NOT_JSON`) and three counts per line
(:data:`COUNTS`); see rag_lsp.core.checking.screening.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Iterable

from . import rules as registry
from .datasetindex import kept_of
from ..reading.findings import Finding
from ..reading.jsonrows import fine_row
from ..workspace.manifests import GDI_TEXT, RAG_CASE
from ..workspace.rows import DatasetRow, asked_of, row_shape

# A helper's answer for each line of a batch is a byte (see screen_batch): a
# blank line, a line it did not pass, or a plain line's row shape and whether
# it was read exactly (2 + twice the shape's index below + 1 if exactly).
BLANK, LOOK = 0, 1
PLAIN = {
    2 + 2 * index + exact: (shape, bool(exact))
    for index, shape in enumerate((None, RAG_CASE, GDI_TEXT))
    for exact in (0, 1)
}
PLAIN_CODE = {entry: code for code, entry in PLAIN.items()}
# A line that is not JSON: the helper sends where and why with its answer, and
# the row is made from that (a dataset written by another tool may have no line
# of JSON at all, and each would otherwise be read again here).
NOT_JSON = max(PLAIN) + 1
# The lines a helper answers for, which the model then does not read again.
ANSWERED = frozenset(PLAIN) | {NOT_JSON}
# A helper's counts for each line: its expected paths, those not workspace files,
# and the hits it asks for (see ModelRow.top_k), as unsigned 32-bit integers.
COUNTS = 3
MOST_COUNTED = 2**32 - 1
NO_FINDINGS: tuple[Finding, ...] = ()


class ModelRow(DatasetRow):
    """A model's row: its shape and case id stay; its value (a JSON object or
    array) is dropped once the line is checked, and read again only to check it
    again."""

    __slots__ = ("kept", "dropped", "line", "listed", "absent", "top_k", "corpora")

    # What the dataset rules that group rows keep of a row's JSON object (see
    # core.checking.datasetindex), set by prepare.
    kept_of: Callable[[dict[str, Any], str | None], Any] | None = None

    @classmethod
    def prepare(cls) -> None:
        """Learn what the registered groupings keep of a row (once)."""
        if cls.kept_of is None:
            cls.kept_of = staticmethod(kept_of([rule.grouping for rule in registry.groupings()]))  # type: ignore[assignment]

    def __init__(self, text: str, refused: str | None = None) -> None:
        super().__init__(text, refused)
        value = self.value
        # What the groupings keep of it (None: nothing).
        self.kept = self.kept_of(value, self.shape) if type(value) is dict else None  # type: ignore[misc]
        # The hits it asks for (`input.topK`, a positive integer), else 0: a
        # suite's `k` is weighed against the dataset's (see Workspace.top_ks_asked).
        # And the corpora it asks to search (`input.corpora`): weighed against
        # those its suites' targets serve (see Workspace.corpora_asked).
        self.top_k, self.corpora = asked_of(value)
        self.dropped = False
        # The line the row was placed on; lines above it may have come or gone since.
        self.line = -1
        # Its expected paths, and how many are not workspace files (see _tally).
        self.listed = self.absent = 0

    # Rows read with nothing to report (see fine_row): one call each, as a
    # large dataset has a hundred thousand of them.
    @classmethod
    def read_fine(cls, text: str, value: Any) -> ModelRow:
        row = fine_row(cls, text, value)
        row.dropped = False
        row.line = -1
        row.listed = row.absent = 0
        if type(value) is dict:
            row.shape = shape = row_shape(value)
            row.kept = cls.kept_of(value, shape)  # type: ignore[misc]
            row.top_k, row.corpora = asked_of(value)
        else:
            row.shape = row.kept = None
            row.top_k, row.corpora = 0, ()
        return row

    @classmethod
    def plain(
        cls, text: str, shape: str | None, kept: Any, exact: bool, line: int, listed: int, absent: int, top_k: int
    ) -> ModelRow:
        """The row of a line another process read and checked with no findings
        but those of rules that finish their findings (see screen_batch), placed
        on ``line``: what reading it here would keep, its value dropped."""
        row = fine_row(cls, text, None, exact)
        row.shape = shape
        row.kept = kept
        row.dropped = True
        row.line = line
        row.listed = listed
        row.absent = absent
        row.top_k = top_k
        row.corpora = ()
        return row

    @classmethod
    def not_json(cls, text: str, error: tuple[int, str], line: int) -> ModelRow:
        """The row of a line another process found not to be JSON, placed on
        ``line``: ``error`` is where and why, as reading it here says (see
        Row._decode_exactly)."""
        row = cls.plain(text, None, None, True, line, 0, 0, 0)
        row.error = error
        row.dropped = False  # it has no value to read again
        return row

    def restore(self) -> None:
        if self.dropped:
            self.value = self.decode_again()
            self.dropped = False

    def drop(self) -> None:
        value = self.value
        if type(value) is dict or type(value) is list:
            self.value = None
            self.dropped = True


class Unfinished(list):
    """The findings placed on a line when some are unfinished (see
    Finding.unfinished): a line's findings are finished when given out, and
    telling such a line by its list's type costs nothing on the many others."""


SHAPE_OF = operator.attrgetter("shape")
TOP_K_OF = operator.attrgetter("top_k")
CORPORA_OF = operator.attrgetter("corpora")
LISTED_OF = operator.attrgetter("listed")
ABSENT_OF = operator.attrgetter("absent")


def causes_of(placed: Iterable[Finding]) -> set[tuple[str, str]]:
    """The (code, cause) pairs of one line's findings, each once (see Finding.cause)."""
    return {(finding.code, finding.cause) for finding in placed if finding.cause is not None}


def counts_as_case(row: ModelRow, shape: str | None) -> bool:
    # As RowsContext.cases and .gdi_rows: a row of the other shape is RAG004's,
    # not a case; a row of neither shape has no `input_id` (else it would be a
    # gdi row), so no id among gdi rows.
    own = row.shape
    checked_as = shape or own or RAG_CASE
    return own == checked_as or (own is None and checked_as == RAG_CASE)
