// extension.ts driven through a stand-in for VS Code and the language client.
import { clients, document, fakeClient, reset, state, vscode } from "../testing/fake-vscode"; // first: installs the stand-in

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, test } from "node:test";

import { RagLspExtension } from "../extension";

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

const settle = () => new Promise((resolve) => setImmediate(resolve));

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

test("without rag-lsp the user is told to `pip install rag-lsp`, and nothing starts", async () => {
  state.markers = 1;
  await activate();
  assert.equal(clients().length, 0);
  assert.equal(state.errors.length, 1);
  assert.match(state.errors[0], /`rag-lsp` command was not found on PATH/);
  assert.ok(state.errors[0].includes("pip install rag-lsp"), state.errors[0]);
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
});

test("a server that fails to start is reported with the install command", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  fakeClient.failStart = new Error("Pending response rejected since connection got disposed");
  state.markers = 1;
  await activate();
  assert.equal(state.errors.length, 1);
  assert.match(state.errors[0], /could not start: Pending response rejected/);
  assert.ok(state.errors[0].includes("pip install rag-lsp"));
  assert.equal(extension?.client, undefined);
});

test("with no suite in the workspace the server waits for a suite, dataset or manifest", { skip: !posix }, async () => {
  executable("rag-lsp", "#!/bin/sh\nexit 0\n");
  await activate();
  assert.equal(clients().length, 0);
  state.opened.fire(document("/work/space/docker-compose.yaml", "yaml"));
  state.opened.fire(document("/work/space/notes.json", "json"));
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
  assert.deepEqual([...state.commands.keys()], ["ragLsp.restartServer"]);
});
