"""Time the language server on a large open dataset, beside yaml-language-server.

    python benchmarks/server.py [--cases 100000] [--edits 50] [--repeat 1] [--skip-yaml-ls]

Starts `rag-lsp serve` over stdio with a minimal LSP client (no editor), opens a
dataset of --cases rag cases (about 1% defects), and measures:

* the time from sending `didOpen` (once the client has encoded it) to the first
  `publishDiagnostics` for the document;
* for --edits one-line `didChange` edits (an incremental change inside a line, a
  changed relevant path, every few a line inserted), the time from sending the
  change to the `publishDiagnostics` of that version: median and p95;
* the server's peak resident memory: its own (VmHWM), or, when larger, the
  largest sum of its and its helper's (a process that reads a share of a large
  dataset on open) sampled every 5 ms.

With --repeat N, rag-lsp is measured N times (a fresh server each time) and the
median of each figure is printed after the runs: timings on a shared machine
vary from run to run.

In the same run it measures yaml-language-server (the npm package, installed into
a temporary folder with npm) validating the same rows written as a YAML list
against the equivalent JSON Schema: the anchor a user would otherwise configure.
It answers pull diagnostics only after each change, so its figures are taken
with `textDocument/diagnostic` requests for each version.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from check import FILES, case_line, write_workspace  # noqa: E402
from bytecode import compile_package  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


class Client:
    """Just enough of an LSP client: framing, requests, and waiting for notifications."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.waiters: list[tuple[str, object, asyncio.Future]] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        stream = self.process.stdout
        while True:
            header = await stream.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length"))
            body = await stream.readexactly(length)
            # When the message arrived, before this client spends time decoding it.
            arrived = time.perf_counter()
            message = json.loads(body)
            if "id" in message and "method" in message:  # a request from the server
                await self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message:
                future = self.pending.pop(message["id"], None)
                if future is not None and not future.done():
                    future.set_result(message)
            else:
                for waiter in list(self.waiters):
                    method, predicate, future = waiter
                    if message.get("method") == method and predicate(message.get("params")) and not future.done():
                        future.set_result((arrived, message["params"]))
                        self.waiters.remove(waiter)

    async def _send(self, message: dict) -> float:
        """Send ``message``; the time it was handed to the server (once this client
        has encoded it: an 18 MB didOpen takes this client a tenth of a second)."""
        body = json.dumps(message).encode()
        sent = time.perf_counter()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.process.stdin.drain()
        return sent

    async def request(self, method: str, params: object) -> dict:
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await future

    async def notify(self, method: str, params: object) -> float:
        return await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def expect(self, method: str, predicate) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.waiters.append((method, predicate, future))
        return future


def _status_mb(pid: int, field: str) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_memory_mb(pid: int) -> float:
    """The server's own peak resident memory (VmHWM)."""
    return _status_mb(pid, "VmHWM")


async def sample_memory(pid: int, peak: list[float]) -> None:
    """Keep in ``peak[0]`` the largest resident memory of ``pid`` and the processes
    below it together (rag-lsp's helper, which reads a share of a large dataset on
    open), sampled every 5 ms."""
    while True:
        peak[0] = max(peak[0], sum(_status_mb(each, "VmRSS") for each in [pid, *direct_children(pid)]))
        await asyncio.sleep(0.005)


def direct_children(pid: int) -> list[int]:
    """The processes ``pid`` started (one file to read: cheap enough to sample often)."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def edits_for(lines: list[str], count: int, rng: random.Random):
    """(range, text) one-line edits: within a line, replacing a path, inserting a line."""
    for index in range(count):
        line = rng.randrange(len(lines) - 1)
        text = lines[line]
        if index % 5 == 4:
            new = case_line(len(lines) + index, rng)
            yield {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, new + "\n"
            lines.insert(line, new)
        else:
            column = text.find('"query": "') + len('"query": "')
            yield {"start": {"line": line, "character": column}, "end": {"line": line, "character": column}}, "x"
            lines[line] = text[:column] + "x" + text[column:]


async def measure(command: list[str], uri: str, text: str, language: str, edits: int, pull: bool, init: dict, make_edits=None) -> dict:
    """The figures of one server on one document; ``make_edits(lines, count, rng)``
    gives the edits (default: edits_for)."""
    process = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, limit=1 << 30
    )
    client = Client(process)
    together = [0.0]
    sampler = asyncio.create_task(sample_memory(process.pid, together))
    capabilities = {"textDocument": {"publishDiagnostics": {"versionSupport": True}}}
    if pull:
        capabilities["textDocument"]["diagnostic"] = {"dynamicRegistration": False}
    await client.request(
        "initialize", {"processId": os.getpid(), "rootUri": init["root"], "capabilities": capabilities, "initializationOptions": init.get("options")}
    )
    await client.notify("initialized", {})
    if "settings" in init:
        await client.notify("workspace/didChangeConfiguration", {"settings": init["settings"]})

    async def diagnostics(version: int) -> tuple[float, int]:
        """(arrival time, number of diagnostics) of the document's diagnostics for ``version``."""
        if pull:
            answer = await client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            return time.perf_counter(), len(answer["result"].get("items", []))
        arrived, params = await client.expect(
            "textDocument/publishDiagnostics", lambda p: p["uri"] == uri and p.get("version") in (None, version)
        )
        return arrived, len(params["diagnostics"])

    waiting = asyncio.ensure_future(diagnostics(1)) if not pull else None
    start = await client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}})
    arrived, found = await (waiting if waiting is not None else diagnostics(1))
    opened = arrived - start
    times = []
    rng = random.Random(7)
    lines = text.split("\n")
    for version, (range_, new_text) in enumerate((make_edits or edits_for)(lines, edits, rng), start=2):
        waiting = asyncio.ensure_future(diagnostics(version)) if not pull else None
        start = await client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range_, "text": new_text}]},
        )
        arrived, _ = await (waiting if waiting is not None else diagnostics(version))
        times.append(arrived - start)
    memory = max(peak_memory_mb(process.pid), together[0])
    sampler.cancel()
    await client.request("shutdown", None)
    await client.notify("exit", None)
    try:
        await asyncio.wait_for(process.wait(), 10)
    except asyncio.TimeoutError:
        process.kill()
    client.reader.cancel()
    times.sort()
    return {
        "open_s": opened,
        "median_ms": statistics.median(times) * 1000,
        "p95_ms": times[int(len(times) * 0.95) - 1] * 1000 if times else float("nan"),
        "memory_mb": memory,
        "diagnostics": found,
    }


def yaml_ls(folder: Path) -> list[str] | None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        return None
    subprocess.run(["npm", "install", "--silent", "--prefix", str(folder), "yaml-language-server"], check=True, capture_output=True)
    return ["node", str(folder / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"), "--stdio"]


def yaml_rows(dataset: Path) -> str:
    """The dataset as a YAML list (JSON is YAML: one flow mapping per item)."""
    items = []
    for line in dataset.read_text().splitlines():
        try:
            items.append("- " + json.dumps(json.loads(line)))
        except ValueError:
            items.append("- " + line)  # keep the broken line: it is broken YAML too
    return "\n".join(items) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=1, help="measure rag-lsp this many times")
    parser.add_argument("--skip-yaml-ls", action="store_true")
    arguments = parser.parse_args()
    compile_package()
    with tempfile.TemporaryDirectory() as folder:
        root = write_workspace(Path(folder) / "ws", arguments.cases)
        dataset = root / ".punica" / "evals" / "bench.jsonl"
        runs = [
            asyncio.run(
                measure(
                    [sys.executable, "-m", "rag_lsp", "serve"],
                    dataset.as_uri(),
                    dataset.read_text(),
                    "jsonl",
                    arguments.edits,
                    pull=False,
                    init={"root": root.as_uri()},
                )
            )
            for _ in range(arguments.repeat)
        ]
        rows = [(f"rag-lsp (run {number})", figures) for number, figures in enumerate(runs, 1)] if len(runs) > 1 else []
        rows.append(("rag-lsp" if len(runs) == 1 else "rag-lsp (median)", {key: statistics.median(run[key] for run in runs) for key in runs[0]}))
        command = None if arguments.skip_yaml_ls else yaml_ls(Path(folder) / "yls")
        if command is not None:
            items = yaml_rows(dataset)
            target = root / "bench.rows.yaml"
            target.write_text(items)
            row_schema = json.loads((REPO / "schemas" / "rag-case.schema.json").read_text())
            schema = root / "rows.schema.json"
            schema.write_text(json.dumps({"type": "array", "items": {k: v for k, v in row_schema.items() if k not in ("$schema", "$id")}}))
            settings = {"yaml": {"validate": True, "schemas": {schema.as_uri(): ["bench.rows.yaml", "*.rows.yaml"]}}}
            theirs = asyncio.run(
                measure(
                    command,
                    target.as_uri(),
                    items,
                    "yaml",
                    max(3, arguments.edits // 10),
                    pull=False,
                    init={"root": root.as_uri(), "settings": settings},
                )
            )
            rows.append(("yaml-language-server", theirs))
    print(f"{arguments.cases} cases ({len(FILES)} workspace files, about 1% defects)")
    print(f"{'server':<22} {'didOpen→diag':>13} {'edit median':>12} {'edit p95':>10} {'peak RSS':>10} {'diagnostics':>12}")
    for name, figures in rows:
        print(
            f"{name:<22} {figures['open_s']:>12.2f}s {figures['median_ms']:>10.1f}ms {figures['p95_ms']:>8.1f}ms "
            f"{figures['memory_mb']:>8.0f}MB {int(figures['diagnostics']):>12}"
        )
    if rows[-1][0] == "yaml-language-server":
        ours, theirs = rows[-2][1], rows[-1][1]
        print(f"edit median ratio (yaml-language-server / rag-lsp): {theirs['median_ms'] / ours['median_ms']:.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
