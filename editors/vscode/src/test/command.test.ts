import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Host,
  INSTALL_COMMAND,
  PythonExtensionState,
  Resolution,
  describeResolution,
  expand,
  failureActions,
  failureMessage,
  findExecutable,
  installCommand,
  interpreterChangeNeedsRestart,
  probeResult,
  resolveServer,
  skippedSettings,
  tooOld,
  venvInterpreters,
} from "../command";

/** A machine with these executables; `modules` are interpreters that can import rag_lsp. */
function machine(options: {
  files?: string[];
  modules?: string[];
  python?: PythonExtensionState;
  launcher?: string;
  runsBundled?: string[];
}): Host & { checked: string[] } {
  const files = options.files ?? [];
  const checked: string[] = [];
  return {
    checked,
    findExecutable: (command) =>
      command.includes("/") ? files.find((file) => file === command) : files.find((file) => file.endsWith(`/${command}`)),
    pythonExtension: async () => options.python ?? { kind: "absent" },
    checkModule: async (python) => {
      checked.push(python);
      return (options.modules ?? []).includes(python) ? { version: "3.11.2" } : { problem: "has no rag_lsp module" };
    },
    bundledLauncher: () => options.launcher,
    checkBundled: async (python) =>
      (options.runsBundled ?? []).includes(python) ? { version: "3.11.2" } : { problem: "is Python 3.9" },
  };
}

const selected = (path: string, version = "3.12.1"): PythonExtensionState => ({
  kind: "selected",
  interpreter: { path, version },
});

const winner = (resolution: Resolution) =>
  resolution.server && [resolution.server.rule, resolution.server.command, ...resolution.server.args];

test("with nothing set and rag-lsp on PATH, PATH wins and every earlier rule says why not", async () => {
  const resolution = await resolveServer({}, {}, machine({ files: ["/usr/bin/rag-lsp"] }));
  assert.deepEqual(winner(resolution), ["path", "rag-lsp", "serve"]);
  assert.deepEqual(
    resolution.attempts.map((attempt) => [attempt.rule, attempt.used, attempt.reason]),
    [
      ["serverCommand", false, "not set"],
      ["pythonPath", false, "not set"],
      ["pythonExtension", false, "the Python extension is not installed"],
      ["workspaceVenv", false, "no workspace folder"],
      ["path", true, "/usr/bin/rag-lsp"],
    ],
  );
});

test("the order: serverCommand, pythonPath, the Python extension's interpreter, PATH", async () => {
  const everything = machine({
    files: ["/opt/rag-lsp", "/p/bin/python", "/v/bin/python", "/usr/bin/rag-lsp"],
    modules: ["/p/bin/python", "/v/bin/python"],
    python: selected("/v/bin/python"),
  });
  const settings = { serverCommand: ["/opt/rag-lsp", "serve", "--x"], pythonPath: "/p/bin/python" };
  assert.deepEqual(winner(await resolveServer(settings, {}, everything)), ["serverCommand", "/opt/rag-lsp", "serve", "--x"]);
  const fromSetting = await resolveServer({ pythonPath: "/p/bin/python" }, {}, everything);
  assert.deepEqual(winner(fromSetting), ["pythonPath", "/p/bin/python", "-m", "rag_lsp", "serve"]);
  assert.deepEqual(fromSetting.server?.interpreter, { path: "/p/bin/python", version: "3.11.2" }, "the version its check printed");
  const fromExtension = await resolveServer({}, {}, everything);
  assert.deepEqual(winner(fromExtension), ["pythonExtension", "/v/bin/python", "-m", "rag_lsp", "serve"]);
  assert.deepEqual(fromExtension.server?.interpreter, { path: "/v/bin/python", version: "3.12.1" });
  assert.deepEqual(winner(await resolveServer({}, {}, machine({ files: ["/usr/bin/rag-lsp"], python: { kind: "noInterpreter" } }))), [
    "path",
    "rag-lsp",
    "serve",
  ]);
});

test("a rule that is set but fails is passed over for the next, and its failure is worth a warning", async () => {
  const host = machine({
    files: ["/p/bin/python", "/v/bin/python", "/usr/bin/rag-lsp"],
    modules: ["/v/bin/python"],
    python: selected("/v/bin/python"),
  });
  const resolution = await resolveServer({ serverCommand: ["/gone/rag-lsp", "serve"], pythonPath: "/p/bin/python" }, {}, host);
  assert.equal(resolution.server?.rule, "pythonExtension");
  assert.deepEqual(
    resolution.attempts.filter((attempt) => !attempt.used).map((attempt) => attempt.reason),
    ["`/gone/rag-lsp` was not found", "`/p/bin/python` has no rag_lsp module"],
  );
  assert.equal(
    skippedSettings(resolution),
    "rag-lsp: ragLsp.serverCommand: `/gone/rag-lsp` was not found; ragLsp.pythonPath: `/p/bin/python` has no rag_lsp module. " +
      "Using the interpreter selected in the Python extension instead.",
  );
  assert.equal(skippedSettings(await resolveServer({}, {}, host)), undefined, "nothing set, nothing to warn about");
});

test("the Python extension's interpreter without rag-lsp, or too old, falls through to PATH", async () => {
  const noModule = await resolveServer({}, {}, machine({ files: ["/usr/bin/rag-lsp"], python: selected("/v/bin/python") }));
  assert.equal(noModule.server?.rule, "path");
  assert.deepEqual(noModule.installInto, { path: "/v/bin/python", version: "3.12.1" });
  const old = machine({ files: ["/usr/bin/rag-lsp"], modules: ["/o/bin/python"], python: selected("/o/bin/python", "3.9.18") });
  const resolution = await resolveServer({}, {}, old);
  assert.equal(resolution.server?.rule, "path");
  assert.match(resolution.attempts[2].reason, /Python 3\.9\.18; rag-lsp needs 3\.10 or later/);
  assert.deepEqual(old.checked, [], "an interpreter too old is not run");
});

test("an untrusted workspace's interpreter is not run until the workspace is trusted", async () => {
  const host = machine({ files: ["/usr/bin/rag-lsp"], modules: ["/ws/.venv/bin/python"], python: selected("/ws/.venv/bin/python") });
  const resolution = await resolveServer({ trusted: false }, {}, host);
  assert.equal(resolution.server?.rule, "path");
  assert.ok(resolution.waitsForTrust);
  assert.equal(resolution.attempts[2].reason, "`/ws/.venv/bin/python` is not run: the workspace is not trusted");
  assert.ok(!(await resolveServer({ trusted: false }, {}, machine({ python: { kind: "noInterpreter" } }))).waitsForTrust);
  assert.deepEqual(host.checked, []);
  assert.equal((await resolveServer({ trusted: true }, {}, host)).server?.rule, "pythonExtension");
});

test("a workspace's own .venv with rag-lsp serves, before PATH, and the output names it", async () => {
  const host = machine({ files: ["/ws/.venv/bin/python", "/usr/bin/rag-lsp"], modules: ["/ws/.venv/bin/python"] });
  const resolution = await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, host);
  assert.deepEqual(winner(resolution), ["workspaceVenv", "/ws/.venv/bin/python", "-m", "rag_lsp", "serve"]);
  assert.deepEqual(resolution.server?.interpreter, { path: "/ws/.venv/bin/python", version: "3.11.2" }, "the version its check printed");
  assert.deepEqual(describeResolution(resolution).slice(3), [
    "[4] the workspace's .venv or venv: used, /ws/.venv/bin/python",
    "Starting the server found by rule 4 (the workspace's .venv or venv): /ws/.venv/bin/python -m rag_lsp serve",
  ]);
  assert.equal(skippedSettings(resolution), undefined, "nothing the user set was passed over");
});

test("the workspace's venv: .venv before venv, each workspace folder in turn, Scripts\\python.exe on Windows", async () => {
  const both = machine({ files: ["/ws/.venv/bin/python", "/ws/venv/bin/python"], modules: ["/ws/.venv/bin/python", "/ws/venv/bin/python"] });
  assert.equal((await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, both)).server?.command, "/ws/.venv/bin/python");
  const plain = machine({ files: ["/ws/venv/bin/python"], modules: ["/ws/venv/bin/python"] });
  assert.equal((await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, plain)).server?.command, "/ws/venv/bin/python");
  const second = machine({ files: ["/b/.venv/bin/python"], modules: ["/b/.venv/bin/python"] });
  assert.equal((await resolveServer({ trusted: true, workspaceFolders: ["/a", "/b"] }, {}, second)).server?.command, "/b/.venv/bin/python");
  assert.deepEqual(venvInterpreters(["C:\\ws"], "win32"), ["C:\\ws\\.venv\\Scripts\\python.exe", "C:\\ws\\venv\\Scripts\\python.exe"]);
  assert.deepEqual(venvInterpreters(["/ws"], "linux"), ["/ws/.venv/bin/python", "/ws/venv/bin/python"]);
});

test("no venv in the workspace: PATH serves, and the output says none was found", async () => {
  const host = machine({ files: ["/usr/bin/rag-lsp"] });
  const resolution = await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, host);
  assert.equal(resolution.server?.rule, "path");
  assert.equal(describeResolution(resolution)[3], "[4] the workspace's .venv or venv: no .venv or venv in /ws");
  assert.equal((await resolveServer({ trusted: true, workspaceFolders: ["/a", "/b"] }, {}, host)).attempts[3].reason, "no .venv or venv in any workspace folder");
  assert.deepEqual(host.checked, [], "no interpreter to run");
});

test("a venv without rag-lsp is passed over without a warning, and is where rag-lsp is to be installed", async () => {
  // .venv lacks rag-lsp, venv has it: venv serves.
  const next = machine({ files: ["/ws/.venv/bin/python", "/ws/venv/bin/python", "/usr/bin/rag-lsp"], modules: ["/ws/venv/bin/python"] });
  const fromVenv = await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, next);
  assert.equal(fromVenv.server?.command, "/ws/venv/bin/python");
  assert.deepEqual(next.checked, ["/ws/.venv/bin/python", "/ws/venv/bin/python"]);
  const host = machine({ files: ["/ws/.venv/bin/python", "/usr/bin/rag-lsp"] });
  const resolution = await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, host);
  assert.equal(resolution.server?.rule, "path");
  assert.equal(resolution.attempts[3].reason, "`/ws/.venv/bin/python` has no rag_lsp module");
  assert.equal(skippedSettings(resolution), undefined, "a venv is not a setting: its lack of rag-lsp is no warning");
  const none = await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, machine({ files: ["/ws/.venv/bin/python"] }));
  assert.ok(failureMessage(none, { kind: "notFound" }).includes("`/ws/.venv/bin/python -m pip install rag-lsp`"));
  // The interpreter the user selected stays the one to install into.
  const selectedOne = machine({ files: ["/ws/.venv/bin/python"], python: selected("/v/bin/python") });
  const chosen = await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, selectedOne);
  assert.equal(chosen.installInto?.path, "/v/bin/python");
});

test("an untrusted workspace's venv is not run until the workspace is trusted", async () => {
  const host = machine({ files: ["/ws/.venv/bin/python", "/usr/bin/rag-lsp"], modules: ["/ws/.venv/bin/python"] });
  const resolution = await resolveServer({ trusted: false, workspaceFolders: ["/ws"] }, {}, host);
  assert.equal(resolution.server?.rule, "path");
  assert.ok(resolution.waitsForTrust, "granting trust finds the server again");
  assert.equal(resolution.attempts[3].reason, "`/ws/.venv/bin/python` is not run: the workspace is not trusted");
  assert.deepEqual(host.checked, [], "the workspace's interpreter is never run");
  assert.ok(interpreterChangeNeedsRestart(resolution));
  assert.ok(!(await resolveServer({ trusted: false, workspaceFolders: ["/ws"] }, {}, machine({}))).waitsForTrust, "no venv, nothing to wait for");
  assert.equal((await resolveServer({ trusted: true, workspaceFolders: ["/ws"] }, {}, host)).server?.rule, "workspaceVenv");
});

test("the workspace's venv comes after the settings and the Python extension's interpreter, before PATH", async () => {
  const everything = machine({
    files: ["/p/bin/python", "/v/bin/python", "/ws/.venv/bin/python", "/usr/bin/rag-lsp"],
    modules: ["/p/bin/python", "/v/bin/python", "/ws/.venv/bin/python"],
    python: selected("/v/bin/python"),
  });
  const base = { trusted: true, workspaceFolders: ["/ws"] };
  assert.equal((await resolveServer({ ...base, serverCommand: ["/usr/bin/rag-lsp", "serve"] }, {}, everything)).server?.rule, "serverCommand");
  assert.equal((await resolveServer({ ...base, pythonPath: "/p/bin/python" }, {}, everything)).server?.rule, "pythonPath");
  assert.equal((await resolveServer(base, {}, everything)).server?.rule, "pythonExtension");
  const noExtension = machine({ files: ["/ws/.venv/bin/python", "/usr/bin/rag-lsp"], modules: ["/ws/.venv/bin/python"] });
  const resolution = await resolveServer(base, {}, noExtension);
  assert.equal(resolution.server?.rule, "workspaceVenv");
  assert.deepEqual(resolution.order, ["serverCommand", "pythonPath", "pythonExtension", "workspaceVenv", "path", "bundled"]);
  assert.ok(!resolution.attempts.some((attempt) => attempt.rule === "path"), "PATH is not even looked at");
});

test("importStrategy useBundled uses the bundled copy before the environment's rag-lsp, run by an interpreter that can", async () => {
  const launcher = "/ext/bundled/tool/rag_lsp_bundled.py";
  // rag-lsp is on PATH and in the selected interpreter: useBundled still means the bundled copy.
  const host = machine({
    files: ["/usr/bin/rag-lsp", "/usr/bin/python3", "/v/bin/python"],
    modules: ["/v/bin/python"],
    python: selected("/v/bin/python"),
    launcher,
    runsBundled: ["/usr/bin/python3"],
  });
  const bundled = await resolveServer({ importStrategy: "useBundled" }, {}, host);
  assert.deepEqual(bundled.order, ["serverCommand", "bundled", "pythonPath", "pythonExtension", "workspaceVenv", "path"]);
  assert.deepEqual(winner(bundled), ["bundled", "/usr/bin/python3", launcher, "serve"]);
  assert.deepEqual(bundled.server?.interpreter, { path: "/usr/bin/python3", version: "3.11.2" }, "the version its check printed");
  assert.deepEqual(host.checked, [], "the environment's rag_lsp is not even looked for");
  assert.deepEqual(describeResolution(bundled), [
    "[1] ragLsp.serverCommand: not set",
    `[2] the rag-lsp bundled with the extension: used, /usr/bin/python3 ${launcher}`,
    `Starting the server found by rule 2 (the rag-lsp bundled with the extension): /usr/bin/python3 ${launcher} serve`,
  ]);
  // The interpreter that runs the copy: ragLsp.pythonPath first, then the Python extension's, then python3 on PATH.
  const runners = machine({
    files: ["/p/bin/python", "/usr/bin/python3"],
    python: selected("/v/bin/python"),
    launcher,
    runsBundled: ["/p/bin/python", "/v/bin/python", "/usr/bin/python3"],
  });
  assert.equal((await resolveServer({ importStrategy: "useBundled", pythonPath: "/p/bin/python" }, {}, runners)).server?.command, "/p/bin/python");
  assert.equal((await resolveServer({ importStrategy: "useBundled" }, {}, runners)).server?.command, "/v/bin/python");
  // ragLsp.serverCommand still comes first, as the `path` setting of Microsoft's extensions does.
  const command = await resolveServer({ importStrategy: "useBundled", serverCommand: ["/usr/bin/rag-lsp", "serve"] }, {}, host);
  assert.equal(command.server?.rule, "serverCommand");
});

test("importStrategy useBundled that cannot run the copy falls back to the environment, with a warning", async () => {
  const launcher = "/ext/bundled/tool/rag_lsp_bundled.py";
  // Every interpreter is of another Python version than the copy's.
  const mismatch = machine({ files: ["/usr/bin/python3", "/usr/bin/rag-lsp"], python: selected("/v/bin/python"), launcher });
  const resolution = await resolveServer({ importStrategy: "useBundled" }, {}, mismatch);
  assert.equal(resolution.server?.rule, "path");
  assert.equal(resolution.attempts[1].reason, "`/v/bin/python` is Python 3.9; `/usr/bin/python3` is Python 3.9");
  assert.equal(
    skippedSettings(resolution),
    "rag-lsp: the rag-lsp bundled with the extension: `/v/bin/python` is Python 3.9; `/usr/bin/python3` is Python 3.9; " +
      "the interpreter selected in the Python extension: `/v/bin/python` has no rag_lsp module. Using `rag-lsp` on PATH instead.",
  );
  // The universal build bundles nothing, and says so.
  const universal = await resolveServer({ importStrategy: "useBundled" }, {}, machine({ files: ["/usr/bin/python3", "/usr/bin/rag-lsp"] }));
  assert.equal(universal.server?.rule, "path");
  assert.match(universal.attempts[1].reason, /bundles no rag-lsp/);
  assert.match(skippedSettings(universal) ?? "", /bundles no rag-lsp/);
  const nothing = await resolveServer({ importStrategy: "useBundled" }, {}, machine({ launcher }));
  assert.equal(nothing.server, undefined);
  assert.equal(nothing.attempts[1].reason, "no Python interpreter to run it (select one, or set ragLsp.pythonPath)");
});

test("importStrategy fromEnvironment (the default) uses the environment's rag-lsp, the bundled copy only when it has none", async () => {
  const launcher = "/ext/bundled/tool/rag_lsp_bundled.py";
  const both = machine({ files: ["/usr/bin/rag-lsp", "/usr/bin/python3"], launcher, runsBundled: ["/usr/bin/python3"] });
  for (const importStrategy of [undefined, "fromEnvironment"]) {
    const resolution = await resolveServer({ importStrategy }, {}, both);
    assert.deepEqual(resolution.order, ["serverCommand", "pythonPath", "pythonExtension", "workspaceVenv", "path", "bundled"]);
    assert.equal(resolution.server?.rule, "path");
  }
  // No rag-lsp in the environment: the bundled copy serves, run by the selected interpreter; the warning is the
  // interpreter's, not the copy's.
  const fallback = await resolveServer(
    {},
    {},
    machine({ files: ["/usr/bin/python3"], python: selected("/v/bin/python"), launcher, runsBundled: ["/v/bin/python", "/usr/bin/python3"] }),
  );
  assert.deepEqual(winner(fallback), ["bundled", "/v/bin/python", launcher, "serve"]);
  assert.deepEqual(fallback.server?.interpreter, { path: "/v/bin/python", version: "3.12.1" });
  assert.equal(
    skippedSettings(fallback),
    "rag-lsp: the interpreter selected in the Python extension: `/v/bin/python` has no rag_lsp module. " +
      "Using the rag-lsp bundled with the extension instead.",
  );
  assert.equal(describeResolution(fallback).at(-1), `Starting the server found by rule 6 (the rag-lsp bundled with the extension): /v/bin/python ${launcher} serve`);
  // The universal build has no copy: nothing found, and the output says why.
  const none = await resolveServer({}, {}, machine({ files: ["/usr/bin/python3"] }));
  assert.equal(none.server, undefined);
  assert.equal(none.attempts[5].reason, "this build of the extension bundles no rag-lsp (the platform-specific one does)");
  assert.ok(!none.attempts[5].configured);
});

test("the output channel is told each rule tried and which won", async () => {
  const resolution = await resolveServer({}, {}, machine({ files: ["/v/bin/python"], modules: ["/v/bin/python"], python: selected("/v/bin/python") }));
  assert.deepEqual(describeResolution(resolution), [
    "[1] ragLsp.serverCommand: not set",
    "[2] ragLsp.pythonPath: not set",
    "[3] the interpreter selected in the Python extension: used, /v/bin/python",
    "Starting the server found by rule 3 (the interpreter selected in the Python extension): /v/bin/python -m rag_lsp serve",
  ]);
  const none = await resolveServer({}, {}, machine({ python: { kind: "noInterpreter" } }));
  assert.deepEqual(describeResolution(none).slice(2), [
    "[3] the interpreter selected in the Python extension: no interpreter is selected",
    "[4] the workspace's .venv or venv: no workspace folder",
    "[5] `rag-lsp` on PATH: not found on PATH",
    "[6] the rag-lsp bundled with the extension: this build of the extension bundles no rag-lsp (the platform-specific one does)",
    "No rule found a language server. Install it with: pip install rag-lsp",
  ]);
});

test("no server: one message with the install command, and buttons to select an interpreter, open the setting, show the command", async () => {
  assert.deepEqual(failureActions(), ["Select Interpreter", "Open Setting", "Show Install Command"]);
  const none = await resolveServer({}, {}, machine({}));
  const message = failureMessage(none, { kind: "notFound" });
  assert.match(message, /^rag-lsp: the language server was not found\. Select a Python interpreter/);
  assert.ok(message.includes(INSTALL_COMMAND), message);
  const withPython = await resolveServer({}, {}, machine({ python: selected("/v/bin/python") }));
  assert.ok(failureMessage(withPython, { kind: "notFound" }).includes("`/v/bin/python -m pip install rag-lsp`"));
  const found = await resolveServer({}, {}, machine({ files: ["/usr/bin/rag-lsp"] }));
  const failed = failureMessage(found, { kind: "failed", detail: "Traceback (most recent call last):\n  ...\nImportError: no pygls\n" });
  assert.equal(
    failed,
    "rag-lsp: the language server `rag-lsp serve` (from `rag-lsp` on PATH) could not start: ImportError: no pygls. " +
      "Is rag-lsp installed? `pip install rag-lsp`",
  );
});

test("a change of the Python extension's interpreter restarts a server it may have chosen", async () => {
  assert.ok(interpreterChangeNeedsRestart(undefined));
  const host = machine({ files: ["/usr/bin/rag-lsp", "/p/python"], modules: ["/p/python"], python: selected("/v/bin/python") });
  assert.ok(interpreterChangeNeedsRestart(await resolveServer({}, {}, host)), "PATH won: the interpreter may do now");
  assert.ok(interpreterChangeNeedsRestart(await resolveServer({}, {}, machine({}))), "nothing found");
  assert.ok(!interpreterChangeNeedsRestart(await resolveServer({ pythonPath: "/p/python" }, {}, host)));
  assert.ok(!interpreterChangeNeedsRestart(await resolveServer({ serverCommand: ["/p/python"] }, {}, host)));
  const onIt = await resolveServer({}, {}, machine({ files: ["/v/bin/python"], modules: ["/v/bin/python"], python: selected("/v/bin/python") }));
  assert.ok(!interpreterChangeNeedsRestart(onIt, "/v/bin/python"), "the server already runs on it");
  assert.ok(interpreterChangeNeedsRestart(onIt, "/w/bin/python"));
  assert.ok(interpreterChangeNeedsRestart(onIt), "the extension installed or removed");
});

test("a malformed ragLsp.serverCommand is reported and ignored", async () => {
  for (const serverCommand of ["rag-lsp serve", [1, 2], [""]]) {
    const resolution = await resolveServer({ serverCommand }, {}, machine({ files: ["/usr/bin/rag-lsp"] }));
    assert.equal(resolution.server?.rule, "path");
    assert.equal(resolution.problems.length, 1, JSON.stringify(serverCommand));
    assert.match(resolution.problems[0], /list of strings/);
  }
});

test("settings are expanded before use", async () => {
  const host = machine({ files: ["/ws/.venv/bin/rag-lsp", "/home/u/v/bin/python"], modules: ["/home/u/v/bin/python"] });
  const at = { workspaceFolder: "/ws", home: "/home/u" };
  assert.deepEqual(winner(await resolveServer({ serverCommand: ["${workspaceFolder}/.venv/bin/rag-lsp", "serve"] }, at, host)), [
    "serverCommand",
    "/ws/.venv/bin/rag-lsp",
    "serve",
  ]);
  assert.equal((await resolveServer({ pythonPath: " ~/v/bin/python " }, at, host)).server?.command, "/home/u/v/bin/python");
});

test("expand handles ~, ${userHome} and ${workspaceFolder}", () => {
  const at = { home: "/home/u", workspaceFolder: "/ws" };
  assert.equal(expand("~/venv/bin/python", at), "/home/u/venv/bin/python");
  assert.equal(expand("${userHome}/x:${workspaceFolder}/y", at), "/home/u/x:/ws/y");
  assert.equal(expand("a~b", at), "a~b");
  assert.equal(expand("${workspaceFolder}/x", {}), "${workspaceFolder}/x");
});

test("the install command names pip, in the chosen interpreter when there is one", () => {
  assert.equal(installCommand(undefined), "pip install rag-lsp");
  assert.equal(installCommand({ path: "/v/bin/python" }), "/v/bin/python -m pip install rag-lsp");
  assert.equal(
    installCommand({ path: "C:\\Program Files\\Python\\python.exe" }),
    '"C:\\Program Files\\Python\\python.exe" -m pip install rag-lsp',
  );
});

test("tooOld compares with Python 3.10", () => {
  assert.ok(tooOld("3.9.18"));
  assert.ok(tooOld("2.7"));
  assert.ok(!tooOld("3.10.0"));
  assert.ok(!tooOld("3.13.1"));
  assert.ok(!tooOld(undefined));
});

test("probeResult reads the version a check printed, and tells a missing module from other failures", () => {
  assert.deepEqual(probeResult({ status: 0, stdout: "3.11.4\n", stderr: "" }), { version: "3.11.4" });
  assert.deepEqual(probeResult({ status: 0, stdout: "", stderr: "" }), {});
  const missing = { status: 1, stderr: "ModuleNotFoundError: No module named 'rag_lsp'\n" };
  assert.deepEqual(probeResult(missing), { problem: "has no rag_lsp module" });
  assert.deepEqual(probeResult({ status: 1, stderr: "Traceback\nSyntaxError: bad\n" }), {
    problem: "cannot import rag_lsp (SyntaxError: bad)",
  });
  assert.deepEqual(probeResult({ status: null, stderr: "", error: new Error("spawn EACCES") }), {
    problem: "could not be run (spawn EACCES)",
  });
  assert.deepEqual(probeResult({ status: 1, stderr: "is Python 3.9; the bundled rag-lsp is built for Python 3.11\n" }, "bundled"), {
    problem: "is Python 3.9; the bundled rag-lsp is built for Python 3.11",
  });
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
