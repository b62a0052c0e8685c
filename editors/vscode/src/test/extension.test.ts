// extension.ts driven through a stand-in for VS Code and the language client.
import { clients, document, fakeClient, reset, settle, state, vscode } from "../testing/fake-vscode"; // first: installs the stand-in

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, test } from "node:test";

import { RagLspExtension } from "../extension";
import { installPython } from "../testing/fake-python";

const posix = process.platform !== "win32";
let bin: string;
let savedPath: string | undefined;
let extension: RagLspExtension | undefined;

function executable(name: string, body: string): string {
  const file = path.join(bin, name);
  fs.writeFileSync(file, body, { mode: 0o755 });
  return file;
}

beforeEach(() => {
  reset();
  bin = fs.mkdtempSync(path.join(os.tmpdir(), "rag-lsp-ext-"));
  savedPath = process.env.PATH;
  process.env.PATH = bin;
});

afterEach(async () => {
  await extension?.stop();
  extension?.dispose();
  extension = undefined;
  process.env.PATH = savedPath;
  fs.rmSync(bin, { recursive: true, force: true });
});

async function activate(): Promise<RagLspExtension> {
  extension = new RagLspExtension();
  await extension.activate();
  return extension;
}

/** Until `condition` holds: the extension's work runs in callbacks (process checks, restarts). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) {
      assert.fail(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const commandOf = (index: number) => [clients()[index].serverOptions.command, ...clients()[index].serverOptions.args];
const status = () => state.statusBar[0];

test("a workspace with suites starts `rag-lsp serve` with the settings and the trust", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  state.markers = 1;
  state.settings.defaults = { "ragLsp.runTimeout": 60, "ragLsp.serverCommand": [] };
  state.settings.global = { "ragLsp.runTimeout": 30, "ragLsp.pythonPath": "" };
  await activate();
  assert.equal(clients().length, 1);
  const [client] = clients();
  assert.ok(client.started);
  assert.equal(client.id, "ragLsp");
  assert.deepEqual([client.serverOptions.command, ...client.serverOptions.args], ["rag-lsp", "serve"]);
  assert.deepEqual(client.clientOptions.initializationOptions(), { runTimeout: 30, trusted: false });
  assert.ok(client.clientOptions.documentSelector.some((filter: { language: string }) => filter.language === "jsonl"));
  assert.ok(state.commands.has("ragLsp.restartServer"));
  assert.deepEqual(state.errors, []);
});

test("workspace/configuration answers carry the trust; granting trust tells the server", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  state.markers = 1;
  state.settings.workspace = { "ragLsp.severity": { RAG207: "off" } };
  await activate();
  const [client] = clients();
  const configuration = client.clientOptions.middleware.workspace.configuration;
  const next = async (params: { items: unknown[] }) => params.items.map((_, index) => `default ${index}`);
  const items = [{ section: "ragLsp" }, { section: "files" }];
  assert.deepEqual(await configuration({ items }, undefined, next), [
    { severity: { RAG207: "off" }, trusted: false },
    "default 1",
  ]);
  assert.deepEqual(client.notifications, []);

  vscode.workspace.isTrusted = true;
  state.trust.fire();
  assert.deepEqual(client.notifications, [
    {
      method: "workspace/didChangeConfiguration",
      params: { settings: { ragLsp: { severity: { RAG207: "off" }, trusted: true } } },
    },
  ]);
  assert.equal((await configuration({ items }, undefined, next))[0].trusted, true);
  assert.equal(client.clientOptions.initializationOptions().trusted, true, "a restart starts trusted");
});

test("ragLsp.restartServer starts a new server with the current command", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  const python = executable("python3", "#!/bin/sh\nexit 0\n");
  state.markers = 1;
  await activate();
  state.settings.global = { "ragLsp.pythonPath": python };
  await vscode.commands.executeCommand("ragLsp.restartServer");
  assert.equal(clients().length, 2);
  assert.ok(clients()[0].stopped);
  assert.deepEqual([clients()[1].serverOptions.command, ...clients()[1].serverOptions.args], [
    python,
    "-m",
    "rag_lsp",
    "serve",
  ]);
});

test("changing the server command restarts; changing a server setting is sent", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  state.markers = 1;
  await activate();
  state.settings.global = { "ragLsp.maxLineBytes": 2048 };
  state.configuration.fire({ affectsConfiguration: (section) => section === "ragLsp.maxLineBytes" });
  assert.deepEqual(clients()[0].notifications, [
    { method: "workspace/didChangeConfiguration", params: { settings: { ragLsp: { maxLineBytes: 2048, trusted: false } } } },
  ]);
  state.configuration.fire({ affectsConfiguration: (section) => section === "ragLsp.serverCommand" });
  await settle();
  await extension?.start();
  assert.equal(clients().length, 2);
  assert.ok(clients()[0].stopped);
});

test("without rag-lsp the user is told to `pip install rag-lsp`, once, and nothing starts", async () => {
  state.markers = 1;
  await activate();
  assert.equal(clients().length, 0);
  assert.equal(state.errors.length, 1);
  assert.match(state.errors[0], /the language server was not found/);
  assert.ok(state.errors[0].includes("pip install rag-lsp"), state.errors[0]);
  assert.deepEqual(state.errorButtons, [["Select Interpreter", "Open Setting", "Show Install Command"]]);
  assert.equal(status().text, "$(error) rag-lsp: not found");
  assert.ok(status().visible);
});

test("a pythonPath without rag_lsp gets the interpreter's own pip command", { skip: !posix }, async () => {
  const python = executable(
    "python",
    "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'rag_lsp'\" >&2\nexit 1\n",
  );
  state.markers = 1;
  state.settings.global = { "ragLsp.pythonPath": python };
  await activate();
  assert.equal(clients().length, 0);
  assert.equal(state.errors.length, 1);
  assert.ok(state.errors[0].includes(`${python} -m pip install rag-lsp`), state.errors[0]);
  assert.ok(state.output.includes(`  [2] ragLsp.pythonPath: \`${python}\` has no rag_lsp module`), state.output.join("\n"));
});

test("a server that fails to start is reported with the install command", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  fakeClient.failStart = new Error("Pending response rejected since connection got disposed");
  state.markers = 1;
  await activate();
  assert.equal(state.errors.length, 1);
  assert.match(state.errors[0], /could not start: Pending response rejected/);
  assert.equal(status().text, "$(error) rag-lsp: rag-lsp on PATH");
  assert.ok(state.errors[0].includes("pip install rag-lsp"));
  assert.equal(extension?.client, undefined);
});

test("with no suite in the workspace the server waits for a suite, dataset or manifest", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  await activate();
  assert.equal(clients().length, 0);
  state.opened.fire(document("/work/space/docker-compose.yaml", "yaml"));
  state.opened.fire(document("/work/space/notes.json", "json"));
  // A Python project's own pyproject.toml, with no [tool.rag-lsp] table.
  state.opened.fire(document("/work/space/pyproject.toml", "toml", "[project]\nname = 'space'\n"));
  await settle();
  assert.equal(clients().length, 0);
  state.opened.fire(document("/work/space/evals/code.suite.yaml", "yaml"));
  await settle();
  assert.equal(clients().length, 1);
  state.opened.fire(document("/work/space/data/cases.jsonl", "jsonl"));
  await settle();
  assert.equal(clients().length, 1, "one server");
});

test("an open dataset starts the server at once", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  vscode.workspace.textDocuments = [document("/tmp/cases.jsonl", "jsonl")];
  await activate();
  assert.equal(clients().length, 1);
});

test("context keys tell menus which run commands the server offers", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  fakeClient.offeredCommands = ["ragLsp.runCase", "ragLsp.runSuite", "ragLsp.clearResults"];
  state.markers = 1;
  await activate();
  const contexts = state.executed.filter((call) => call.command === "setContext").map((call) => call.args);
  assert.deepEqual(contexts, [
    ["ragLsp.offers.runCase", true],
    ["ragLsp.offers.runSuite", true],
    ["ragLsp.offers.clearResults", true],
  ]);
  // The language client registers the offered commands itself; the extension must not.
  assert.deepEqual([...state.commands.keys()], ["ragLsp.restartServer", "ragLsp.showOutput"]);
});

test("the Python extension's interpreter runs the server; the output says which rule won", { skip: !posix }, async () => {
  const python = executable("python", "#!/bin/sh\nexit 0\n");
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  installPython(python, "3.12.1");
  state.markers = 1;
  vscode.workspace.isTrusted = true;
  await activate();
  assert.deepEqual(commandOf(0), [python, "-m", "rag_lsp", "serve"]);
  assert.ok(
    state.output.includes(
      `  Starting the server found by rule 3 (the interpreter selected in the Python extension): ${python} -m rag_lsp serve`,
    ),
    state.output.join("\n"),
  );
  assert.equal(status().text, "$(check) rag-lsp: Python 3.12.1");
  assert.match(status().tooltip ?? "", /Found by: the interpreter selected in the Python extension/);
  assert.equal(status().command, "ragLsp.showOutput");
  assert.deepEqual(state.errors, []);
});

test("selecting another interpreter in the Python extension restarts the server on it", { skip: !posix }, async () => {
  const first = executable("python", "#!/bin/sh\nexit 0\n");
  const second = executable("python3.12", "#!/bin/sh\nexit 0\n");
  const python = installPython(first);
  state.markers = 1;
  vscode.workspace.isTrusted = true;
  await activate();
  assert.equal(python.listeners(), 1);
  python.select(first);
  await settle();
  assert.equal(clients().length, 1, "the interpreter it runs on: no restart");
  assert.ok(!state.output.some((line) => line.endsWith("finding the server again.")));
  python.select(second, "3.12.0");
  await until(() => clients().length === 2 && clients()[1].started, "a second server");
  assert.ok(clients()[0].stopped);
  assert.deepEqual(commandOf(1), [second, "-m", "rag_lsp", "serve"]);
  assert.ok(state.output.includes(`The Python extension selected ${second}: finding the server again.`), state.output.join("\n"));
});

test("with no interpreter, selecting one that has rag-lsp starts the server", { skip: !posix }, async () => {
  const python = installPython(undefined);
  state.markers = 1;
  vscode.workspace.isTrusted = true;
  await activate();
  assert.equal(clients().length, 0);
  assert.equal(state.errors.length, 1);
  const chosen = executable("python", "#!/bin/sh\nexit 0\n");
  python.select(chosen);
  await until(() => clients().length === 1 && clients()[0].started, "a server");
  assert.deepEqual(commandOf(0), [chosen, "-m", "rag_lsp", "serve"]);
  assert.equal(state.errors.length, 1, "no second notification");
});

test("a server from ragLsp.pythonPath stays when the Python extension's interpreter changes", { skip: !posix }, async () => {
  const mine = executable("mine", "#!/bin/sh\nexit 0\n");
  const python = installPython(executable("python", "#!/bin/sh\nexit 0\n"));
  state.markers = 1;
  vscode.workspace.isTrusted = true;
  state.settings.global = { "ragLsp.pythonPath": mine };
  await activate();
  python.select(executable("other", "#!/bin/sh\nexit 0\n"));
  await settle();
  assert.equal(clients().length, 1);
  assert.ok(!clients()[0].stopped);
});

test("the Python extension installed after start gives its interpreter to a server not found before", { skip: !posix }, async () => {
  state.markers = 1;
  vscode.workspace.isTrusted = true;
  await activate();
  assert.equal(clients().length, 0);
  installPython(executable("python", "#!/bin/sh\nexit 0\n"));
  await until(() => clients().length === 1, "a server");
  assert.equal(clients()[0].serverOptions.args.join(" "), "-m rag_lsp serve");
});

test("the workspace's .venv with rag-lsp serves before PATH, once the workspace is trusted", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  // The workspace folder is a real one here: the rule looks for the venv on disk.
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "rag-lsp-ws-"));
  const saved = vscode.workspace.workspaceFolders;
  vscode.workspace.workspaceFolders = [{ uri: { fsPath: folder }, name: "ws", index: 0 }];
  try {
    fs.mkdirSync(path.join(folder, ".venv", "bin"), { recursive: true });
    // Its module check prints the version, as an interpreter with rag_lsp does.
    const python = path.join(folder, ".venv", "bin", "python");
    fs.writeFileSync(python, "#!/bin/sh\necho 3.12.4\n", { mode: 0o755 });
    state.markers = 1;
    await activate();
    assert.deepEqual(commandOf(0), ["rag-lsp", "serve"], "untrusted: the venv is not run");
    assert.ok(state.output.includes(`  [4] the workspace's .venv or venv: \`${python}\` is not run: the workspace is not trusted`), state.output.join("\n"));
    vscode.workspace.isTrusted = true;
    state.trust.fire();
    await until(() => clients().length === 2 && clients()[1].started, "a second server");
    assert.deepEqual(commandOf(1), [python, "-m", "rag_lsp", "serve"]);
    assert.ok(
      state.output.includes(`  Starting the server found by rule 4 (the workspace's .venv or venv): ${python} -m rag_lsp serve`),
      state.output.join("\n"),
    );
    assert.equal(status().text, "$(check) rag-lsp: Python 3.12.4 (.venv)");
    assert.deepEqual(state.warnings, []);
  } finally {
    vscode.workspace.workspaceFolders = saved;
    fs.rmSync(folder, { recursive: true, force: true });
  }
});

test("an untrusted workspace does not run the selected interpreter; trusting it does", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  const python = executable("python", "#!/bin/sh\nexit 0\n");
  installPython(python);
  state.markers = 1;
  await activate();
  assert.deepEqual(commandOf(0), ["rag-lsp", "serve"]);
  vscode.workspace.isTrusted = true;
  state.trust.fire();
  await until(() => clients().length === 2 && clients()[1].started, "a second server");
  assert.deepEqual(commandOf(1), [python, "-m", "rag_lsp", "serve"]);
});

test("the notification's buttons: the Python extension's picker, the setting, the install command", { skip: !posix }, async () => {
  installPython(undefined);
  state.markers = 1;
  vscode.workspace.isTrusted = true;
  state.answers.push("Select Interpreter");
  await activate();
  await until(() => state.executed.some((call) => call.command === "python.setInterpreter"), "the interpreter picker");
  await extension?.stop();
  extension?.dispose();

  reset();
  state.markers = 1;
  vscode.workspace.isTrusted = true;
  state.answers.push("Open Setting");
  await activate();
  await until(() => state.executed.some((call) => call.command === "workbench.action.openSettings"), "the settings");
  const open = state.executed.find((call) => call.command === "workbench.action.openSettings");
  assert.deepEqual(open?.args, ["ragLsp.pythonPath"]);
  await extension?.stop();
  extension?.dispose();

  reset();
  installPython(path.join(bin, "python"));
  executable("python", "#!/bin/sh\necho \"No module named 'rag_lsp'\" >&2\nexit 1\n");
  state.markers = 1;
  vscode.workspace.isTrusted = true;
  state.answers.push("Show Install Command");
  await activate();
  await until(() => state.infos.length === 1, "the install command");
  assert.equal(state.clipboard, `${path.join(bin, "python")} -m pip install rag-lsp`);
  assert.ok(state.infos[0].includes(state.clipboard));
  assert.ok(state.output.includes(`Install the language server with: ${state.clipboard}`));
});

test("without the Python extension, Select Interpreter sets ragLsp.pythonPath and the server starts with it", { skip: !posix }, async () => {
  const python = executable("python", "#!/bin/sh\nexit 0\n");
  state.markers = 1;
  state.answers.push("Select Interpreter", [vscode.Uri.file(python)]);
  await activate();
  await until(() => state.updates.length === 1, "the setting");
  assert.deepEqual(state.updates, [{ key: "ragLsp.pythonPath", value: python, target: 2 }]);
  state.configuration.fire({ affectsConfiguration: (section) => section === "ragLsp.pythonPath" });
  await until(() => clients().length === 1 && clients()[0].started, "a server");
  assert.deepEqual(commandOf(0), [python, "-m", "rag_lsp", "serve"]);
});

test("importStrategy useBundled runs the bundled copy, even with rag-lsp on PATH", { skip: !posix }, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "rag-lsp-bundle-"));
  try {
    fs.mkdirSync(path.join(root, "bundled", "tool"), { recursive: true });
    fs.mkdirSync(path.join(root, "bundled", "libs", "rag_lsp"), { recursive: true });
    const launcher = path.join(root, "bundled", "tool", "rag_lsp_bundled.py");
    fs.writeFileSync(launcher, "");
    const python = executable("python3", '#!/bin/sh\n[ "$2" = --check ] && exit 0\nexit 1\n');
    executable("rag-lsp", "#!/bin/sh\nexit 0\n");
    state.markers = 1;
    state.settings.global = { "ragLsp.importStrategy": "useBundled" };
    extension = new RagLspExtension(root);
    await extension.activate();
    assert.deepEqual(commandOf(0), [python, launcher, "serve"]);
    assert.match(status().text, /bundled rag-lsp/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("a run of a case that several suites read asks which, all first", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  state.markers = 1;
  await activate();
  const uri = "file:///work/space/.punica/evals/gateway.jsonl";
  fakeClient.answers.set("textDocument/codeAction", () =>
    ["recorded", "live"].map((suite) => ({
      title: `Run this case in ${suite}`,
      command: { title: "", command: "ragLsp.runCase", arguments: [{ uri, line: 2, suite }] },
    })),
  );
  const execute = clients()[0].clientOptions.middleware.executeCommand;
  const sent: unknown[] = [];
  const next = async (command: string, args: unknown[]) => sent.push([command, args]);
  state.answers.push(2);
  await execute("ragLsp.runCase", [{ uri, line: 2, suite: null }], next);
  assert.deepEqual(state.quickPicks[0].map((item) => item.label), ["All 2 suites", "recorded", "live"]);
  assert.deepEqual(sent, [["ragLsp.runCase", [{ uri, line: 2, suite: "live" }]]]);
  state.answers.push(0);
  await execute("ragLsp.runCase", [{ uri, line: 2, suite: null }], next);
  assert.deepEqual(sent[1], ["ragLsp.runCase", [{ uri, line: 2, suite: null }]]);
  state.answers.push(undefined);
  await execute("ragLsp.runCase", [{ uri, line: 2, suite: null }], next);
  assert.equal(sent.length, 2, "escape runs nothing");
  await execute("ragLsp.runCase", [{ uri, line: 2, suite: "live" }], next);
  assert.equal(state.quickPicks.length, 3, "a named suite is run at once");
  assert.equal(sent.length, 3);
});
