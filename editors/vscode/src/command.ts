// How the rag-lsp server is found and started, and what to tell the user when it
// cannot be.
//
// Pure functions, no `vscode` import: the file system, the processes run to probe
// an interpreter and the Python extension are reached through a `Host`.

import * as path from "path";

export const INSTALL_COMMAND = "pip install rag-lsp";
/** The oldest Python rag-lsp runs on (`requires-python` in pyproject.toml). */
export const MINIMUM_PYTHON: readonly [number, number] = [3, 10];

/**
 * The rules that find the server, in the order `ragLsp.importStrategy:
 * fromEnvironment` (the default) tries them: the environment's rag-lsp, then the
 * copy bundled in a platform-specific build, when there is one. The first that
 * gives a server that can start wins. The workspace's own `.venv` comes after
 * what the user chose (the settings, the Python extension's interpreter) and
 * before PATH: a project that installs rag-lsp into its environment checks with
 * that version, as `rag-lsp check` run in that environment does.
 */
export const RULES = ["serverCommand", "pythonPath", "pythonExtension", "workspaceVenv", "path", "bundled"] as const;
export type Rule = (typeof RULES)[number];

/**
 * The order the rules are tried in, as Microsoft's Python tool extensions read
 * `importStrategy`: `useBundled` always uses the bundled copy (only
 * `ragLsp.serverCommand`, like their `path` setting, comes before it; the
 * environment serves only when the copy cannot), `fromEnvironment` uses the
 * environment's and falls back to the bundled copy.
 */
export function ruleOrder(importStrategy: unknown): Rule[] {
  return importStrategy === "useBundled"
    ? ["serverCommand", "bundled", "pythonPath", "pythonExtension", "workspaceVenv", "path"]
    : [...RULES];
}

/** How a rule is named in the output channel, the status bar and messages. */
export const RULE_NAMES: Record<Rule, string> = {
  serverCommand: "ragLsp.serverCommand",
  pythonPath: "ragLsp.pythonPath",
  pythonExtension: "the interpreter selected in the Python extension",
  workspaceVenv: "the workspace's .venv or venv",
  path: "`rag-lsp` on PATH",
  bundled: "the rag-lsp bundled with the extension",
};

export interface CommandSettings {
  /** `ragLsp.serverCommand`: program and arguments. */
  serverCommand?: unknown;
  /** `ragLsp.pythonPath`: an interpreter with rag-lsp installed. */
  pythonPath?: unknown;
  /** `ragLsp.importStrategy`: `useBundled` puts the bundled copy before the environment's rag-lsp. */
  importStrategy?: unknown;
  /** The workspace trust: an untrusted workspace's interpreter is never run. */
  trusted?: boolean;
  /** The workspace folders (file system paths), searched for a `.venv` or `venv`. */
  workspaceFolders?: readonly string[];
  /** `process.platform`: where a virtual environment keeps its interpreter (`Scripts\python.exe` on Windows). */
  platform?: string;
}

/** The folders a workspace's own virtual environment is looked for in, in this order. */
export const VENV_FOLDERS = [".venv", "venv"] as const;

/**
 * The interpreters of the virtual environments a workspace may hold, in the order
 * they are tried: each folder's `.venv`, then its `venv`. Where `python -m venv`
 * puts the interpreter: `bin/python`, or `Scripts\python.exe` on Windows.
 */
export function venvInterpreters(folders: readonly string[], platform: string | undefined): string[] {
  const windows = platform === "win32";
  const p = windows ? path.win32 : path.posix;
  const inside = windows ? ["Scripts", "python.exe"] : ["bin", "python"];
  return folders.flatMap((folder) => VENV_FOLDERS.map((venv) => p.join(folder, venv, ...inside)));
}

export interface Expansions {
  workspaceFolder?: string;
  home?: string;
}

/** A Python interpreter, as the Python extension or a setting names it. */
export interface Interpreter {
  path: string;
  /** `3.11.4`, when known. */
  version?: string;
}

/** What the Python extension says about the workspace's interpreter. */
export type PythonExtensionState =
  | { kind: "absent"; detail?: string }
  | { kind: "noInterpreter" }
  | { kind: "selected"; interpreter: Interpreter };

/** What running an interpreter told: why it cannot serve (`problem`), else its version. */
export interface Probe {
  problem?: string;
  version?: string;
}

/** What the resolution needs from the machine. */
export interface Host {
  /** The file `command` names, looked up on PATH unless it is a path; `undefined` when missing. */
  findExecutable(command: string): string | undefined;
  pythonExtension(): Promise<PythonExtensionState>;
  /** Whether `python` can import rag_lsp. */
  checkModule(python: string): Promise<Probe>;
  /** The launcher of the rag-lsp bundled in the extension, when this build has one. */
  bundledLauncher(): string | undefined;
  /** Whether `python` can run the bundled copy. */
  checkBundled(python: string, launcher: string): Promise<Probe>;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** The rule that chose the command. */
  rule: Rule;
  /** The Python interpreter that runs the server, when the rule names one. */
  interpreter?: Interpreter;
}

/** One rule tried: whether it gave the server, and why (not). */
export interface Attempt {
  rule: Rule;
  used: boolean;
  /** `not set`, `/v/bin/python has no rag_lsp module`, `/usr/bin/rag-lsp`. */
  reason: string;
  /** Whether the user set this rule up (a setting), so its failure deserves a warning. */
  configured: boolean;
}

export interface Resolution {
  server?: ServerCommand;
  /** The rules in the order they were tried (`ruleOrder`); an attempt's number is its place here. */
  order: Rule[];
  attempts: Attempt[];
  /** Settings that were set but unusable, and ignored. */
  problems: string[];
  /** The interpreter rag-lsp should be installed into, when one is known. */
  installInto?: Interpreter;
  /** The Python extension's interpreter was not run because the workspace is not trusted. */
  waitsForTrust: boolean;
  /** Whether the Python extension answered (installed, whatever it selected). */
  pythonExtension: boolean;
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~` expanded. */
export function expand(value: string, expansions: Expansions): string {
  let result = value;
  if (expansions.home && (result === "~" || result.startsWith("~/") || result.startsWith("~\\"))) {
    result = expansions.home + result.slice(1);
  }
  if (expansions.home) {
    result = result.split("${userHome}").join(expansions.home);
  }
  if (expansions.workspaceFolder) {
    result = result.split("${workspaceFolder}").join(expansions.workspaceFolder);
  }
  return result;
}

const MODULE_ARGS = ["-m", "rag_lsp", "serve"];

/** Whether `version` (`3.9.18`) is older than rag-lsp supports. */
export function tooOld(version: string | undefined): boolean {
  const match = /^(\d+)\.(\d+)/.exec(version ?? "");
  if (!match) {
    return false;
  }
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major < MINIMUM_PYTHON[0] || (major === MINIMUM_PYTHON[0] && minor < MINIMUM_PYTHON[1]);
}

/**
 * Finds the server, trying the rules in `ruleOrder(settings.importStrategy)`:
 * `ragLsp.serverCommand`; `ragLsp.pythonPath`; the interpreter selected in the
 * Python extension; the `.venv` or `venv` of a workspace folder (trusted
 * workspaces only); `rag-lsp` on PATH; the copy bundled in a platform-specific
 * build of the extension, run by the first interpreter that can (`ragLsp.pythonPath`,
 * the Python extension's, `python3` on PATH). A rule that is set but fails is
 * recorded and the next one is tried; every rule tried is in `attempts`, so the
 * output channel can say which won and why the others did not.
 */
export async function resolveServer(settings: CommandSettings, expansions: Expansions, host: Host): Promise<Resolution> {
  const order = ruleOrder(settings.importStrategy);
  const useBundled = settings.importStrategy === "useBundled";
  const attempts: Attempt[] = [];
  const problems: string[] = [];
  const resolution: Resolution = { order, attempts, problems, waitsForTrust: false, pythonExtension: false };
  const attempt = (rule: Rule, reason: string, configured = true) => {
    attempts.push({ rule, used: false, reason, configured });
    return false;
  };
  const use = (server: ServerCommand, reason: string) => {
    attempts.push({ rule: server.rule, used: true, reason, configured: true });
    resolution.server = server;
    return true;
  };
  const trusted = settings.trusted !== false;

  // The interpreters that ragLsp.pythonPath and the Python extension name, looked up
  // once: their own rules run rag_lsp from them, the bundled copy's rule runs the copy.
  type Named = { interpreter?: Interpreter; program?: string; reason: string; configured: boolean };
  let fromSetting: Named | undefined;
  const settingInterpreter = (): Named => {
    if (fromSetting) {
      return fromSetting;
    }
    if (typeof settings.pythonPath !== "string" || settings.pythonPath.trim() === "") {
      return (fromSetting = { reason: "not set", configured: false });
    }
    const given = expand(settings.pythonPath.trim(), expansions);
    const program = host.findExecutable(given);
    if (program === undefined) {
      return (fromSetting = { reason: `\`${given}\` was not found`, configured: true });
    }
    resolution.installInto = { path: given };
    return (fromSetting = { interpreter: { path: given }, program, reason: given, configured: true });
  };
  let fromExtension: Named | undefined;
  const extensionInterpreter = async (): Promise<Named> => {
    if (fromExtension) {
      return fromExtension;
    }
    const state = await host.pythonExtension();
    resolution.pythonExtension = state.kind !== "absent";
    if (state.kind === "absent") {
      const detail = state.detail ? ` (${state.detail})` : "";
      return (fromExtension = { reason: `the Python extension is not installed${detail}`, configured: false });
    }
    if (state.kind === "noInterpreter") {
      return (fromExtension = { reason: "no interpreter is selected", configured: false });
    }
    const { path: file, version } = state.interpreter;
    if (tooOld(version)) {
      const reason = `\`${file}\` is Python ${version}; rag-lsp needs ${MINIMUM_PYTHON.join(".")} or later`;
      return (fromExtension = { reason, configured: true });
    }
    if (!trusted) {
      resolution.waitsForTrust = true;
      return (fromExtension = { reason: `\`${file}\` is not run: the workspace is not trusted`, configured: false });
    }
    resolution.installInto ??= state.interpreter;
    return (fromExtension = { interpreter: state.interpreter, program: file, reason: file, configured: true });
  };

  const rules: Record<Rule, () => Promise<boolean>> = {
    serverCommand: async () => {
      const { serverCommand } = settings;
      if (serverCommand === undefined || serverCommand === null || (Array.isArray(serverCommand) && serverCommand.length === 0)) {
        return attempt("serverCommand", "not set", false);
      }
      if (!Array.isArray(serverCommand) || !serverCommand.every((part) => typeof part === "string") || serverCommand[0].trim() === "") {
        problems.push("ragLsp.serverCommand must be a list of strings, the program first; it is ignored");
        return attempt("serverCommand", "not a list of strings, the program first");
      }
      const [command, ...args] = serverCommand.map((part: string) => expand(part, expansions));
      const program = host.findExecutable(command);
      if (program === undefined) {
        return attempt("serverCommand", `\`${command}\` was not found`);
      }
      return use({ command, args, rule: "serverCommand" }, program);
    },
    pythonPath: async () => {
      const named = settingInterpreter();
      if (!named.interpreter || !named.program) {
        return attempt("pythonPath", named.reason, named.configured);
      }
      const given = named.interpreter.path;
      const probe = await host.checkModule(named.program);
      if (probe.problem !== undefined) {
        return attempt("pythonPath", `\`${given}\` ${probe.problem}`);
      }
      const interpreter = { path: given, version: probe.version };
      return use({ command: given, args: MODULE_ARGS, rule: "pythonPath", interpreter }, given);
    },
    pythonExtension: async () => {
      const named = await extensionInterpreter();
      if (!named.interpreter) {
        return attempt("pythonExtension", named.reason, named.configured);
      }
      const interpreter = named.interpreter;
      const probe = await host.checkModule(interpreter.path);
      if (probe.problem !== undefined) {
        return attempt("pythonExtension", `\`${interpreter.path}\` ${probe.problem}`);
      }
      return use({ command: interpreter.path, args: MODULE_ARGS, rule: "pythonExtension", interpreter }, interpreter.path);
    },
    // Not a setting: a workspace without a venv, or whose venv lacks rag-lsp, is
    // common and no reason to warn. Its interpreter is the workspace's own program,
    // so, like the Python extension's, it is never run in an untrusted workspace.
    workspaceVenv: async () => {
      const folders = settings.workspaceFolders ?? [];
      if (!folders.length) {
        return attempt("workspaceVenv", "no workspace folder", false);
      }
      const found = venvInterpreters(folders, settings.platform).filter((file) => host.findExecutable(file) !== undefined);
      if (!found.length) {
        const where = folders.length === 1 ? folders[0] : "any workspace folder";
        return attempt("workspaceVenv", `no ${VENV_FOLDERS.join(" or ")} in ${where}`, false);
      }
      if (!trusted) {
        resolution.waitsForTrust = true;
        const files = found.map((file) => `\`${file}\``).join(", ");
        return attempt("workspaceVenv", `${files} ${found.length === 1 ? "is" : "are"} not run: the workspace is not trusted`, false);
      }
      const reasons: string[] = [];
      for (const file of found) {
        const probe = await host.checkModule(file);
        if (probe.problem === undefined) {
          const interpreter = { path: file, version: probe.version };
          return use({ command: file, args: MODULE_ARGS, rule: "workspaceVenv", interpreter }, file);
        }
        reasons.push(`\`${file}\` ${probe.problem}`);
      }
      // The workspace's environment is where rag-lsp belongs, unless the user named one.
      resolution.installInto ??= { path: found[0] };
      return attempt("workspaceVenv", reasons.join("; "), false);
    },
    path: async () => {
      const onPath = host.findExecutable("rag-lsp");
      if (onPath === undefined) {
        return attempt("path", "not found on PATH", false);
      }
      return use({ command: "rag-lsp", args: ["serve"], rule: "path" }, onPath);
    },
    // Asked for (useBundled), its failure is worth a warning; as the fallback of
    // fromEnvironment, it is only said in the output channel.
    bundled: async () => {
      const launcher = host.bundledLauncher();
      if (launcher === undefined) {
        return attempt("bundled", "this build of the extension bundles no rag-lsp (the platform-specific one does)", useBundled);
      }
      const runners: Interpreter[] = [];
      const add = (runner: Interpreter | undefined) => {
        if (runner && !runners.some((known) => known.path === runner.path)) {
          runners.push(runner);
        }
      };
      add(settingInterpreter().interpreter);
      add((await extensionInterpreter()).interpreter);
      for (const name of ["python3", "python"]) {
        const found = host.findExecutable(name);
        add(found === undefined ? undefined : { path: found });
      }
      if (!runners.length) {
        return attempt("bundled", "no Python interpreter to run it (select one, or set ragLsp.pythonPath)", useBundled);
      }
      const reasons: string[] = [];
      for (const runner of runners) {
        const probe = await host.checkBundled(runner.path, launcher);
        if (probe.problem === undefined) {
          const interpreter = { path: runner.path, version: runner.version ?? probe.version };
          return use({ command: runner.path, args: [launcher, "serve"], rule: "bundled", interpreter }, `${runner.path} ${launcher}`);
        }
        reasons.push(`\`${runner.path}\` ${probe.problem}`);
      }
      return attempt("bundled", reasons.join("; "), useBundled);
    },
  };
  for (const rule of order) {
    if (await rules[rule]()) {
      break;
    }
  }
  return resolution;
}

/** The install command for the environment the server should run from. */
export function installCommand(into: Interpreter | undefined): string {
  return into ? `${quote(into.path)} -m pip install rag-lsp` : INSTALL_COMMAND;
}

function quote(value: string): string {
  return /^[\w@%+=:,./\\-]+$/.test(value) ? value : `"${value.replace(/"/g, '\\"')}"`;
}

/** The output channel's account of a resolution: each rule tried, and which won. */
export function describeResolution(resolution: Resolution): string[] {
  const number = (rule: Rule) => resolution.order.indexOf(rule) + 1;
  const lines = resolution.attempts.map(
    (attempt) => `[${number(attempt.rule)}] ${RULE_NAMES[attempt.rule]}: ${attempt.used ? "used, " : ""}${attempt.reason}`,
  );
  const server = resolution.server;
  if (server) {
    lines.push(
      `Starting the server found by rule ${number(server.rule)} (${RULE_NAMES[server.rule]}): ` +
        [server.command, ...server.args].join(" "),
    );
  } else {
    lines.push(`No rule found a language server. Install it with: ${installCommand(resolution.installInto)}`);
  }
  return lines;
}

/** Rules the user set up that failed before another won: worth a warning, not silence. */
export function skippedSettings(resolution: Resolution): string | undefined {
  if (!resolution.server) {
    return undefined;
  }
  const failed = resolution.attempts.filter((attempt) => !attempt.used && attempt.configured);
  if (!failed.length) {
    return undefined;
  }
  const reasons = failed.map((attempt) => `${RULE_NAMES[attempt.rule]}: ${attempt.reason}`).join("; ");
  return `rag-lsp: ${reasons}. Using ${RULE_NAMES[resolution.server.rule]} instead.`;
}

/** Why the server could not start, as the user reads it. */
export type StartFailure = { kind: "notFound" } | { kind: "failed"; detail?: string };

/** The buttons of the one notification shown when no server starts. */
export const ACTIONS = {
  selectInterpreter: "Select Interpreter",
  openSetting: "Open Setting",
  showInstall: "Show Install Command",
} as const;

export function failureActions(): string[] {
  return [ACTIONS.selectInterpreter, ACTIONS.openSetting, ACTIONS.showInstall];
}

export function failureMessage(resolution: Resolution, failure: StartFailure): string {
  const install = installCommand(resolution.installInto);
  if (failure.kind === "failed" && resolution.server) {
    const server = resolution.server;
    return (
      `rag-lsp: the language server \`${[server.command, ...server.args].join(" ")}\` ` +
      `(from ${RULE_NAMES[server.rule]}) could not start` +
      (failure.detail ? `: ${lastLine(failure.detail)}` : "") +
      `. Is rag-lsp installed? \`${install}\``
    );
  }
  const interpreter = resolution.installInto ? ` (\`${resolution.installInto.path}\` has no rag-lsp)` : "";
  return (
    `rag-lsp: the language server was not found${interpreter}. Select a Python interpreter that has it, ` +
    `set ragLsp.pythonPath, or install it: \`${install}\`.`
  );
}

/** A Python traceback ends with the line that says what went wrong. */
export function lastLine(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.length ? lines[lines.length - 1] : text.trim();
}

/**
 * Whether a change of the Python extension's interpreter (to `selected`, when
 * known) calls for a new server: not when a setting chose the server, nor when the
 * server already runs on that interpreter.
 */
export function interpreterChangeNeedsRestart(resolution: Resolution | undefined, selected?: string): boolean {
  const server = resolution?.server;
  if (server?.rule === "serverCommand" || server?.rule === "pythonPath") {
    return false;
  }
  return !(selected !== undefined && server?.rule === "pythonExtension" && server.interpreter?.path === selected);
}

export interface Platform {
  platform: NodeJS.Platform | string;
  env: { [key: string]: string | undefined };
  isFile: (file: string) => boolean;
}

/**
 * Where `command` is found: itself when it names a path, else the first match in
 * `PATH` (with the `PATHEXT` extensions on Windows); `undefined` when nowhere.
 */
export function findExecutable(command: string, host: Platform): string | undefined {
  const windows = host.platform === "win32";
  const p = windows ? path.win32 : path.posix;
  const extensions = windows
    ? ["", ...(host.env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)]
    : [""];
  const candidates = (base: string) => extensions.map((extension) => base + extension);
  if (command.includes("/") || (windows && command.includes("\\"))) {
    return candidates(command).find(host.isFile);
  }
  const searchPath = (windows ? host.env.Path ?? host.env.PATH : host.env.PATH) ?? "";
  for (const folder of searchPath.split(windows ? ";" : ":")) {
    if (!folder) {
      continue;
    }
    const found = candidates(p.join(folder, command)).find(host.isFile);
    if (found) {
      return found;
    }
  }
  return undefined;
}

/** The check that tells an interpreter with rag_lsp from one without; it prints the interpreter's version. */
export const MODULE_CHECK_ARGS = ["-c", "import sys, rag_lsp; print('%d.%d.%d' % sys.version_info[:3])"];

/** An interpreter's run, as the extension gets it. */
export interface RunResult {
  status: number | null;
  stdout?: string;
  stderr: string;
  error?: Error;
}

/** What a module check (or the bundled copy's `--check`) says: its version, or why it cannot serve. */
export function probeResult(result: RunResult, what = "rag_lsp"): Probe {
  if (result.error) {
    return { problem: `could not be run (${result.error.message})` };
  }
  if (result.status === 0) {
    const version = /^\d+\.\d+\.\d+/.exec((result.stdout ?? "").trim())?.[0];
    return version ? { version } : {};
  }
  if (what === "rag_lsp" && /No module named/.test(result.stderr)) {
    return { problem: "has no rag_lsp module" };
  }
  const detail = lastLine(result.stderr) || `exit status ${result.status}`;
  return { problem: what === "rag_lsp" ? `cannot import rag_lsp (${detail})` : detail };
}
