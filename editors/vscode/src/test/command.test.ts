import assert from "node:assert/strict";
import { test } from "node:test";

import {
  INSTALL_COMMAND,
  expand,
  failureMessage,
  findExecutable,
  installCommand,
  preflight,
  resolveServerCommand,
} from "../command";

test("by default the server is `rag-lsp serve`", () => {
  assert.deepEqual(resolveServerCommand({}), { command: "rag-lsp", args: ["serve"], source: "default", problems: [] });
  assert.equal(resolveServerCommand({ serverCommand: [], pythonPath: "" }).source, "default");
});

test("ragLsp.pythonPath runs the rag_lsp module", () => {
  assert.deepEqual(resolveServerCommand({ pythonPath: " /venv/bin/python " }), {
    command: "/venv/bin/python",
    args: ["-m", "rag_lsp", "serve"],
    source: "pythonPath",
    problems: [],
  });
});

test("ragLsp.serverCommand wins over pythonPath, with variables expanded", () => {
  const server = resolveServerCommand(
    { serverCommand: ["${workspaceFolder}/.venv/bin/rag-lsp", "serve"], pythonPath: "/usr/bin/python3" },
    { workspaceFolder: "/ws", home: "/home/u" },
  );
  assert.deepEqual(server, { command: "/ws/.venv/bin/rag-lsp", args: ["serve"], source: "serverCommand", problems: [] });
});

test("a malformed ragLsp.serverCommand is reported and ignored", () => {
  for (const serverCommand of ["rag-lsp serve", [1, 2], [""]]) {
    const server = resolveServerCommand({ serverCommand, pythonPath: "python3" });
    assert.equal(server.source, "pythonPath");
    assert.equal(server.problems.length, 1, JSON.stringify(serverCommand));
    assert.match(server.problems[0], /list of strings/);
  }
});

test("expand handles ~, ${userHome} and ${workspaceFolder}", () => {
  const at = { home: "/home/u", workspaceFolder: "/ws" };
  assert.equal(expand("~/venv/bin/python", at), "/home/u/venv/bin/python");
  assert.equal(expand("${userHome}/x:${workspaceFolder}/y", at), "/home/u/x:/ws/y");
  assert.equal(expand("a~b", at), "a~b");
  assert.equal(expand("${workspaceFolder}/x", {}), "${workspaceFolder}/x");
});

test("the install command names pip, in the chosen interpreter when there is one", () => {
  assert.equal(installCommand(resolveServerCommand({})), "pip install rag-lsp");
  assert.equal(installCommand(resolveServerCommand({ pythonPath: "/v/bin/python" })), "/v/bin/python -m pip install rag-lsp");
  assert.equal(
    installCommand(resolveServerCommand({ pythonPath: "C:\\Program Files\\Python\\python.exe" })),
    '"C:\\Program Files\\Python\\python.exe" -m pip install rag-lsp',
  );
});

test("a missing rag-lsp gets a message with the install command", () => {
  const message = failureMessage(resolveServerCommand({}), { kind: "notFound" });
  assert.match(message, /`rag-lsp` command was not found/);
  assert.ok(message.includes(INSTALL_COMMAND));
  const module = failureMessage(resolveServerCommand({ pythonPath: "/v/bin/python" }), {
    kind: "moduleMissing",
    detail: "Traceback (most recent call last):\n  ...\nModuleNotFoundError: No module named 'rag_lsp'\n",
  });
  assert.ok(module.includes("/v/bin/python -m pip install rag-lsp"), module);
  assert.ok(module.includes("No module named 'rag_lsp'"), module);
  const failed = failureMessage(resolveServerCommand({ serverCommand: ["x"] }), { kind: "failed", detail: "spawn x EACCES" });
  assert.ok(failed.includes("spawn x EACCES") && failed.includes(INSTALL_COMMAND), failed);
});

const files = (...present: string[]) => (file: string) => present.includes(file);

test("findExecutable searches PATH, or takes a path as it is", () => {
  const host = { platform: "linux", env: { PATH: "/a:/b::/c" }, isFile: files("/b/rag-lsp", "/c/rag-lsp", "/x/py") };
  assert.equal(findExecutable("rag-lsp", host), "/b/rag-lsp");
  assert.equal(findExecutable("nope", host), undefined);
  assert.equal(findExecutable("/x/py", host), "/x/py");
  assert.equal(findExecutable("/x/none", host), undefined);
  assert.equal(findExecutable("rag-lsp", { ...host, env: {} }), undefined);
});

test("findExecutable tries PATHEXT on Windows", () => {
  const host = {
    platform: "win32",
    env: { Path: "C:\\py\\Scripts;C:\\bin", PATHEXT: ".EXE;.CMD" },
    isFile: files("C:\\bin\\rag-lsp.EXE", "C:\\py\\python.exe.EXE"),
  };
  assert.equal(findExecutable("rag-lsp", host), "C:\\bin\\rag-lsp.EXE");
  assert.equal(findExecutable("C:\\py\\python.exe", host), "C:\\py\\python.exe.EXE");
});

test("preflight: missing program, missing module, other failure, fine", () => {
  const host = { platform: "linux", env: { PATH: "/bin" }, isFile: files("/bin/rag-lsp", "/v/python") };
  const never = () => assert.fail("no module check without pythonPath");
  assert.equal(preflight(resolveServerCommand({}), host, never), undefined);
  assert.deepEqual(preflight(resolveServerCommand({}), { ...host, env: { PATH: "/usr/bin" } }, never), {
    kind: "notFound",
  });
  const python = resolveServerCommand({ pythonPath: "/v/python" });
  assert.equal(preflight(python, host, () => ({ status: 0, stderr: "" })), undefined);
  assert.equal(
    preflight(python, host, () => ({ status: 1, stderr: "ModuleNotFoundError: No module named 'rag_lsp'" }))?.kind,
    "moduleMissing",
  );
  assert.equal(preflight(python, host, () => ({ status: 1, stderr: "SyntaxError" }))?.kind, "failed");
  assert.equal(preflight(python, host, () => ({ status: null, stderr: "", error: new Error("ETIMEDOUT") }))?.kind, "failed");
  assert.deepEqual(preflight(resolveServerCommand({ pythonPath: "/none/python" }), host, never), { kind: "notFound" });
});
