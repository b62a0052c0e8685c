"""A helper process that takes a share of a large dataset's first reading changes
nothing but the time: the findings are exactly those of a check in one process,
whatever the helper does (works, dies, hangs, answers nonsense)."""

from __future__ import annotations

import asyncio
import errno
import json
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import pytest_lsp
from lspclient import (
    SERVER,
    TIMEOUT_S,
    children_of,
    diagnostics,
    open_file,
    server_pid,
    start,
)
from pytest_lsp import LanguageClient
from test_equivalence import SEVERITIES, finding, fresh_check

from rag_lsp.core.checking import incremental, modelrows, parallel, screening
from rag_lsp.core.checking.analyze import analyze_file
from rag_lsp.core.reading.findings import SHOWN_PER_CODE, Finding
from rag_lsp.core.reading.jsonrows import Row
from rag_lsp.core.checking.folding import Occurrences, covered_lines, every_occurrence_fix
from rag_lsp.core.checking.incremental import DatasetModel
from rag_lsp.core.checking.parallel import Helper
from rag_lsp.core.workspace.settings import Settings
from rag_lsp.core.workspace.workspace import Workspace
from rag_lsp.server.base.transport import LARGE_MESSAGE_BYTES

# Slow (starts helper processes): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

DATASET = ".punica/evals/mixed.jsonl"
SUITE = """\
suites:
  - id: mixed
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/mixed.jsonl
    engines: [rag]
    options: {rag: {k: 5}}
    thresholds: {rag.recall: 0.8, rag.mode.semantic: 1}
"""


def case(name: str, relevant: object, **extra: object) -> str:
    row = {"id": name, "input": {"query": f"where is {name}", "topK": 10}, "expect": {"relevant": relevant}}
    row.update(extra)
    return json.dumps(row, ensure_ascii=False)


def row_kinds(number: int) -> list[str]:
    """One of each kind of line the row rules and the reader tell apart."""
    n = number
    return [
        case(f"plain-{n}", ["src/app.py"]),
        # Two ids used twice each on adjacent lines: some batch holds both uses,
        # in the helper's share too.
        case(f"twin-{n}", ["src/app.py"]),
        case(f"twin-{n}", ["src/app.py"]),
        case(f"plain-ünï-{n}", ["docs/guide.md", "src/app.py"]),
        "",
        "   ",
        case(f"crlf-{n}", ["src/app.py"]) + "\r",
        '{"id": "broken-' + str(n) + '", "input": ',
        '{"id": "twice-' + str(n) + '", "id": "twice-again", "input": {"query": "q"}, "expect": {"relevant": ["src/app.py"]}}',
        '{"id": "inner-twice-' + str(n) + '", "input": {"query": "q", "qu\\u00e9ry": 1, "qu\\u00e9ry": 2}, "expect": {"relevant": ["src/app.py"]}}',
        case(f"empty-{n}", []),
        json.dumps({"id": f"none-{n}", "input": {"query": "q"}, "expect": {}}),
        case(f"missing-{n}", ["docs/missing.md"]),
        case(f"unnormal-{n}", ["./src/app.py"]),
        case(f"repeated-{n}", ["src/app.py", "src/app.py"]),
        case("same-id", ["src/app.py"]),  # repeated on every copy of the kinds
        case(f"other-twin-{n}", ["src/app.py"]),
        case(f"other-twin-{n}", ["src/app.py"]),
        json.dumps({"id": f"k-{n}", "input": {"query": "q", "topK": 2}, "expect": {"relevant": ["src/app.py"]}}),
        json.dumps({"input_id": f"gdi-{n}", "prompt": "p", "reference_contexts": ["c"], "sut_response": "r", "retrieved_context": ["c"]}),
        '{"id": "wide-' + str(n) + '", "input": {"query": "q", "seed": 123456789012345678901234567890}, "expect": {"relevant": ["src/app.py"]}}',
        "[1, 2, 3]",
        "7",
        case(f"long-{n}", ["src/app.py"], note="x" * 300),
        # As a tool that writes ASCII writes it: an accent and an emoji as \\u escapes, and a quoted
        # Windows path, before a path not in normal form (its finding's columns count them).
        json.dumps({"id": f"escaped-é-{n}", "input": {"query": 'où est "C:\\\\src" 😀'}, "expect": {"relevant": ["src/app.py", "./docs/guide.md"]}}),
    ]


def mixed_dataset(lines: int) -> str:
    kinds: list[str] = []
    number = 0
    while len(kinds) < lines:
        kinds.extend(row_kinds(number))
        number += 1
    return "\n".join(kinds[:lines]) + "\n"


def make_root(root: Path, text: str) -> Path:
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / ".punica" / "evals" / "mixed.suite.yaml").write_text(SUITE)
    (root / DATASET).write_text(text, encoding="utf-8")
    for name in ("src/app.py", "docs/guide.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("content\n")
    return root


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of 16 lines, and a helper for files of 3 batches or more: the
    sharing of a 100,000-line file, on a few hundred lines."""
    monkeypatch.setattr(incremental, "_CHECK_BATCH", 16)
    monkeypatch.setattr(incremental, "SHARED_FROM_BATCHES", 3)


@pytest.fixture
def shared(small_batches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's own reading waits, from its second batch on, until the helper
    has taken a batch: on a few hundred lines it would otherwise finish before a
    helper process has started."""
    helper_takes_a_batch_first(monkeypatch)


def helper_takes_a_batch_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """See the ``shared`` fixture."""
    stops: list[int] = []
    header = parallel.SharedEnds.header

    def noting_the_stop(start: int, stop: int) -> bytes:
        stops.append(stop)
        return header(start, stop)

    take_front = parallel.SharedEnds.take_front

    def after_the_helper_took_one(ends: parallel.SharedEnds) -> int | None:
        if ends.front > 1:
            deadline = time.monotonic() + TIMEOUT_S
            while ends.back == stops[-1] and time.monotonic() < deadline:
                time.sleep(0.005)
        return take_front(ends)

    monkeypatch.setattr(parallel.SharedEnds, "header", staticmethod(noting_the_stop))
    monkeypatch.setattr(parallel.SharedEnds, "take_front", after_the_helper_took_one)


@pytest.fixture
def helper():
    """A helper as the server starts it: the model's module preloaded and warmed up."""
    helper = Helper(preload=[f"{DatasetModel.__module__}:warm_up"])
    yield helper
    helper.close()


def read_with(root: Path, helper: Helper | None, settings: Settings | None = None) -> tuple[DatasetModel, list, list]:
    """A model read with ``helper``, its findings, and those of a check in one process."""
    text = (root / DATASET).read_text(encoding="utf-8")
    model = DatasetModel(Workspace(root, settings), DATASET, text, helper)
    return model, model.findings(), analyze_file(Workspace(root, settings), DATASET)


@pytest.mark.parametrize(
    "settings",
    [
        None,
        # Rows that are no case at all pass when RAG004 is off; a line too long is refused.
        Settings(severity={"RAG004": "off", "RAG203": "hint"}, max_line_bytes=300),
    ],
    ids=["defaults", "overrides"],
)
def test_findings_with_a_helper_are_those_of_one_process(tmp_path: Path, shared: None, helper: Helper, settings) -> None:
    """Every kind of line, read partly by a helper process, gives the findings of a check in one process."""
    root = make_root(tmp_path, mixed_dataset(700))
    model, found, expected = read_with(root, helper, settings)
    assert model.lines_from_helper > 0  # the helper did take a share
    assert found == expected
    assert len({finding.code for finding in found}) >= 8


def test_a_file_of_few_long_lines_is_read_with_a_helper(tmp_path: Path, helper: Helper, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches end at a number of characters as well as of lines: a file of a few dozen cases listing many
    paths each (fewer lines than one batch holds) is shared with a helper, and gives the findings of one process."""
    monkeypatch.setattr(incremental, "_BATCH_CHARACTERS", 2000)
    monkeypatch.setattr(incremental, "SHARED_FROM_BATCHES", 3)
    helper_takes_a_batch_first(monkeypatch)
    rows = [case(f"long-{n}", [*(f"docs/page-{m}.md" for m in range(40)), f"docs/missing-{n}.md"]) for n in range(30)]
    root = make_root(tmp_path, "\n".join(rows) + "\n")
    for m in range(40):
        (root / "docs" / f"page-{m}.md").write_text("a page\n")
    assert len(rows) < incremental._CHECK_BATCH
    model, found, expected = read_with(root, helper)
    assert model.lines_from_helper > 0
    assert found == expected
    assert sum(1 for finding in found if finding.code == "RAG203") == 30


def test_rows_a_helper_screened_check_again_as_read_ones(tmp_path: Path, shared: None, helper: Helper) -> None:
    """After the workspace changes, lines the helper screened are read again and give the findings of a fresh check."""
    root = make_root(tmp_path, mixed_dataset(400))
    model, found, expected = read_with(root, helper)
    assert model.lines_from_helper > 0
    assert found == expected
    (root / "docs" / "missing.md").write_text("now here\n")
    model.workspace.invalidate()
    assert model.findings() == analyze_file(Workspace(root), DATASET)


def elsewhere_rows(first: int, count: int) -> list[str]:
    """Cases expecting documents of a corpus indexed elsewhere, none a workspace file."""
    return [case(f"kb-{n}", [f"kb/article-{n}.html", f"kb/faq-{n}.html"]) for n in range(first, first + count)]


@pytest.mark.parametrize(
    ("layout", "summarised"),
    [
        # Most expected paths, on every line, are elsewhere.
        ("throughout", True),
        # The first batch holds only workspace paths; the rest of the file is elsewhere.
        ("after-the-first-batch", True),
        # The first batch is all elsewhere; the rest of the file outweighs it with workspace paths.
        ("only-in-the-first-batch", False),
    ],
)
def test_a_corpus_elsewhere_read_with_a_helper_is_summarised_as_in_one_process(
    tmp_path: Path, shared: None, helper: Helper, layout: str, summarised: bool
) -> None:
    """Whether most expected paths are elsewhere (one RAG203 for the file) is decided on the whole
    file, also when a helper screens part of it and the first batch says otherwise."""
    mixed = mixed_dataset(400).splitlines()
    if layout == "throughout":
        lines = [line for pair in zip(mixed, elsewhere_rows(0, 400)) for line in pair]
    elif layout == "after-the-first-batch":
        lines = [case(f"first-{n}", ["src/app.py"]) for n in range(16)] + elsewhere_rows(0, 700)
    else:
        lines = elsewhere_rows(0, 16) + [case(f"app-{n}", ["src/app.py", "docs/guide.md"]) for n in range(400)]
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    model, found, expected = read_with(root, helper)
    assert model.lines_from_helper > 0
    assert found == expected
    missing = [finding for finding in expected if finding.code == "RAG203"]
    assert (len(missing) == 1) == summarised, [finding.message for finding in missing[:3]]
    if summarised:
        assert "are not workspace files" in missing[0].message


def read_with_a_new_helper(root: Path, helper: Helper) -> tuple[DatasetModel, list, list]:
    """read_with ``helper``, a helper made for this reading, closed after it."""
    try:
        return read_with(root, helper)
    finally:
        helper.close()


def use_stand_in(monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    """Helpers started from now on run ``program`` (Python) instead of the helper's own."""
    command = [sys.executable, "-c", program]
    monkeypatch.setattr(parallel._Channel, "command", staticmethod(lambda: command))


def test_a_helper_that_cannot_start_costs_nothing(tmp_path: Path, small_batches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the helper's program cannot be run, the model reads every line itself."""
    monkeypatch.setattr(parallel.sys, "executable", str(tmp_path / "no-such-python"))
    root = make_root(tmp_path, mixed_dataset(300))
    model, found, expected = read_with_a_new_helper(root, Helper())
    assert model.lines_from_helper == 0
    assert found == expected


def test_a_share_that_cannot_be_written_leaves_the_reading_to_the_model(tmp_path: Path, small_batches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the text cannot be written for the helper (a full disk), the model reads every line
    itself, and the share's file is neither left behind nor left open."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(parallel.tempfile, "tempdir", str(folder))

    def disk_full(self: parallel.Share, lines: list[str], batch_lines: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(parallel.Share, "_write_text", disk_full)
    root = make_root(tmp_path / "ws", mixed_dataset(300))
    descriptors = len(list(Path("/proc/self/fd").iterdir()))
    model, found, expected = read_with_a_new_helper(root, Helper())
    assert model.lines_from_helper == 0
    assert found == expected
    assert list(folder.iterdir()) == []
    assert len(list(Path("/proc/self/fd").iterdir())) == descriptors


# Stand-ins for the helper's program: each speaks the channel's framing and takes
# batches from the shared counters (take() maps them from the share's file), then
# misbehaves.
FRAMING = """
import mmap, pickle, struct, sys, time
def read():
    head = sys.stdin.buffer.read(8)
    if len(head) < 8:
        sys.exit(0)
    return pickle.loads(sys.stdin.buffer.read(struct.unpack("<Q", head)[0]))
def write(answer):
    data = pickle.dumps(answer)
    sys.stdout.buffer.write(struct.pack("<Q", len(data)) + data)
    sys.stdout.buffer.flush()
def share():
    global counters
    kind, (path, bounds) = read()
    with open(path, "r+b") as file:
        counters = mmap.mmap(file.fileno(), 16)
    write("read")
    read()  # the job
def take():
    front, back = struct.unpack_from("<qq", counters)
    if back - 1 < front:
        return None
    struct.pack_into("<q", counters, 8, back - 1)
    return back - 1
"""
MISBEHAVING = {
    # Takes a batch, then dies.
    "dies": FRAMING + "share(); take(); sys.exit(3)",
    # Answers every batch it takes with something that is no screening, then a batch it never took.
    "nonsense": FRAMING + "share()\nwhile (i := take()) is not None:\n    write((i, [('rag_case', 5, 'x')] * 3))\nwrite((0, None)); write('done'); read()",
    # Answers each batch with the right number of lines, with codes no line has.
    "wrong": FRAMING + "share()\nwhile (i := take()) is not None:\n    write((i, (bytes([200]) * 16, ['fake'] * 16, bytes(192), {}, {}, {}, {}, {})))\nwrite('done'); read()",
    # Answers each batch with the right number of lines as plain cases, with ids that are no strings.
    "wrong-ids": FRAMING + "share()\nwhile (i := take()) is not None:\n    write((i, (bytes([4]) * 16, [5] * 16, bytes(192), {}, {}, {}, {}, {})))\nwrite('done'); read()",
    # Answers each batch as plain cases, with counts of expected paths for fewer lines than it has.
    "wrong-counts": FRAMING + "share()\nwhile (i := take()) is not None:\n    write((i, (bytes([4]) * 16, ['x'] * 16, bytes(64), {})))\nwrite('done'); read()",
    # Answers each batch as plain cases, with a line's "unfinished findings" that are no findings.
    "wrong-findings": FRAMING + "share()\nwhile (i := take()) is not None:\n    write((i, (bytes([4]) * 16, ['x'] * 16, bytes(128), {0: ['docs/missing.md']})))\nwrite('done'); read()",
    # Answers each batch as plain cases, with "keys a line repeats" that are no names.
    "wrong-repeats": FRAMING + "share()\nwhile (i := take()) is not None:\n    write((i, (bytes([4]) * 16, ['x'] * 16, bytes(192), {}, {}, {}, {0: [1]}, {})))\nwrite('done'); read()",
    # Answers with something that is no batch at all.
    "garbage": FRAMING + "share(); take(); write(('one', []))",
    # Takes a batch and never answers.
    "hangs": FRAMING + "share(); take(); time.sleep(120)",
}


@pytest.mark.parametrize("behaviour", sorted(MISBEHAVING))
def test_a_misbehaving_helper_loses_nothing(tmp_path: Path, shared: None, monkeypatch: pytest.MonkeyPatch, behaviour: str) -> None:
    """A helper that dies, answers nonsense or hangs leaves the model to read those batches itself."""
    monkeypatch.setattr(parallel, "ANSWER_TIMEOUT_S", 1.0)
    use_stand_in(monkeypatch, MISBEHAVING[behaviour])
    root = make_root(tmp_path, mixed_dataset(300))
    helper = Helper()
    try:
        started = time.monotonic()
        model, found, expected = read_with(root, helper)
        pid = helper.pid
    finally:
        helper.close()
    assert model.lines_from_helper == 0
    assert found == expected
    assert time.monotonic() - started < 30
    assert pid is None or not Path(f"/proc/{pid}").exists()


# Takes four batches at once, then answers one every 0.4 s ("look at every line", LOOK):
# together longer than the caller's patience of 1 s, each within it.
SLOW_BUT_STEADY = FRAMING + """
share()
taken = [i for i in (take() for _ in range(4)) if i is not None]
for i in taken:
    time.sleep(0.4)
    write((i, (bytes([1]) * 16, [None] * 16, bytes(192), {}, {}, {}, {}, {})))
write("done"); read(); write("ended")
"""


def test_a_slow_helper_is_waited_for_while_it_answers(tmp_path: Path, shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller gives the helper up only when it has been silent too long, not when its whole share takes long."""
    monkeypatch.setattr(parallel, "ANSWER_TIMEOUT_S", 1.0)
    use_stand_in(monkeypatch, SLOW_BUT_STEADY)
    root = make_root(tmp_path, mixed_dataset(16 * 20 - 1))  # 20 full batches of 16 lines
    model, found, expected = read_with_a_new_helper(root, Helper())
    assert model.lines_from_helper == 4 * 16
    assert found == expected


# Takes one batch and answers it, and answers batch 1 too, which the caller reads itself.
ANSWERS_THE_CALLERS_BATCH = FRAMING + """
share()
i = take()
write((1, (bytes([1]) * 16, [None] * 16, bytes(192), {}, {}, {}, {}, {}))); write((i, (bytes([1]) * 16, [None] * 16, bytes(192), {}, {}, {}, {}, {})))
write("done"); read(); write("ended")
"""


def test_an_answer_for_a_batch_the_caller_read_is_ignored(tmp_path: Path, shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Should both sides take the same batch, the caller keeps its own reading: no line is read twice."""
    use_stand_in(monkeypatch, ANSWERS_THE_CALLERS_BATCH)
    root = make_root(tmp_path, mixed_dataset(16 * 20 - 1))
    model, found, expected = read_with_a_new_helper(root, Helper())
    assert model.lines_from_helper == 16
    assert found == expected


def test_a_reading_that_fails_lets_its_helper_go(tmp_path: Path, small_batches: None, helper: Helper, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the model's own reading fails before the helper's share has begun, the error comes
    out and the thread feeding the helper ends instead of waiting for the share forever."""

    def failing(model: DatasetModel, *args: object) -> None:
        raise RuntimeError("a reading that cannot fail did")

    monkeypatch.setattr(DatasetModel, "_read_batch", failing)
    root = make_root(tmp_path, mixed_dataset(700))
    with pytest.raises(RuntimeError, match="cannot fail"):
        DatasetModel(Workspace(root), DATASET, (root / DATASET).read_text(encoding="utf-8"), helper)
    deadline = time.monotonic() + TIMEOUT_S
    while any(thread.name == "rag-lsp-helper-feed" for thread in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(thread.name == "rag-lsp-helper-feed" for thread in threading.enumerate())


@pytest.mark.parametrize("preload", ["rag_lsp.no_such_module", "rag_lsp.core.checking.incremental:no_such_function", "json:loads"])
def test_a_helper_whose_preload_fails_still_helps(tmp_path: Path, shared: None, preload: str) -> None:
    """A module the helper cannot preload, or a preload function that is missing or fails
    (json.loads without its argument), is logged; the helper still takes its share."""
    root = make_root(tmp_path, mixed_dataset(400))
    model, found, expected = read_with_a_new_helper(root, Helper(preload=[preload]))
    assert model.lines_from_helper > 0
    assert found == expected


@pytest.mark.parametrize("made_ahead", ["same files", "other files", "cannot be made"])
def test_a_helper_makes_the_workspace_files_ahead_of_its_job(tmp_path: Path, shared: None, helper: Helper, made_ahead: str) -> None:
    """A helper sent the workspace's files while it waits makes their index then; a reading with a
    helper gives the findings of one process whether its job's files are those made ahead, others, or
    the preparation could not be made (it is logged, and answered by nothing)."""
    root = make_root(tmp_path, mixed_dataset(700))
    workspace = Workspace(root)
    files = screening.WorkspaceFiles.of(workspace)
    if made_ahead == "other files":
        files = screening.WorkspaceFiles(root, Settings(), [*workspace.files(), "src/gone.py"], frozenset())
    assert helper.channel() is not None
    helper.prepare(files if made_ahead != "cannot be made" else UnmadePreparation())
    model, found, expected = read_with(root, helper)
    assert model.lines_from_helper > 0
    assert found == expected


def test_a_preparation_the_pipe_cannot_take_at_once_is_not_sent(tmp_path: Path, helper: Helper, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller never waits on a helper still starting: a preparation larger than what the pipe
    takes at once (the files of a very large workspace) is not sent, and one within it is."""
    root = make_root(tmp_path, mixed_dataset(40))
    files = screening.WorkspaceFiles.of(Workspace(root))
    channel = helper.channel()
    assert channel is not None and channel.wide
    sent: list[str] = []
    send = channel.send
    monkeypatch.setattr(channel, "send", lambda message: (sent.append(message[0]), send(message)))
    size = len(pickle.dumps(files, pickle.HIGHEST_PROTOCOL))
    monkeypatch.setattr(parallel, "_PIPE_BYTES", size + parallel._FRAMING_BYTES - 1)
    helper.prepare(files)
    assert sent == []
    monkeypatch.setattr(parallel, "_PIPE_BYTES", size + parallel._FRAMING_BYTES)
    helper.prepare(files)
    assert sent == ["prepare"]


class UnmadePreparation:
    """A preparation the helper cannot unpickle: this module is not among its own."""

    def make(self) -> None:
        raise AssertionError("made in the helper")


def test_a_screening_takes_the_workspace_made_ahead_for_its_files_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A screening whose files are those made ahead takes the workspace made (once); one of other
    files, or of other settings, makes its own and leaves it."""
    root = make_root(tmp_path, mixed_dataset(40))
    workspace = Workspace(root)
    use, shape = workspace.dataset_use(DATASET), workspace.dataset_shape(DATASET)
    files = screening.WorkspaceFiles.of(workspace)
    made = files.make()
    made_anew: list[screening.WorkspaceFiles] = []
    workspace_of = screening.WorkspaceFiles.workspace

    def noted(self: screening.WorkspaceFiles) -> Workspace:
        made_anew.append(self)
        return workspace_of(self)

    monkeypatch.setattr(screening.WorkspaceFiles, "workspace", noted)
    monkeypatch.setattr(parallel, "_made_ahead", (files, made))
    other_files = screening.Screening(screening.WorkspaceFiles(root, Settings(), workspace.files()[:-1], files.not_normal_files), DATASET, use, shape)
    other_settings = screening.Screening(
        screening.WorkspaceFiles(root, Settings(max_line_bytes=300), workspace.files(), files.not_normal_files), DATASET, use, shape
    )
    same = screening.Screening(screening.WorkspaceFiles(root, Settings(), workspace.files(), files.not_normal_files), DATASET, use, shape)
    for job in (other_files, other_settings):
        job.start()
    assert len(made_anew) == 2 and parallel._made_ahead == (files, made)
    same.start()
    assert len(made_anew) == 2 and parallel._made_ahead is None
    same.start()  # taken once: a second job makes its own
    assert len(made_anew) == 3


@pytest.mark.parametrize(
    ("warm_up", "loaded"),
    [("warm_up", "['jsonschema', 'jsonschema_rs', 'rapidfuzz']"), ("warm_up_rows", "['jsonschema_rs']")],
)
def test_warming_up_prepares_what_a_first_screening_loads(warm_up: str, loaded: str) -> None:
    """A fresh process that preloads the model's warm_up has compiled the row schemas and loaded the
    schema explainer and the fuzzy matcher, which a batch with an invalid row or a misspelt key would
    otherwise load; one that reads a single dataset (warm_up_rows) leaves those to the first row that
    needs them."""
    code = (
        "import sys; from rag_lsp.core.checking.parallel import _preload; "
        "names = {'jsonschema', 'jsonschema_rs', 'rapidfuzz'}; before = names & set(sys.modules); "
        f"_preload('rag_lsp.core.checking.screening:{warm_up}'); "
        "from rag_lsp.core.reading.schemacheck import validator_for; "
        "print(sorted(before), validator_for.cache_info().currsize > 0, sorted(names & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S, check=True)
    assert done.stdout.strip() == f"[] True {loaded}"


def test_close_ends_the_helper(tmp_path: Path, shared: None) -> None:
    """A helper kept between readings ends when it is closed."""
    root = make_root(tmp_path, mixed_dataset(200))
    helper = Helper()
    read_with(root, helper)
    read_with(root, helper)  # the same process serves the next reading
    pid = helper.pid
    assert pid is not None
    assert Path(f"/proc/{pid}").exists()
    helper.close()
    assert helper.pid is None
    assert not Path(f"/proc/{pid}").exists()


# ---------------------------------------------------------------- through the command line


def checked_by_the_command_line(root: Path) -> tuple[dict[str, list], Workspace, str]:
    """What `rag-lsp check` finds in the workspace at ``root``, by file; the workspace it checked; and
    what `--format json` prints."""
    from rag_lsp.cli.check import check_paths
    from rag_lsp.cli.formats import format_json

    checked = check_paths([root])
    return {relative: findings for _, relative, findings in checked.files}, checked.files[0][0], format_json(checked)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Helper]:
    """The helpers `rag-lsp check` makes, as it makes them."""
    from rag_lsp.core.checking import analysis

    made: list[Helper] = []
    reading_helper = analysis.reading_helper

    def noted() -> Helper | None:
        helper = reading_helper()
        made.append(helper)
        return helper

    monkeypatch.setattr(analysis, "reading_helper", noted)
    return made


@pytest.mark.skipif(parallel.cores() < 2, reason="a check starts a helper only with a core to spare")
def test_the_command_line_reads_a_large_dataset_with_a_helper(
    tmp_path: Path, shared: None, monkeypatch: pytest.MonkeyPatch, started: list[Helper]
) -> None:
    """`rag-lsp check` reads a large dataset with a helper process and finds in it, and in the suite
    that reads it, what a check in one process finds; the helper ends with the check."""
    from rag_lsp.core.checking import analysis

    # A character outside the BMP before a finding: its column differs in UTF-16.
    root = make_root(tmp_path, mixed_dataset(700) + case("party-🎉", []) + "\n")
    monkeypatch.setattr(analysis, "SHARED_FROM_BYTES", 1)
    found, workspace, printed = checked_by_the_command_line(root)
    assert workspace.live_datasets[DATASET].lines_from_helper > 0  # the helper did take a share
    one_process = Workspace.configured(root)
    assert found == {relative: analyze_file(one_process, relative) for relative in found}
    # Placed on the lines the model holds, the findings print as a check in one process prints them.
    monkeypatch.setattr(analysis, "SHARED_FROM_BYTES", float("inf"))
    assert printed == checked_by_the_command_line(root)[2]
    assert set(found) == {DATASET, ".punica/evals/mixed.suite.yaml"}
    assert len({finding.code for finding in found[DATASET]}) >= 8
    assert started and started[0].pid is None  # closed


@pytest.mark.skipif(parallel.cores() < 2, reason="a check starts a helper only with a core to spare")
def test_the_command_line_starts_a_helper_ahead_only_where_a_large_dataset_may_be(tmp_path: Path, started: list[Helper]) -> None:
    """A check of a folder starts a helper before listing it and stops it once no dataset there is
    large, with the findings of a check in one process; a small file named alone starts none."""
    from rag_lsp.cli import check

    root = make_root(tmp_path, mixed_dataset(40))
    found, _, _ = checked_by_the_command_line(root)
    assert len(started) == 1 and started[0].pid is None
    assert started[0].share(["{}"], 0, 1, [0]) is None  # stopped for good
    assert found[DATASET] == analyze_file(Workspace.configured(root), DATASET)
    assert check.check_paths([root / DATASET]).files
    assert len(started) == 1  # none for the small file


def test_the_command_line_reads_a_dataset_with_bytes_that_are_not_utf8_in_one_process(
    tmp_path: Path, small_batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large dataset with a byte that is not UTF-8 is read as a check in one process reads it: the
    line holding the byte gets its RAG002 and the other lines are checked."""
    from rag_lsp.core.checking import analysis

    root = make_root(tmp_path, mixed_dataset(300))
    data = (root / DATASET).read_bytes().replace(b"plain-5", b"plain-\xff5", 1)
    (root / DATASET).write_bytes(data)
    monkeypatch.setattr(analysis, "SHARED_FROM_BYTES", 1)
    found, _, _ = checked_by_the_command_line(root)
    assert found[DATASET] == analyze_file(Workspace.configured(root), DATASET)
    assert any(finding.code == "RAG002" and "UTF-8" in finding.message for finding in found[DATASET])


# ---------------------------------------------------------------- through the server


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    if not getattr(lsp_client, "ended", False):
        await lsp_client.shutdown_session()


def helpers_below(pid: int) -> list[int]:
    return [child for child in children_of(pid) if b"rag_lsp.core.checking.parallel" in Path(f"/proc/{child}/cmdline").read_bytes()]


@pytest.mark.skipif(parallel.cores() < 2, reason="the server starts a helper only with a core to spare")
async def test_server_reads_a_large_dataset_with_a_helper(client: LanguageClient, tmp_path: Path) -> None:
    """A large dataset opened in the server (its didOpen large enough to be read straight into its
    lines, escapes, accents and emoji included) is read with a helper process, gives the diagnostics
    of `rag-lsp check`, and its helper ends when the server shuts down."""
    lines = incremental._CHECK_BATCH * (incremental.SHARED_FROM_BATCHES + 1)
    root = make_root(tmp_path, mixed_dataset(lines))
    assert (root / DATASET).stat().st_size >= LARGE_MESSAGE_BYTES
    await start(client, root)
    uri = open_file(client, root / DATASET)
    published = await diagnostics(client, uri, 1)
    server = server_pid()
    assert helpers_below(server), "no helper process was started"
    expected = fresh_check(root, {DATASET: (root / DATASET).read_text(encoding="utf-8")}, SHOWN_PER_CODE)[DATASET]
    assert sorted(
        finding(str(d.code), (d.range.start.line, d.range.start.character), (d.range.end.line, d.range.end.character), SEVERITIES[int(d.severity or 1)], d.message)
        for d in published
    ) == expected
    await asyncio.wait_for(client.shutdown_async(None), TIMEOUT_S)
    assert helpers_below(server) == []
    client.exit(None)
    client.ended = True  # type: ignore[attr-defined]


def first_lines(path: Path, count: int) -> memoryview:
    """The UTF-8 of a file's first ``count`` lines, as a helper is given a batch."""
    return memoryview(b"\n".join(path.read_bytes().split(b"\n")[:count]))


def test_a_screening_leaves_the_did_you_mean_to_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper's screening passes a line whose only finding is a missing path with that finding
    unfinished, without looking for the closest workspace file: the model, which finishes it, does."""
    from rag_lsp.core.checking.rules import rag203_missing_expected_path as rag203

    looked_for: list[str] = []
    problem = rag203._problem
    monkeypatch.setattr(rag203, "_problem", lambda workspace, value, normal: looked_for.append(value) or problem(workspace, value, normal))
    root = make_root(tmp_path, mixed_dataset(40))
    workspace = Workspace(root)
    job = screening.Screening(
        screening.WorkspaceFiles.of(workspace), DATASET, workspace.dataset_use(DATASET), workspace.dataset_shape(DATASET)
    )
    codes, _, _, unfinished, _, _, _, _ = screening.received(job.start()(0, first_lines(root / DATASET, 16)))
    assert unfinished
    assert {finding.unfinished for found in unfinished.values() for finding in found if finding.code == "RAG203"} == {"docs/missing.md"}
    assert all(codes[number] not in (modelrows.BLANK, modelrows.LOOK) for number in unfinished)
    assert looked_for == []
    model = DatasetModel(Workspace(root), DATASET, (root / DATASET).read_text(encoding="utf-8"))
    assert any(finding.code == "RAG203" and "docs/missing.md" in finding.message for finding in model.findings())
    assert looked_for == ["docs/missing.md"]


def test_a_screening_for_every_finding_finishes_them(tmp_path: Path) -> None:
    """When every finding is asked for (a check from the command line), a helper's screening finishes
    the missing-path findings of its plain lines itself, with the message a check in one process gives."""
    root = make_root(tmp_path, mixed_dataset(40))
    workspace = Workspace(root)
    use, shape = workspace.dataset_use(DATASET), workspace.dataset_shape(DATASET)
    job = screening.Screening(screening.WorkspaceFiles.of(workspace), DATASET, use, shape, finish=True)
    codes, _, _, found, _, _, _, _ = screening.received(job.start()(0, first_lines(root / DATASET, 16)))
    assert found and all(codes[number] not in (modelrows.BLANK, modelrows.LOOK) for number in found)
    finished = [finding for findings in found.values() for finding in findings if finding.code == "RAG203"]
    assert finished and {finding.unfinished for finding in finished} == {None}
    expected = {finding.range.start.line: finding for finding in analyze_file(Workspace(root), DATASET) if finding.code == "RAG203"}
    assert all(finding == expected[finding.range.start.line] for finding in finished)


def test_a_screening_for_every_finding_passes_lines_that_repeat_a_missing_path(tmp_path: Path) -> None:
    """A path a screening for every finding has already looked into is finished as it is found again, in a
    later batch: the line repeating it is plain all the same (the model does not read it again), and its
    finding is the one a check in one process gives."""
    lines = [case(f"c{n}", ["src/app.py", "docs/gone.md" if n % 2 else f"docs/gone-{n}.md"]) for n in range(8)]
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    workspace = Workspace(root)
    use, shape = workspace.dataset_use(DATASET), workspace.dataset_shape(DATASET)
    screen = screening.Screening(screening.WorkspaceFiles.of(workspace), DATASET, use, shape, finish=True).start()
    screen(0, memoryview("\n".join(lines[:4]).encode()))
    codes, _, _, found, _, _, _, _ = screening.received(screen(1, memoryview("\n".join(lines[4:]).encode())))
    assert modelrows.LOOK not in codes
    assert sorted(found) == [0, 1, 2, 3]
    expected = {finding.range.start.line: finding for finding in analyze_file(Workspace(root), DATASET) if finding.code == "RAG203"}
    assert all(finding.moved(4) == expected[number + 4] for number, findings in found.items() for finding in findings)
    assert "did you mean" in found[1][0].message


def test_a_screening_answers_for_lines_that_are_not_json(tmp_path: Path) -> None:
    """A line that is not JSON is answered for with where and why it is not, as reading it in one process
    says: a dataset written by another tool may hold no line of JSON, and the model must not read them all again."""
    lines = [repr({"id": f"c{n}", "expect": {"relevant": ["src/app.py"]}}) for n in range(3)] + ['{"id": "cut', case("fine", ["src/app.py"])]
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    workspace = Workspace(root)
    codes, _, _, found, _, _, _, errors = screening.screen_batch(workspace, DATASET, workspace.dataset_use(DATASET), None, lines)
    assert list(codes[:4]) == [modelrows.NOT_JSON] * 4 and codes[4] in modelrows.PLAIN
    assert errors == {number: Row(line).error for number, line in enumerate(lines[:4])}
    assert sorted(found) == [0, 1, 2, 3] and all(finding.code == "RAG002" for findings in found.values() for finding in findings)


def test_a_screening_passes_lines_with_findings_made_on_the_lines_of_the_file(tmp_path: Path) -> None:
    """A line whose findings are any row rule's (a path written from `./`, a key of another tool) is plain
    all the same: a dataset written by another tool has one on every row, and the model must not read
    them all again. The findings come made on the lines of the file, as a check in one process gives."""
    lines = [json.dumps({"id": f"c{n}", "source": "export", "input": {"query": "q"}, "expect": {"relevant": ["./src/app.py"]}}) for n in range(8)]
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    workspace = Workspace(root)
    use, shape = workspace.dataset_use(DATASET), workspace.dataset_shape(DATASET)
    screen = screening.Screening(
        screening.WorkspaceFiles.of(workspace), DATASET, use, shape, finish=True, batch_starts=(0, 4)
    ).start()
    codes, _, _, found, _, _, _, _ = screening.received(screen(1, memoryview("\n".join(lines[4:]).encode())))
    assert modelrows.LOOK not in codes and sorted(found) == [0, 1, 2, 3]
    expected = [finding for finding in analyze_file(Workspace(root), DATASET) if finding.range.start.line >= 4]
    assert {finding.code for finding in expected} == {"RAG004", "RAG206"}
    assert sorted((finding for findings in found.values() for finding in findings), key=Finding.sort_key) == expected


@pytest.mark.skipif(parallel.cores() < 2, reason="the helper needs a core to spare")
def test_a_model_asked_for_every_finding_leaves_the_helpers_lines_to_the_helper(
    tmp_path: Path, shared: None, helper: Helper, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model read for every finding finishes only the missing paths of the lines it read itself (the
    helper finished those of its lines), and its findings are those of one process."""
    from rag_lsp.core.checking.rules import rag203_missing_expected_path as rag203

    # A different missing path on every line (each is looked for once: the workspace keeps what it
    # found), beside two workspace files (most expected paths are in the workspace).
    lines = (case(f"gone-{n}", ["src/app.py", "docs/guide.md", f"docs/gone-{n}.md"]) for n in range(700))
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    expected = analyze_file(Workspace(root), DATASET)
    looked_for: list[str] = []
    problem = rag203._problem
    monkeypatch.setattr(rag203, "_problem", lambda workspace, value, normal: looked_for.append(value) or problem(workspace, value, normal))
    text = (root / DATASET).read_text(encoding="utf-8")
    model = DatasetModel(Workspace(root), DATASET, text, helper, every_finding=True)
    assert model.lines_from_helper > 0
    assert model.findings() == expected
    assert sum(1 for finding in expected if finding.code == "RAG203") == 700
    # Every line the helper did not read, and no other, had its missing path looked for here (the
    # helper's share, at the end of the file, holds its last line, which is blank).
    assert 0 < len(looked_for) == len(model.lines) - model.lines_from_helper


SYSTEMIC_DEFECTS = {
    # Every expected path written from `./` (one RAG206 per path, two on some rows).
    "dot-slash": lambda n: case(f"dot-{n}", ["./src/app.py"] + (["./docs/guide.md"] if n % 3 else [])),
    # Every expected path written with `\`, as Windows writes paths, one of them missing on some rows.
    "backslash": lambda n: case(f"back-{n}", ["src\\app.py"] + (["docs\\missing.md"] if n % 7 == 0 else [])),
    # A key of the exporting tool on every row (RAG004, one per row).
    "extra-key": lambda n: case(f"key-{n}", ["src/app.py"], source="export"),
    # Both at once, on a row with more to say (a missing path).
    "both": lambda n: case(f"both-{n}", ["./src/app.py", "docs/missing.md"], source="export"),
    # Ids written as numbers, `relevant` as one string (RAG004, a wrong type on every row).
    "numeric-id": lambda n: json.dumps({"id": n, "input": {"query": f"q{n}"}, "expect": {"relevant": ["src/app.py"]}}),
    "relevant-string": lambda n: json.dumps({"id": f"s-{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": "src/app.py"}}),
    # Rows of nothing (RAG004's missing keys, two per row, and RAG201's missing expect).
    "empty-object": lambda n: "{}",
    # Cases asking for a corpus the builtin target does not serve, and for fewer hits than the suite's k.
    "unserved-corpus": lambda n: json.dumps({"id": f"u-{n}", "input": {"query": f"q{n}", "corpora": ["issues"], "topK": 3}, "expect": {"relevant": ["src/app.py"]}}),
    # Rows missing their id, some with a key of their own too.
    "missing-id": lambda n: json.dumps({"input": {"query": f"q{n}"}, "expect": {"relevant": ["src/app.py"]}, **({"x": 1} if n % 4 == 0 else {})}),
    # Grades written as fractions: a wrong type under keys of the row's own, one per grade (two on some rows).
    "fraction-grades": lambda n: json.dumps(
        {"id": f"g-{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": ["src/app.py"], "grades": {"src/app.py": 1.5, **({"docs/guide.md": 0.5} if n % 3 else {})}}}
    ),
    # Expected values written as objects: a wrong type at each element of the list.
    "object-relevant": lambda n: json.dumps({"id": f"o-{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": [{"path": "src/app.py"}]}}),
    # Every case asking for no corpus at all (`corpora: []`), which the builtin target refuses.
    "no-corpora": lambda n: json.dumps({"id": f"c-{n}", "input": {"query": f"q{n}", "corpora": []}, "expect": {"relevant": ["src/app.py"]}}),
    # Every case listing its first expected value twice.
    "repeat": lambda n: case(f"rep-{n}", ["src/app.py", "docs/guide.md", "src/app.py"]),
    # Rows that are no JSON at all: printed as Python values, or with a comma after each.
    "python-values": lambda n: repr({"id": f"p-{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": ["src/app.py"]}}),
    "comma-after": lambda n: case(f"comma-{n}", ["src/app.py"]) + ",",
    # Every row encoded twice: a JSON string holding the row's object.
    "encoded-twice": lambda n: json.dumps(case(f"enc-{n}", ["src/app.py"])),
    # Every case expecting a workspace file and a document of a corpus that lives elsewhere.
    "partly-elsewhere": lambda n: case(f"pe-{n}", ["src/app.py", f"kb/{n}.html"]),
    # Rows that write a key twice, as a tool exporting a field of its own under the row's name does.
    "key-twice": lambda n: f'{{"id": "export", "id": "k2-{n}", "input": {{"query": "q{n}"}}, "expect": {{"relevant": ["src/app.py"]}}}}',
}


@pytest.mark.parametrize("defect", sorted(SYSTEMIC_DEFECTS))
def test_a_cause_on_most_rows_is_counted_past_the_first_batch_and_made_when_read(
    tmp_path: Path, shared: None, helper: Helper, monkeypatch: pytest.MonkeyPatch, defect: str
) -> None:
    """A cause standing on most rows of the first batch is presumed to stand on most rows of the file:
    past that batch, on the helper's lines and the model's, its occurrences are only counted. The folded
    finding then covers them all, made when read, and equals a check in one process, members, lines and
    the edits of its fix of every occurrence included; the rows that break the pattern keep their own."""
    monkeypatch.setattr(incremental, "_CHECK_BATCH", 32)  # a first batch large enough to fold in
    write = SYSTEMIC_DEFECTS[defect]
    lines = [write(n) if n % 10 else case(f"fine-{n}", ["src/app.py"]) for n in range(640)]
    lines[500:510] = mixed_dataset(10).splitlines()
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    model, found, expected = read_with(root, helper)
    assert model.lines_from_helper > 0
    assert model._systemic  # the occurrences past the first batch were counted, not made
    folded = [finding for finding in found if finding.covers]
    assert folded and all(isinstance(finding.covers, Occurrences) for finding in folded)
    assert found == expected
    # What the dataset's suites read of it, counted as lines are read (by the helper too), as a fresh count has it.
    fresh = Workspace(root)
    assert model.corpora_asked() == fresh.corpora_asked(DATASET)
    assert model.top_ks_asked() == fresh.top_ks_asked(DATASET)
    for mine, theirs in zip(folded, [finding for finding in expected if finding.covers]):
        assert covered_lines(mine.covers) == covered_lines(theirs.covers)
        assert [every_occurrence_fix(mine, fix) for fix in mine.fixes] == [every_occurrence_fix(theirs, fix) for fix in theirs.fixes]


def test_a_row_lacking_a_key_most_rows_write_with_a_wrong_type_keeps_its_missing_key(
    tmp_path: Path, shared: None, helper: Helper, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ids written as numbers and `relevant` as one string on most rows (two causes set aside), a row
    without an id at all still says its id is missing: taking out one wrong value does not excuse another
    key's absence."""
    monkeypatch.setattr(incremental, "_CHECK_BATCH", 32)
    lines = [json.dumps({"id": n, "input": {"query": f"q{n}"}, "expect": {"relevant": "src/app.py"}}) for n in range(640)]
    lines[500] = json.dumps({"input": {"query": "q"}, "expect": {"relevant": "src/app.py"}})
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    model, found, expected = read_with(root, helper)
    assert model._systemic
    assert found == expected
    assert [(finding.range.start.line, finding.message) for finding in found if not finding.covers] == [(500, "missing required key 'id'")]


GDI_SUITE = """\
suites:
  - id: gdi
    dataset: .punica/evals/mixed.jsonl
    metrics: {rag.hit_at_k: {k: 5}}
"""


def gdi_row(n: int, **changed) -> str:
    return json.dumps(
        {"input_id": f"g-{n}", "prompt": f"q{n}", "reference_contexts": [f"ref {n}"], "sut_response": "r", "retrieved_context": [f"chunk {n}"], **changed}
    )


# gdi rows as other evaluation tools write them, one cause on every row.
GDI_DEFECTS = {
    # A task type of the tool's own (RAG004, a string the schema's enum does not list).
    "task-type": lambda n: gdi_row(n, task_type="rag"),
    # The prompt as a list of strings (RAG004, no branch of the prompt's oneOf fits).
    "prompt-list": lambda n: gdi_row(n, prompt=[f"q{n}"]),
    # The prompt as turns without a role (RAG004, a key missing in each element of a list).
    "turns-without-role": lambda n: gdi_row(n, prompt=[{"content": f"q{n}"}, {"content": "more"}]),
}


@pytest.mark.parametrize("defect", sorted(GDI_DEFECTS))
def test_a_cause_on_most_gdi_rows_is_counted_past_the_first_batch_and_made_when_read(
    tmp_path: Path, shared: None, helper: Helper, monkeypatch: pytest.MonkeyPatch, defect: str
) -> None:
    """A defect another tool writes on most gdi rows is one folded RAG004, its occurrences counted past the
    first batch, equal to a check in one process; a row whose task type is no string at all keeps its own."""
    monkeypatch.setattr(incremental, "_CHECK_BATCH", 32)
    write = GDI_DEFECTS[defect]
    lines = [write(n) if n % 10 else gdi_row(n) for n in range(640)]
    lines[500] = gdi_row(500, task_type=5)
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    (root / ".punica" / "evals" / "mixed.suite.yaml").write_text(GDI_SUITE)
    model, found, expected = read_with(root, helper)
    assert model.lines_from_helper > 0
    assert model._systemic
    (folded,) = [finding for finding in found if finding.covers]
    assert folded.code == "RAG004" and isinstance(folded.covers, Occurrences)
    assert found == expected
    lines_covered = covered_lines(folded.covers)
    assert lines_covered == covered_lines([finding for finding in expected if finding.covers][0].covers)
    assert set(lines_covered) - {500} == {n for n in range(640) if n % 10}
    own = [finding for finding in found if not finding.covers]
    assert {finding.range.start.line for finding in own} == {500}
    assert "expected a string, got 5" in [finding.message for finding in own]


def test_an_answer_whose_findings_are_not_what_a_screening_sends_is_refused(tmp_path: Path) -> None:
    """Findings cross the pipe as plain values: an answer holding anything else in their place (a helper
    answering nonsense) is not read, so the caller checks that batch itself."""
    lines = [case(f"c{n}", ["src/app.py", f"docs/gone-{n}.md"]) for n in range(4)]
    root = make_root(tmp_path, "\n".join(lines) + "\n")
    workspace = Workspace(root)
    job = screening.Screening(screening.WorkspaceFiles.of(workspace), DATASET, workspace.dataset_use(DATASET), workspace.dataset_shape(DATASET), finish=True)
    answer = job.start()(0, memoryview("\n".join(lines).encode()))
    assert screening.is_answer(screening.received(answer), 4, DATASET, 0)
    codes, kept, counts, findings, passed, corpora, repeated, errors = answer
    for nonsense in ({0: [("RAG203",)]}, {0: [("RAG203", 9, (0, 0, 0, 1), "m", DATASET, (), None, None)]}, [1]):
        assert not screening.is_answer(screening.received((codes, kept, counts, nonsense, passed, corpora, repeated, errors)), 4, DATASET, 0)
    assert screening.received(("not", "an", "answer")) is None
