"""No input makes the analysis raise: random text and bytes in every kind of file."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp.core.checking.analyze import analyze_file
from rag_lsp.core.reading.sources import decode, SourceText
from rag_lsp.core.workspace.workspace import DATASET_FILE, MANIFEST_FILE, SUITE_FILE, TARGETS_FILE, Workspace

# Slow (random input through every check): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

FILES = {
    ".punica/evals/code.suite.yaml": SUITE_FILE,
    ".punica/evals/code.jsonl": DATASET_FILE,
    ".punica/metrics/m.yaml": MANIFEST_FILE,
    ".punica/targets.yaml": TARGETS_FILE,
}
SUITE = (
    "suites:\n  - id: code\n    target: {kind: capability, id: vectors.query}\n"
    "    dataset: .punica/evals/code.jsonl\n    engines: [rag]\n"
    "    thresholds: {rag.recall: 0.8, rag.mode.semantic: 1}\n"
)
CASE = '{"id": "a", "input": {"query": "q", "corpora": ["code"], "topK": 3}, "expect": {"relevant": ["src/a.py"]}}\n'


# The files exist on disk (empty) so the workspace discovers them; their content
# comes from memory, a fresh example each time.
ROOT = Path(tempfile.mkdtemp(prefix="rag-lsp-robustness-")).resolve()
for _relative in (*FILES, "src/a.py"):
    (ROOT / _relative).parent.mkdir(parents=True, exist_ok=True)
    (ROOT / _relative).touch()


class RuleFailures(logging.Handler):
    """Collects the errors the analysis logs when a rule raises (it goes on with the others)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class MemorySource:
    """Files held in memory, as bytes, decoded the way files on disk are."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = {ROOT / relative: data for relative, data in files.items()}

    def read(self, path: Path) -> SourceText | None:
        data = self.files.get(path)
        return decode(data) if data is not None else None


def analyze_all(files: dict[str, bytes]) -> None:
    base = {".punica/evals/code.suite.yaml": SUITE.encode(), ".punica/evals/code.jsonl": CASE.encode()}
    workspace = Workspace(ROOT, source=MemorySource({**base, **files}))
    failures = RuleFailures()
    logger = logging.getLogger("rag_lsp.core.checking.analyze")
    logger.addHandler(failures)
    try:
        for relative, kind in FILES.items():
            for finding in analyze_file(workspace, relative, kind):
                assert finding.code.startswith("RAG")
                assert finding.range.start <= finding.range.end
    finally:
        logger.removeHandler(failures)
    # A rule that raised is a bug even though the analysis carried on without it.
    assert not failures.records, [record.getMessage() + str(record.exc_info) for record in failures.records]


YAMLISH = st.text(alphabet=st.sampled_from(list("abc:-[]{},&*!|>'\"#\n\t  0123.~?%@`é😀\r")), max_size=300)
JSONISH = st.text(alphabet=st.sampled_from(list('{}[]":,. abc01-eE\\ntfu\nNaé😀')), max_size=300)
KINDS = st.sampled_from(sorted(FILES))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=KINDS, text=st.one_of(YAMLISH, JSONISH, st.text(max_size=300)))
def test_random_text_never_raises(kind: str, text: str) -> None:
    """Random text in a suite, dataset, manifest or targets file yields findings, never an exception."""
    analyze_all({kind: text.encode("utf-8", "surrogatepass")})


@settings(max_examples=200, deadline=None)
@given(kind=KINDS, data=st.binary(max_size=300))
def test_random_bytes_never_raise(kind: str, data: bytes) -> None:
    """Random bytes (invalid UTF-8, NULs, binary) yield findings, never an exception."""
    analyze_all({kind: data})


@settings(max_examples=200, deadline=None)
@given(prefix=st.integers(0, len(SUITE)), junk=YAMLISH)
def test_mutated_suites_never_raise(prefix: int, junk: str) -> None:
    """A real suite cut anywhere and continued with junk yields findings, never an exception."""
    analyze_all({".punica/evals/code.suite.yaml": (SUITE[:prefix] + junk).encode("utf-8", "surrogatepass")})


@settings(max_examples=200, deadline=None)
@given(prefix=st.integers(0, len(CASE)), junk=JSONISH)
def test_mutated_cases_never_raise(prefix: int, junk: str) -> None:
    """A real case cut anywhere and continued with junk yields findings, never an exception."""
    analyze_all({".punica/evals/code.jsonl": (CASE[:prefix] + junk).encode("utf-8", "surrogatepass")})


def _manifest(name: str) -> dict:
    import yaml

    from rag_lsp.core.reading.resources import builtin_manifest_paths

    return next(yaml.safe_load(path.read_text(encoding="utf-8")) for path in builtin_manifest_paths() if name in path.name)


def _places(node: object, path: tuple = ()) -> list[tuple]:
    """Every place in a parsed document, the document itself first."""
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _places(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _places(value, (*path, index))
    return found


def _replaced(document: object, path: tuple, value: object) -> object:
    import copy

    if not path:
        return value
    document = copy.deepcopy(document)
    node: Any = document
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return document


# The shipped manifests, as a workspace would copy and edit them (same names:
# they replace the built-ins), and suites that use them with a config each.
MANIFESTS = [_manifest("hit_at_k"), _manifest("rag")]
MANIFEST_PLACES = [(index, path) for index, manifest in enumerate(MANIFESTS) for path in _places(manifest)]
USING_SUITE = SUITE + (
    "  - id: hits\n    dataset: .punica/evals/code.jsonl\n    metrics: {rag.hit_at_k: {k: 3, t1: 0.5}}\n"
    "    thresholds: {rag.hit_at_k: 0.5}\n    options: {rag: {k: 2}}\n"
)
ODD_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=5),
                       st.just([]), st.just({}), st.lists(st.none(), max_size=2), st.dictionaries(st.text(max_size=3), st.none(), max_size=2))


@settings(max_examples=400, deadline=None)
@given(place=st.sampled_from(MANIFEST_PLACES), value=ODD_VALUES)
def test_a_manifest_with_any_value_of_another_kind_never_raises(place: tuple[int, tuple], value: object) -> None:
    """A workspace copy of a shipped manifest with one value, at any depth, of another kind (null, a number, a list, ...) yields findings, never an exception: in its own check, nor in those of the suites that use it."""
    import yaml

    index, path = place
    manifest = yaml.safe_dump(_replaced(MANIFESTS[index], path, value), allow_unicode=True)
    analyze_all({".punica/metrics/m.yaml": manifest.encode("utf-8", "surrogatepass"), ".punica/evals/code.suite.yaml": USING_SUITE.encode()})


@pytest.mark.parametrize(
    ("encoding", "named"),
    [("utf-16", "UTF-16LE"), ("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE"), ("utf-32", "UTF-32LE"), ("utf-32-le", "UTF-32LE"), ("utf-32-be", "UTF-32BE")],
)
def test_a_text_in_utf16_or_utf32_is_read_in_its_encoding_and_names_it(encoding: str, named: str) -> None:
    """A JSON text in UTF-16 or UTF-32, with a byte order mark or told by the zero bytes around its first
    character, is read in that encoding, which the text names; UTF-8 names none."""
    text = '{"id": "caf\u00e9"}\n[1]\n'
    read = decode(text.encode(encoding))
    assert read.text == text and read.decode_error is None
    assert read.encoding == named
    assert decode(text.encode("utf-8")).encoding is None and decode(text.encode("utf-8-sig")).encoding is None


def test_bytes_that_start_with_zero_bytes_but_are_no_utf16_text_are_read_as_utf8() -> None:
    """Bytes that begin like UTF-16 but do not start a JSON value, or hold a zero character once read so,
    are no UTF-16 text: they are read as UTF-8, their bad bytes reported."""
    for data in (b"\x00\x01binary\xff\xfe", b"x\x00y\x00\xff", b"\xff\xfe{\x00\x00\x00"):
        read = decode(data)
        assert read.encoding is None, data
