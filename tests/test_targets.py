"""Targets of SPEC §2.5: builtin BM25 (its keyword retrieval), command, http and recorded; every failure a RAG405 message."""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import bm25s
import pytest

from rag_lsp.core.workspace.settings import Settings
from rag_lsp.core.running.targets import Answer, Request, TargetError, TargetPool, open_target
from rag_lsp.core.search.keyword import Analyzer, KeywordIndex
from rag_lsp.core.workspace.suitefacts import target_info
from rag_lsp.core.workspace.workspace import Workspace
from workspaces import write_files


def answers(target, *requests: Request) -> list[Answer | TargetError]:
    found = dict(target.answer_many(list(requests)))
    return [found[index] for index in range(len(requests))]


def ask(query: str, case_id: str = "c", **extra) -> Request:
    return Request(case_id, {"query": query, **extra})


# ---------------------------------------------------------------- builtin


@pytest.fixture
def code_workspace(tmp_path: Path) -> Workspace:
    files = {
        "src/gateway.ts": "// The gateway decides each approval: quorum of approvers, risk tier, deny list.\n"
        "export function decideApproval(request) { return policy.quorumFor(request.riskTier); }\n",
        "src/rateLimit.ts": "// Token bucket per tenant: burst capacity and refill rate.\nexport class RateLimiter {}\n",
        "docs/deploy.md": "# Deploy\n\nRolling deploy with a readiness probe and graceful shutdown.\n",
        "docs/approvals.md": "# Approvals\n\nHow approvers sign a pending request until the quorum is reached.\n",
        ".punica/evals/code.jsonl": '{"id": "a", "input": {"query": "approval quorum approval quorum"}}\n',
        ".hidden/notes.md": "approval quorum approval quorum approval quorum\n",
        "node_modules/pkg/index.js": "approval quorum approval quorum\n",
        "ignored/out.txt": "approval quorum approval quorum\n",
        ".gitignore": "ignored/\n",
    }
    write_files(tmp_path, files)
    (tmp_path / "src" / "blob.bin").write_bytes(b"approval quorum\x00\x01\x02" * 10)
    return Workspace(tmp_path)


def builtin(workspace: Workspace, config: dict | None = None):
    # These are the tests of its keyword search (BM25); tests/test_semantic.py has those of the others.
    return open_target(target_info("vectors.query", {"builtin": {"retrieval": "keyword", **(config or {})}}), workspace, 5.0)


def test_builtin_ranks_the_right_file_first(code_workspace: Workspace) -> None:
    """BM25 ranks the file that talks about the query first; hits carry path, id, corpus, score and text; mode keyword."""
    (answer,) = answers(builtin(code_workspace), ask("how does the gateway decide an approval quorum"))
    assert isinstance(answer, Answer) and answer.mode == "keyword"
    first = answer.hits[0]
    assert first.path == "src/gateway.ts" and first.id == "src/gateway.ts#L1-2" and first.corpus == "code"
    assert first.score > 0 and "approval" in first.text
    scores = [hit.score for hit in answer.hits]
    assert scores == sorted(scores, reverse=True)


def test_builtin_splits_identifiers_and_stems(code_workspace: Workspace) -> None:
    """`rateLimit.ts` is found first by "rate limits": identifiers split into words, words stemmed."""
    (answer,) = answers(builtin(code_workspace), ask("rate limits for a tenant"))
    assert answer.hits[0].path == "src/rateLimit.ts"


def test_builtin_skips_punica_hidden_dependency_ignored_and_binary_files(code_workspace: Workspace) -> None:
    """Only workspace text files are searched: not .punica/, hidden, node_modules, git-ignored or binary files."""
    (answer,) = answers(builtin(code_workspace), ask("approval quorum", topK=50))
    paths = {hit.path for hit in answer.hits}
    assert paths and paths <= {"src/gateway.ts", "docs/approvals.md", "src/rateLimit.ts", "docs/deploy.md"}


def test_builtin_corpora_topk_and_unknown_corpus(code_workspace: Workspace) -> None:
    """Configured corpora are searched as input.corpora asks, topK bounds the hits, an unknown corpus is a RAG405."""
    target = builtin(code_workspace, {"corpora": {"code": ["src/**"], "docs": ["docs/**"]}})
    docs_only, one, unknown = answers(
        target,
        ask("approval quorum", corpora=["docs"]),
        ask("approval quorum", topK=1),
        ask("approval quorum", corpora=["tickets"]),
    )
    assert docs_only.hits and all(hit.corpus == "docs" and hit.path.startswith("docs/") for hit in docs_only.hits)
    assert len(one.hits) == 1
    assert isinstance(unknown, TargetError) and "no corpus 'tickets'" in unknown.message and "code, docs" in unknown.message


def test_builtin_refuses_an_input_without_query(code_workspace: Workspace) -> None:
    """An input without a query string is a RAG405 with a clear message, not a crash."""
    (failure,) = answers(builtin(code_workspace), Request("c", {"corpora": ["code"]}))
    assert isinstance(failure, TargetError) and "input.query" in failure.message


def test_builtin_index_is_rebuilt_when_a_file_changes(code_workspace: Workspace) -> None:
    """A word added to a file after the index was built is found by the next run."""
    target = builtin(code_workspace)
    (before,) = answers(target, ask("zeppelin"))
    assert before.hits == []
    (code_workspace.root / "docs" / "deploy.md").write_text("# Deploy\n\nThe zeppelin rollout.\n", encoding="utf-8")
    (after,) = answers(target, ask("zeppelin"))
    assert [hit.path for hit in after.hits] == ["docs/deploy.md"]


def test_builtin_index_is_kept_while_files_do_not_change(code_workspace: Workspace) -> None:
    """A second run over unchanged files reuses the index it built."""
    target = builtin(code_workspace)
    answers(target, ask("approval"))
    built = target._state.index
    answers(target, ask("deploy"))
    assert target._state.index is built


def test_keyword_scores_are_those_of_bm25s_to_the_last_bit() -> None:
    """Each chunk's keyword score is the one bm25s gives it, bit for bit: for terms found in most chunks and in
    few, a term said twice, and words no chunk holds."""
    texts = [
        f"token bucket refill {'tenant ' * (n % 3)}{'quorum approval ' if n % 4 == 0 else ''}rare{n} note{n % 7}"
        for n in range(60)
    ]
    analyzer = Analyzer()
    index = KeywordIndex(texts, analyzer)
    retriever = bm25s.BM25()
    retriever.index([analyzer.terms(text) for text in texts], show_progress=False)
    for query in ["token bucket", "quorum tenant tenant rare7", "note3 approval refill", "rare12", "zeppelin airship"]:
        expected = retriever.get_scores(analyzer.terms(query))
        found = index.scores(index.query_terms(query))
        assert found.dtype == expected.dtype and found.tobytes() == expected.tobytes(), query


def test_a_keyword_run_ranks_its_cases_together_as_each_case_alone(code_workspace: Workspace) -> None:
    """A keyword run ranks its cases a block at a time, and each case gets the hits, order and scores it gets
    asked alone: over the whole index, over one corpus of part of it, with no known word, or no query."""
    target = builtin(code_workspace, {"corpora": {"code": ["**"], "docs": ["docs/**"]}})
    requests = [
        ask("approval quorum", "a"),
        ask("rate limits for a tenant", "b", topK=2),
        ask("zeppelin", "c"),
        ask("deploy probe approvers", "d", corpora=["docs"]),
        ask("   ", "e"),
        ask("approval deploy rate", "f", topK=1),
        ask("approval deploy rate", "g", corpora=["docs", "code"]),
    ]
    ran = answers(target, *requests)
    assert [len(answer.hits) for answer in ran if isinstance(answer, Answer)] == [2, 1, 0, 2, 1, 4]
    for request, answer in zip(requests, ran):
        if isinstance(answer, TargetError):
            with pytest.raises(TargetError):
                target.answer(request)
            continue
        alone = target.answer(request)
        assert [(hit.id, hit.score, hit.corpus) for hit in answer.hits] == [(hit.id, hit.score, hit.corpus) for hit in alone.hits]


# ---------------------------------------------------------------- command

SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    for line in sys.stdin:
        query = json.loads(line).get("query", "")
        if query == "die":
            print("dying on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        if query == "hang":
            time.sleep(120)
        if query == "die-leaving-a-child":
            import subprocess
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            print("dying, my child lives on", file=sys.stderr, flush=True)
            os._exit(4)
        if query == "garbage":
            print("Traceback (most recent call last): oops", flush=True)
            continue
        if query == "shape":
            print(json.dumps({"hits": "nope"}), flush=True)
            continue
        if query == "error":
            print(json.dumps({"error": "index not built"}), flush=True)
            continue
        if query == "flood":
            sys.stdout.write("x" * 100000)
            sys.stdout.flush()
            continue
        if query == "twice":
            first = json.dumps({"hits": [], "mode": "semantic"})
            second = json.dumps({"hits": [{"path": "stale"}], "mode": "semantic"})
            sys.stdout.write(first + "\\n" + second + "\\n")
            sys.stdout.flush()
            continue
        print(json.dumps({"hits": [{"path": query, "id": str(os.getpid())}], "mode": "semantic"}), flush=True)
    """
)


@pytest.fixture
def command_target(tmp_path: Path) -> Iterator:
    script = tmp_path / "search.py"
    script.write_text(SCRIPT, encoding="utf-8")
    workspace = Workspace(tmp_path, Settings(max_file_bytes=10_000))
    info = target_info("ids.search", {"command": [sys.executable, str(script)], "timeout_s": 1})
    pool = TargetPool(workspace)
    target = pool.get(info)
    yield target
    pool.close()


def pid_of(answer: Answer) -> int:
    return int(answer.hits[0].id)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_command_answers_through_one_persistent_process(command_target) -> None:
    """Cases are answered one JSON line each by the same process, which is stopped on close."""
    first, second = answers(command_target, ask("src/a.py"), ask("src/b.py"))
    assert first.hits[0].path == "src/a.py" and second.hits[0].path == "src/b.py"
    assert pid_of(first) == pid_of(second)
    command_target.close()
    assert gone(pid_of(first))


def test_command_that_dies_is_reported_and_restarted(command_target) -> None:
    """A process that exits is a RAG405 naming its exit code and stderr; the next case gets a new process."""
    before, died, after = answers(command_target, ask("a"), ask("die"), ask("b"))
    assert isinstance(died, TargetError)
    assert "exited with code 3" in died.message and "dying on purpose" in died.message
    assert after.hits[0].path == "b" and pid_of(after) != pid_of(before)
    assert gone(pid_of(before))


def test_command_that_dies_leaving_a_child_is_reported_as_exited(command_target) -> None:
    """A process that exits while a child it started holds its stdout open is seen to exit, not taken for one that hangs."""
    died, after = answers(command_target, ask("die-leaving-a-child"), ask("b"))
    assert isinstance(died, TargetError)
    assert "exited with code 4" in died.message and "my child lives on" in died.message
    assert after.hits[0].path == "b"


@pytest.mark.slow  # waits out timeouts
def test_command_that_hangs_times_out_and_is_stopped(command_target) -> None:
    """A process that does not answer within timeout_s is stopped: a RAG405, and the next case is answered."""
    before, hung, after = answers(command_target, ask("a"), ask("hang"), ask("b"))
    assert isinstance(hung, TargetError) and "did not answer within 1 s" in hung.message
    assert gone(pid_of(before))
    assert after.hits[0].path == "b"


@pytest.mark.slow  # waits out timeouts
def test_command_that_keeps_hanging_is_not_asked_again_in_the_run(command_target) -> None:
    """After three cases in a row without an answer in time, the run's other cases fail at once instead of each waiting the timeout out; the next run asks again."""
    started = time.monotonic()
    results = answers(command_target, ask("hang"), ask("hang"), ask("hang"), ask("a"), ask("b"))
    assert all(isinstance(result, TargetError) for result in results)
    assert [("did not answer within 1 s;" in result.message) for result in results] == [True, True, True, False, False]
    assert "did not answer 3 cases in a row within 1 s and is not asked again in this run" in results[3].message
    assert time.monotonic() - started < 3 + 2.5  # three timeouts, and nothing more waited for
    (again,) = answers(command_target, ask("a"))
    assert again.hits[0].path == "a"


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("garbage", "is not JSON: it starts 'Traceback"),
        ("shape", "is not shaped as"),
        ("error", "the target reported an error: index not built"),
        ("flood", "longer than 10,000 bytes"),
    ],
)
def test_command_answers_that_are_not_answers(command_target, query: str, fragment: str) -> None:
    """Garbage, a wrong shape, a reported error and an endless line are RAG405s; the next case is still answered."""
    failure, after = answers(command_target, ask(query), ask("next"))
    assert isinstance(failure, TargetError) and fragment in failure.message
    assert after.hits[0].path == "next"


def test_command_that_answers_twice_is_restarted(command_target) -> None:
    """Two lines for one case are a RAG405, and the second never becomes the next case's answer."""
    twice, after, last = answers(command_target, ask("twice"), ask("next"), ask("last"))
    assert isinstance(twice, TargetError) and "more than one line" in twice.message
    assert after.hits[0].path == "next" and last.hits[0].path == "last"


def test_command_that_cannot_start(tmp_path: Path) -> None:
    """A command that does not exist is a RAG405 for each case, not a crash."""
    info = target_info("x", {"command": [str(tmp_path / "no-such-program")]})
    with TargetPool(Workspace(tmp_path)) as pool:
        failures = answers(pool.get(info), ask("a"), ask("b"))
    assert all(isinstance(failure, TargetError) and "cannot start" in failure.message for failure in failures)


def test_command_config_must_be_argv(tmp_path: Path) -> None:
    """A shell string instead of an argv list is refused when the target is opened."""
    with pytest.raises(TargetError, match="list of strings"):
        open_target(target_info("x", {"command": ["python", 3]}), Workspace(tmp_path), 1.0)


# ---------------------------------------------------------------- http


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        query = body.get("query")
        if query == "slow":
            time.sleep(3)
        if query == "fail":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"index exploded")
            return
        payload = b"<html>not json</html>" if query == "garbage" else json.dumps(
            {"hits": [{"path": query, "id": self.headers.get("X-Token", "")}], "mode": "semantic"}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def http_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.handle_error = lambda request, address: None  # a client that gave up is expected here
    # A short poll: shutdown() waits for the loop's next look (half a second by default).
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/query"
    server.shutdown()
    server.server_close()


def test_http_posts_each_input_with_bounded_concurrency(tmp_path: Path, http_url: str) -> None:
    """Every case is POSTed as JSON (headers included) and its answer decoded, many at once."""
    info = target_info("remote", {"http": {"url": http_url, "timeout_s": 5, "headers": {"X-Token": "t"}}})
    target = open_target(info, Workspace(tmp_path, Settings(run_concurrency=3)), 5.0)
    requests = [ask(f"doc-{n}", f"case-{n}") for n in range(20)]
    results = answers(target, *requests)
    assert [answer.hits[0].path for answer in results] == [f"doc-{n}" for n in range(20)]
    assert results[0].hits[0].id == "t"


@pytest.mark.parametrize(
    ("query", "fragment"),
    [("slow", "did not answer within 0.5 s"), ("fail", "answered HTTP 500"), ("garbage", "is not JSON")],
)
def test_http_failures_are_rag405(tmp_path: Path, http_url: str, query: str, fragment: str) -> None:
    """A timeout, an error status and a body that is not JSON are RAG405 messages."""
    target = open_target(target_info("remote", {"http": {"url": http_url, "timeout_s": 0.5}}), Workspace(tmp_path), 5.0)
    (failure,) = answers(target, ask(query))
    assert isinstance(failure, TargetError) and fragment in failure.message


@pytest.mark.slow  # waits out timeouts
def test_http_service_that_keeps_hanging_is_not_asked_again_in_the_run(tmp_path: Path, http_url: str) -> None:
    """Three cases in a row without an answer in time: the run's other cases are not sent; an answer in between starts the count again."""
    target = open_target(target_info("remote", {"http": {"url": http_url, "timeout_s": 0.5}}), Workspace(tmp_path, Settings(run_concurrency=1)), 5.0)
    results = answers(target, ask("slow"), ask("slow"), ask("a"), ask("slow"), ask("slow"), ask("slow"), ask("b"))
    assert [type(result).__name__ for result in results] == ["TargetError", "TargetError", "Answer", "TargetError", "TargetError", "TargetError", "TargetError"]
    assert "did not answer 3 cases in a row within 0.5 s and is not asked again in this run" in results[-1].message
    (again,) = answers(target, ask("a"))
    assert again.hits[0].path == "a"


def test_http_refused_connection(tmp_path: Path) -> None:
    """Nothing listening is a RAG405 that asks whether the service runs."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = open_target(target_info("remote", {"http": {"url": f"http://127.0.0.1:{port}/q"}}), Workspace(tmp_path), 2.0)
    (failure,) = answers(target, ask("a"))
    assert isinstance(failure, TargetError) and "cannot reach" in failure.message


# ---------------------------------------------------------------- recorded


def recorded(tmp_path: Path, lines: list[str] | None, path: str = ".punica/runs/r.jsonl"):
    if lines is not None:
        file = tmp_path / ".punica" / "runs" / "r.jsonl"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return open_target(target_info("rec", {"recorded": path}), Workspace(tmp_path), 1.0)


def test_recorded_replays_by_case_id(tmp_path: Path) -> None:
    """Each case gets the answer recorded under its id; an unknown id is a RAG405 naming it."""
    target = recorded(tmp_path, ['{"id": "a", "hits": [{"path": "x"}], "mode": "semantic"}', '{"id": "b", "hits": []}'])
    a, b, c = answers(target, ask("?", "a"), ask("?", "b"), ask("?", "zzz"))
    assert a.hits[0].path == "x" and a.mode == "semantic"
    assert b.hits == [] and b.mode is None
    assert isinstance(c, TargetError) and "no recorded answer for case 'zzz'" in c.message


@pytest.mark.parametrize("bad_line", [False, True])
def test_a_case_recorded_twice_replays_its_last_line_and_says_so(tmp_path: Path, bad_line: bool) -> None:
    """A case id on two lines of a recording replays the last, and the run is told (whether or not another line is malformed)."""
    lines = ['{"id": "a", "hits": [{"path": "old"}]}', '{"id": "b", "hits": []}', '{"id": "a", "hits": [{"path": "new"}]}']
    target = recorded(tmp_path, lines + (["not json"] if bad_line else []))
    (a,) = answers(target, ask("?", "a"))
    assert a.hits[0].path == "new"
    assert target.take_notes() == [
        "the recording .punica/runs/r.jsonl holds case 'a' more than once: the last line of each is replayed "
        "(record the run again, or remove the older lines)"
    ]
    once = recorded(tmp_path, lines[:2])
    (a,) = answers(once, ask("?", "a"))
    assert a.hits[0].path == "old" and once.take_notes() == []


def test_recorded_bad_lines_fail_only_their_cases(tmp_path: Path) -> None:
    """A malformed line fails the case it belongs to; unreadable lines are named when a case is missing."""
    target = recorded(
        tmp_path,
        ['{"id": "a", "hits": [{"path": "x"}]}', '{"id": "b", "hits": [{"path": 3}]}', "not json at all"],
    )
    a, b, c = answers(target, ask("?", "a"), ask("?", "b"), ask("?", "c"))
    assert a.hits[0].path == "x"
    assert isinstance(b, TargetError) and "r.jsonl:2" in b.message and "$.hits[0].path" in b.message
    assert isinstance(c, TargetError) and "line(s) 3" in c.message


def test_recorded_file_missing_or_outside(tmp_path: Path) -> None:
    """A missing recording fails each case; a path leaving the workspace is refused without reading it."""
    (failure,) = answers(recorded(tmp_path, None), ask("?", "a"))
    assert isinstance(failure, TargetError) and "does not exist" in failure.message
    with pytest.raises(TargetError, match="outside the workspace"):
        recorded(tmp_path, None, path="../elsewhere.jsonl")


def test_recorded_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    """A recording replaced between runs is replayed as it is now."""
    target = recorded(tmp_path, ['{"id": "a", "hits": [{"path": "old"}]}'])
    (first,) = answers(target, ask("?", "a"))
    recorded(tmp_path, ['{"id": "a", "hits": [{"path": "newer"}]}'])
    (second,) = answers(target, ask("?", "a"))
    assert (first.hits[0].path, second.hits[0].path) == ("old", "newer")
