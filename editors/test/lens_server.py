"""A stand-in language server with the run half of rag-lsp's protocol, to test the
editor side of code lenses and run commands (display, refresh, which lens a
command picks) with fixed answers. The real server's lenses and runs are tested
end to end by tests/test_server_runs.py and the editors' e2e scripts.

It speaks only what an editor needs to show lenses and run them: lazily resolved
lenses ("Run case" on every dataset line, "Run suite" on every `- id:` of a
suite), `workspace/executeCommand` for `ragLsp.runCase` / `ragLsp.runSuite`, a
RAG400 diagnostic on the case line after a run, lens titles showing the figures,
and `workspace/codeLens/refresh`. Every executed command is appended, as JSON, to
the file named by the environment variable RAG_LSP_STUB_LOG.

Run: python lens_server.py (stdio).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

RUN_CASE = "ragLsp.runCase"
RUN_SUITE = "ragLsp.runSuite"

server = LanguageServer("rag-lsp-lens-stub", "0.0.0")
# uri -> line -> lens title after a run
results: dict[str, dict[int, str]] = {}


def log(entry: dict[str, Any]) -> None:
    path = os.environ.get("RAG_LSP_STUB_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(entry) + "\n")


@server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
def code_lens(ls: LanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    lenses = []
    for number, line in enumerate(document.lines):
        if uri.endswith(".jsonl") and line.strip():
            kind = "case"
        elif re.match(r"\s*-\s+id\s*:", line):
            kind = "suite"
        else:
            continue
        start = types.Position(line=number, character=0)
        where = types.Range(start=start, end=start)
        lenses.append(types.CodeLens(range=where, data={"uri": uri, "line": number, "kind": kind}))
    return lenses


@server.feature(types.CODE_LENS_RESOLVE)
def resolve(ls: LanguageServer, lens: types.CodeLens) -> types.CodeLens:
    data = lens.data or {}
    uri, line, kind = data["uri"], data["line"], data["kind"]
    log({"resolved": uri, "line": line})
    title = results.get(uri, {}).get(line) or ("Run case" if kind == "case" else "Run suite (N cases)")
    command = RUN_CASE if kind == "case" else RUN_SUITE
    lens.command = types.Command(title=title, command=command, arguments=[{"uri": uri, "line": line}])
    return lens


@server.command(RUN_CASE)
async def run_case(ls: LanguageServer, argument: dict[str, Any]) -> dict[str, Any]:
    return await run(ls, RUN_CASE, argument)


@server.command(RUN_SUITE)
async def run_suite(ls: LanguageServer, argument: dict[str, Any]) -> dict[str, Any]:
    return await run(ls, RUN_SUITE, argument)


async def run(ls: LanguageServer, command: str, argument: Any) -> dict[str, Any]:
    log({"command": command, "arguments": argument})
    # A suite run in a dataset names no line: the suites that read it run.
    uri, line = argument["uri"], argument.get("line", 0)
    figures = "recall 1.00 · MRR 1.00" if command == RUN_CASE else "suite passed"
    results.setdefault(uri, {})[line] = figures
    where = types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=1))
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=uri,
            diagnostics=[
                types.Diagnostic(
                    range=where,
                    message=figures,
                    code="RAG400" if command == RUN_CASE else "RAG404",
                    source="rag-lsp",
                    severity=types.DiagnosticSeverity.Information,
                )
            ],
        )
    )
    await ls.workspace_code_lens_refresh_async(None)
    return {"ran": command, "line": line}


if __name__ == "__main__":
    server.start_io()
