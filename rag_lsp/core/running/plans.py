"""Which cases a run asks, and why a case cannot be asked.

Each row of a dataset becomes a plan: for a rag case, the request its target
gets and the expected values the scorer needs (:class:`Plan`); for a
gdi_text_v1 row, the reference contexts and retrieved chunks ``rag.hit_at_k``
scores (:class:`GdiPlan`). A row that cannot be scored is planned broken, with
the code ``rag-lsp check`` reports on its line: no id, an id used before,
nothing relevant declared, no ``input`` object, a row of the other shape.
Each case's result then carries its row's ``metadata`` (:func:`carry_metadata`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Collection, Sequence

import msgspec
from msgspec import UNSET

from ..reading.datasetlines import CaseRow
from .datasets import Unreadable
from ..workspace.expected import DUPLICATE_ID, NOTHING_RELEVANT, SCHEMA, Expected, Flaw, judge_expected
from ..reading.jsonrows import Row
from ..workspace.manifests import GDI_TEXT, RAG_CASE
from .results import CaseNotFound, CaseResult
from ..workspace.rowschema import non_finite_message, row_checker, row_issues
from ..reading.schemacheck import non_finite_issues
from ..workspace.rows import row_shape
from .targets import Request

if TYPE_CHECKING:
    from .hit_at_k import HitAtKConfig
    from ..reading.schemacheck import SchemaChecker

# A value the checks refuse to read (too large, too deep).
UNSAFE_INPUT = "RAG005"
# A gdi_text_v1 row without reference contexts.
NO_REFERENCES = "RAG208"


@dataclass(slots=True)
class Plan(Request):
    """A case to run: the request the target gets, and what the scorer needs."""

    line: int = 0
    expected: Sequence[str] = ()
    broken: Flaw | None = None
    position: int = 0
    # `expect.grades` as written (the ir engine reads it), or None.
    grades: Any = None


@dataclass(frozen=True, slots=True)
class GdiPlan:
    id: str
    line: int
    references: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    broken: Flaw | None = None


def plan_rag_cases(
    rows: list[tuple[int, Any]], case_ids: Collection[str] | None, flaws: dict[int, Flaw] | None = None
) -> list[Plan]:
    # One pass over the rows with the checks inlined: for 100k cases every
    # function call per row shows in the run's time. Each broken case names the
    # code `rag-lsp check` reports on its line.
    wanted = set(case_ids) if case_ids is not None else None
    seen: dict[str, int] = {}
    plans: list[Plan] = []
    append = plans.append
    for line, value in rows:
        if type(value) is CaseRow:
            # The common line: typed and checked as it was decoded.
            case_id = value.id
            if case_id:
                if wanted is not None and case_id not in wanted:
                    continue
                if case_id in seen:
                    append(Plan(case_id, None, line, (), _repeated(case_id, seen[case_id])))
                    continue
                seen[case_id] = line
                relevant = value.expect.relevant
                if relevant:
                    grades = value.expect.grades
                    append(Plan(case_id, value.input, line, relevant, grades=None if grades is UNSET else grades))
                else:
                    append(Plan(case_id, None, line, (), _NOTHING_DECLARED))
                continue
            value = msgspec.json.decode(_encode(value))
        if type(value) is dict:
            case_id = value.get("id")
            if type(case_id) is str and case_id:
                if wanted is not None and case_id not in wanted:
                    continue
                if row_shape(value) == GDI_TEXT:
                    # Not a case (RAG004), so its id is no case's: as the checks count ids.
                    append(Plan(case_id, None, line, (), _GDI_AMONG_CASES))
                    continue
                if case_id in seen:
                    append(Plan(case_id, None, line, (), _repeated(case_id, seen[case_id])))
                    continue
                seen[case_id] = line
                plan = _plan_case(case_id, line, value)
                if plan.broken is None and flaws and line in flaws:
                    plan = Plan(case_id, None, line, (), flaws[line])
                append(plan)
                continue
        case_id = f"line {line + 1}"
        if wanted is not None and case_id not in wanted:
            continue
        seen.setdefault(case_id, line)
        append(Plan(case_id, None, line, (), _no_id(value, line, "id")))
    _check_found(wanted, seen)
    return plans


_NOTHING_DECLARED = Flaw("nothing relevant declared: `expect.relevant` is empty, so there is nothing to count", NOTHING_RELEVANT)
_GDI_AMONG_CASES = Flaw("a gdi_text_v1 row among rag cases: the rag engine cannot score it", SCHEMA)
_NO_INPUT = Flaw("the case has no `input` object to send to the target", SCHEMA)


def _repeated(case_id: str, first: int) -> Flaw:
    return Flaw(f"the case id {case_id!r} is used before, on line {first + 1}", DUPLICATE_ID)


def _encode(case: CaseRow) -> bytes:
    expect: dict[str, Any] = {"relevant": case.expect.relevant}
    if case.expect.grades is not UNSET:
        expect["grades"] = case.expect.grades
    row = {"id": case.id, "input": case.input, "expect": expect}
    if case.metadata is not UNSET:
        row["metadata"] = case.metadata
    return msgspec.json.encode(row)


def _metadata_of(value: Any) -> Any:
    if type(value) is CaseRow:
        return value.metadata
    return value.get("metadata", UNSET) if type(value) is dict else UNSET


def carry_metadata(cases: list[CaseResult], rows: list[tuple[int, Any]]) -> None:
    """Give each case the `metadata` object of its row (a value of another type
    is RAG004's and is not carried)."""
    by_line = {line: metadata for line, value in rows if type(metadata := _metadata_of(value)) is dict}
    if by_line:
        for case in cases:
            case.metadata = by_line.get(case.line)


def decode_input(plan: Plan) -> None:
    """Decode an input kept as JSON text; a case whose input is no object is broken."""
    if type(plan.input) is msgspec.Raw:
        try:
            plan.input = msgspec.json.decode(plan.input)
        except msgspec.ValidationError as error:
            # Well-formed JSON the decoder cannot hold: a number past a double's
            # range, or an integer past the digits Python converts.
            plan.broken = _unread_input(plan.input, error)
            plan.input = None
            return
        except RecursionError as error:
            # Nesting past the decoder's depth.
            plan.input = None
            plan.broken = Flaw(f"the case's `input` is not read: {error}", UNSAFE_INPUT)
            return
    if type(plan.input) is not dict:
        plan.broken = _NO_INPUT


def _unread_input(raw: msgspec.Raw, error: Exception) -> Flaw:
    """Why a case whose `input` the fast decoder refused is broken, with the code
    the checks give it, read as they read it: a number beyond a double's range is
    infinity there (RAG004), an integer of too many digits is not read (RAG005)."""
    row = Row(bytes(raw).decode("utf-8", "surrogatepass"))
    if row.refused:
        return Flaw(f"the case's `input` is not read: {row.refused}", UNSAFE_INPUT)
    flaw = next(non_finite_issues(row.value), None) if row.error is None else None
    if flaw is not None:
        return Flaw(non_finite_message(("input", *flaw.path)), SCHEMA)
    return Flaw(f"the case's `input` is not read: {error}", UNSAFE_INPUT)


def _no_id(value: Any, line: int, key: str) -> Flaw:
    if isinstance(value, Unreadable):
        return value
    if type(value) is not dict:
        return Flaw(f"line {line + 1} is not a JSON object", SCHEMA)
    return Flaw(f"line {line + 1} has no string `{key}`", SCHEMA)


def _plan_case(case_id: str, line: int, value: dict) -> Plan:
    """A case read as plain JSON: its expected values judged as the checks judge them."""
    verdict = judge_expected(value)
    given = value.get("input")
    if verdict is None and type(given) is dict:
        if "input_id" not in value and "retrieved_context" not in value and "reference_contexts" not in value:
            return Plan(case_id, given, line, value["expect"]["relevant"], grades=value["expect"].get("grades"))
    if row_shape(value) == GDI_TEXT:
        problem = _GDI_AMONG_CASES
    elif verdict is not None and verdict.kind is not Expected.NOT_A_STRING:
        problem = _EXPECTED_FLAWS[verdict.kind]
    elif type(given) is not dict:
        problem = _NO_INPUT
    else:
        assert verdict is not None
        problem = Flaw(f"`expect.relevant[{verdict.index}]` is not a string", verdict.code)
    return Plan(case_id, None, line, (), problem)


# A case's expected values that cannot be scored, as a run says it.
_EXPECTED_FLAWS = {
    # Declared, but not as a list: the schema's finding, not RAG201's.
    Expected.NOT_A_LIST: Flaw("`expect.relevant` must be a list of strings", Expected.NOT_A_LIST.code),
    Expected.MISSING: Flaw("nothing relevant declared: the case has no `expect.relevant` list", Expected.MISSING.code),
    Expected.EMPTY: _NOTHING_DECLARED,
}


def plan_gdi_rows(
    rows: list[tuple[int, Any]], case_ids: Collection[str] | None, flaws: dict[int, Flaw], config: HitAtKConfig
) -> list[GdiPlan]:
    """The gdi_text_v1 rows to score. A row is broken with the code `rag-lsp
    check` reports on its line: no usable `input_id` or a row that fails the
    gdi_text_v1 schema (the seed manifest's required columns) is RAG004, a
    repeated `input_id` RAG202, a row without reference contexts RAG208."""
    wanted = set(case_ids) if case_ids is not None else None
    seen: dict[str, int] = {}
    plans: list[GdiPlan] = []
    checker = row_checker(GDI_TEXT)
    for line, value in rows:
        if type(value) is CaseRow:
            value = msgspec.json.decode(_encode(value))
        case_id = value.get("input_id") if type(value) is dict else None
        problem: Flaw | None = None
        if type(case_id) is not str or not case_id:
            case_id = f"line {line + 1}"
            problem = _no_id(value, line, "input_id")
        if wanted is not None and case_id not in wanted:
            continue
        if problem is None and row_shape(value) == RAG_CASE:
            # Not a gdi row (RAG004), so its input_id is no row's: as the checks count ids.
            problem = Flaw("a rag case among gdi_text_v1 rows: rag.hit_at_k cannot score it", SCHEMA)
        if problem is None and case_id in seen:
            problem = Flaw(f"the input_id {case_id!r} is used before, on line {seen[case_id] + 1}", DUPLICATE_ID)
        if problem is None:
            seen[case_id] = line
            problem = _gdi_problem(value, flaws.get(line), checker, config)
        else:
            seen.setdefault(case_id, line)
        if problem is not None:
            plans.append(GdiPlan(case_id, line, broken=problem))
        else:
            plans.append(GdiPlan(case_id, line, value["reference_contexts"], value["retrieved_context"]))
    _check_found(wanted, seen)
    return plans


def _gdi_problem(value: dict, flaw: Flaw | None, checker: SchemaChecker, config: HitAtKConfig) -> Flaw | None:
    """Why a gdi row with a usable, unrepeated input_id cannot be scored (``flaw``:
    what reading it found, see RunDataset.flaws), or None."""
    references = value.get("reference_contexts")
    if ("reference_contexts" not in value) or (type(references) is list and not references):
        # The row is broken, not zero: said in the metric's language, as its
        # result would say it, with the code of the check.
        from .hit_at_k import explain_no_references

        return Flaw(explain_no_references(config), NO_REFERENCES)
    if flaw is not None:
        return flaw
    if checker.is_valid(value):
        return None
    issues = row_issues(value, GDI_TEXT, exact=False)
    if not issues:
        return None
    issue = issues[0]
    where = "".join(f"[{part}]" if type(part) is int else f".{part}" for part in issue.path).lstrip(".")
    said = f"`{where}`: {issue.message}" if where and issue.anchor != "key" else issue.message
    return Flaw(f"not a valid gdi_text_v1 row: {said}", SCHEMA)


def _check_found(wanted: set[str] | None, seen: dict[str, int]) -> None:
    # Asked for cases of which the dataset holds none: say so rather than run nothing.
    if wanted is not None and not wanted & seen.keys():
        raise CaseNotFound(", ".join(sorted(wanted)))
