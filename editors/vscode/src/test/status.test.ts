import assert from "node:assert/strict";
import { test } from "node:test";

import { ServerCommand } from "../command";
import { interpreterLabel, statusItem } from "../status";

const fromPython: ServerCommand = {
  command: "/home/u/proj/.venv/bin/python",
  args: ["-m", "rag_lsp", "serve"],
  rule: "pythonExtension",
  interpreter: { path: "/home/u/proj/.venv/bin/python", version: "3.11.4" },
};

test("the interpreter is named by its version and its environment's folder", () => {
  assert.equal(interpreterLabel({ path: "/home/u/proj/.venv/bin/python", version: "3.11.4" }), "3.11.4 (.venv)");
  assert.equal(interpreterLabel({ path: "/usr/bin/python3" }), "/usr/bin/python3");
  assert.equal(interpreterLabel({ path: "/usr/bin/python3", version: "3.11.2" }), "3.11.2", "/usr is no environment");
  assert.equal(interpreterLabel({ path: "/home/u/venv/bin/python" }), "venv");
  assert.equal(interpreterLabel({ path: "/opt/py/python3.12" }), "/opt/py/python3.12");
  assert.equal(interpreterLabel({ path: "C:\\proj\\.venv\\Scripts\\python.exe", version: "3.12.0" }), "3.12.0 (.venv)");
});

test("the status bar shows the state and the interpreter in use; the tooltip the command and the rule", () => {
  const running = statusItem("running", fromPython);
  assert.equal(running.text, "$(check) rag-lsp: Python 3.11.4 (.venv)");
  assert.equal(
    running.tooltip,
    [
      "rag-lsp: running",
      "Server: /home/u/proj/.venv/bin/python -m rag_lsp serve",
      "Found by: the interpreter selected in the Python extension",
      "Click to show the rag-lsp output.",
    ].join("\n"),
  );
  assert.ok(!running.error);
  assert.equal(statusItem("starting", undefined).text, "$(sync~spin) rag-lsp");
  assert.equal(statusItem("running", { command: "rag-lsp", args: ["serve"], rule: "path" }).text, "$(check) rag-lsp: rag-lsp on PATH");
  const bundled = statusItem("running", { ...fromPython, rule: "bundled", args: ["/ext/bundled/tool/rag_lsp_bundled.py", "serve"] });
  assert.equal(bundled.text, "$(check) rag-lsp: Python 3.11.4 (.venv), bundled rag-lsp");
});

test("a server not found or stopped shows as an error, with why", () => {
  const missing = statusItem("notFound", undefined, "rag-lsp: the language server was not found.");
  assert.equal(missing.text, "$(error) rag-lsp: not found");
  assert.ok(missing.error);
  assert.ok(missing.tooltip.includes("the language server was not found"));
  assert.ok(statusItem("failed", fromPython).error);
  assert.equal(statusItem("stopped", fromPython).text, "$(debug-stop) rag-lsp: Python 3.11.4 (.venv)");
});
