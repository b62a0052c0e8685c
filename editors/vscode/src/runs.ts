// "Run case (N suites)": the one lens of a case line that several suites read runs
// the case in all of them; VS Code first offers a quick pick of those suites.
//
// Pure functions, no `vscode` import.

export const RUN_CASE = "ragLsp.runCase";
/** The code action kind of the server's "Run this case in <suite>" actions. */
export const RUN_CASE_KIND = "source.ragLsp.runCase";

export interface RunCaseArguments {
  uri: string;
  line: number;
  suite?: string | null;
}

/** The arguments of a run that names no suite (every suite that reads the dataset), else `undefined`. */
export function everySuiteRun(command: string, args: readonly unknown[]): RunCaseArguments | undefined {
  if (command !== RUN_CASE || args.length !== 1) {
    return undefined;
  }
  const given = args[0] as Partial<RunCaseArguments> | null;
  if (!given || typeof given !== "object" || typeof given.uri !== "string" || typeof given.line !== "number") {
    return undefined;
  }
  return given.suite === undefined || given.suite === null ? { uri: given.uri, line: given.line, suite: given.suite } : undefined;
}

/** What a code action of the server looks like on the wire (the fields used here). */
export interface WireCodeAction {
  title?: string;
  kind?: string;
  command?: { command?: string; arguments?: unknown[] } | string;
}

export interface SuiteChoice {
  label: string;
  description?: string;
  /** The arguments the run is sent with. */
  args: RunCaseArguments;
}

/**
 * The quick pick's items for a case line: first every suite at once (what the
 * lens says it does), then each suite the server offers a "Run this case in
 * <suite>" action for. Fewer than two suites: nothing to ask.
 */
export function suiteChoices(run: RunCaseArguments, actions: readonly WireCodeAction[] | null | undefined): SuiteChoice[] {
  const suites: string[] = [];
  for (const action of actions ?? []) {
    const command = typeof action.command === "object" ? action.command : undefined;
    if (command?.command !== RUN_CASE) {
      continue;
    }
    const given = command.arguments?.[0] as Partial<RunCaseArguments> | undefined;
    if (given?.uri === run.uri && given.line === run.line && typeof given.suite === "string" && !suites.includes(given.suite)) {
      suites.push(given.suite);
    }
  }
  if (suites.length < 2) {
    return [];
  }
  return [
    { label: `All ${suites.length} suites`, description: suites.join(", "), args: run },
    ...suites.map((suite) => ({ label: suite, description: "this suite only", args: { ...run, suite } })),
  ];
}

/** The `textDocument/codeAction` request that asks the server which suites can run the case. */
export function runActionsParams(run: RunCaseArguments) {
  const at = { line: run.line, character: 0 };
  return {
    textDocument: { uri: run.uri },
    range: { start: at, end: at },
    context: { diagnostics: [], only: [RUN_CASE_KIND] },
  };
}
