import assert from "node:assert/strict";
import { test } from "node:test";

import { everySuiteRun, runActionsParams, suiteChoices } from "../runs";

const uri = "file:///ws/.punica/evals/gateway.jsonl";
const action = (suite: string, line = 3) => ({
  title: `Run this case in ${suite}`,
  kind: "source.ragLsp.runCase",
  command: { title: `Run this case in ${suite}`, command: "ragLsp.runCase", arguments: [{ uri, line, suite }] },
});

test("only a run of a case that names no suite asks which suites", () => {
  assert.deepEqual(everySuiteRun("ragLsp.runCase", [{ uri, line: 3, suite: null }]), { uri, line: 3, suite: null });
  assert.deepEqual(everySuiteRun("ragLsp.runCase", [{ uri, line: 3 }]), { uri, line: 3, suite: undefined });
  assert.equal(everySuiteRun("ragLsp.runCase", [{ uri, line: 3, suite: "live" }]), undefined);
  assert.equal(everySuiteRun("ragLsp.runSuite", [{ uri, line: 3 }]), undefined);
  assert.equal(everySuiteRun("ragLsp.runCase", []), undefined);
  assert.equal(everySuiteRun("ragLsp.runCase", [null]), undefined);
});

test("the quick pick offers every suite first, then each suite the server can run the case in", () => {
  const run = { uri, line: 3, suite: null };
  const choices = suiteChoices(run, [action("recorded"), action("live"), action("live"), action("other", 4), { title: "x" }]);
  assert.deepEqual(choices, [
    { label: "All 2 suites", description: "recorded, live", args: run },
    { label: "recorded", description: "this suite only", args: { uri, line: 3, suite: "recorded" } },
    { label: "live", description: "this suite only", args: { uri, line: 3, suite: "live" } },
  ]);
  assert.deepEqual(suiteChoices(run, [action("recorded")]), [], "one suite: nothing to ask");
  assert.deepEqual(suiteChoices(run, null), []);
});

test("the server is asked for its run actions on the case's line", () => {
  assert.deepEqual(runActionsParams({ uri, line: 7 }), {
    textDocument: { uri },
    range: { start: { line: 7, character: 0 }, end: { line: 7, character: 0 } },
    context: { diagnostics: [], only: ["source.ragLsp.runCase"] },
  });
});
