import assert from "node:assert/strict";
import { test } from "node:test";

import {
  CLIENT_SETTINGS,
  SERVER_SETTINGS,
  answerConfiguration,
  changeConcernsServer,
  changeNeedsRestart,
  commandContextKeys,
  didChangeConfigurationParams,
  explicitValue,
  serverSettings,
} from "../settings";

test("explicitValue takes the most specific scope the user set, and nothing for defaults", () => {
  assert.equal(explicitValue({ defaultValue: 60 }), undefined);
  assert.equal(explicitValue(undefined), undefined);
  assert.equal(explicitValue({ defaultValue: 60, globalValue: 30 }), 30);
  assert.equal(explicitValue({ defaultValue: 60, globalValue: 30, workspaceValue: 10 }), 10);
  assert.equal(explicitValue({ globalValue: 30, workspaceValue: 10, workspaceFolderValue: 5 }), 5);
  assert.equal(explicitValue({ globalValue: null }), null);
});

test("serverSettings sends what the user set, plain, and always the trust", () => {
  const set: Record<string, unknown> = { severity: { RAG207: "off" }, runTimeout: 30, baseline: null };
  const settings = serverSettings((key) => set[key], false);
  assert.deepEqual(settings, { severity: { RAG207: "off" }, runTimeout: 30, baseline: null, trusted: false });
  assert.notEqual(settings.severity, set.severity, "a copy, not the configuration's object");
  assert.deepEqual(serverSettings(() => undefined, true), { trusted: true });
});

test("serverSettings never forwards the extension's own settings or a user's 'trusted'", () => {
  const everything = (key: string) => `value of ${key}`;
  const settings = serverSettings(everything as never, false);
  for (const key of CLIENT_SETTINGS) {
    assert.ok(!(key in settings), key);
  }
  assert.equal(settings.trusted, false);
  assert.deepEqual(Object.keys(settings).sort(), [...SERVER_SETTINGS, "trusted"].sort());
});

test("answerConfiguration answers section ragLsp with the server settings, per scope", () => {
  const answer = answerConfiguration(
    [{ section: "ragLsp", scopeUri: "file:///a" }, { section: "editor" }, { section: "ragLsp" }],
    [{ serverCommand: ["x"], trace: { server: "off" } }, { tabSize: 2 }, {}],
    (scope) => ({ scope, trusted: true }),
  );
  assert.deepEqual(answer, [{ scope: "file:///a", trusted: true }, { tabSize: 2 }, { scope: undefined, trusted: true }]);
});

test("didChangeConfigurationParams nests the settings under ragLsp", () => {
  assert.deepEqual(didChangeConfigurationParams({ trusted: true }), { settings: { ragLsp: { trusted: true } } });
});

test("a change of the server command restarts; a change of a server setting is sent", () => {
  const only = (section: string) => (asked: string) => asked === section;
  assert.ok(changeNeedsRestart(only("ragLsp.serverCommand")));
  assert.ok(changeNeedsRestart(only("ragLsp.pythonPath")));
  // The globs choose the documents the client gives the server: its selector is made when it starts.
  assert.ok(changeNeedsRestart(only("ragLsp.suiteGlobs")));
  assert.ok(changeNeedsRestart(only("ragLsp.manifestGlobs")));
  assert.ok(!changeNeedsRestart(only("ragLsp.severity")));
  assert.ok(changeConcernsServer(only("ragLsp.severity")));
  assert.ok(changeConcernsServer(only("ragLsp.baseline")));
  assert.ok(!changeConcernsServer(only("ragLsp.trace.server")));
  assert.ok(!changeConcernsServer(only("editor.tabSize")));
});

test("commandContextKeys says which server commands are offered", () => {
  assert.deepEqual(commandContextKeys(undefined), {
    "ragLsp.offers.runCase": false,
    "ragLsp.offers.runSuite": false,
    "ragLsp.offers.clearResults": false,
  });
  assert.deepEqual(commandContextKeys(["ragLsp.runCase", "ragLsp.clearResults", "other"]), {
    "ragLsp.offers.runCase": true,
    "ragLsp.offers.runSuite": false,
    "ragLsp.offers.clearResults": true,
  });
});
