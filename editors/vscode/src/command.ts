// How the rag-lsp server is started, and what to tell the user when it cannot be.
//
// Pure functions, no `vscode` import: file system and process checks are passed in.

import * as path from "path";

export const INSTALL_COMMAND = "pip install rag-lsp";

export interface CommandSettings {
  /** `ragLsp.serverCommand`: program and arguments. */
  serverCommand?: unknown;
  /** `ragLsp.pythonPath`: an interpreter with rag-lsp installed. */
  pythonPath?: unknown;
}

export interface Expansions {
  workspaceFolder?: string;
  home?: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which setting chose the command. */
  source: "serverCommand" | "pythonPath" | "default";
  /** Settings that were set but unusable, and ignored. */
  problems: string[];
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

/**
 * The server's command: `ragLsp.serverCommand` when set, else
 * `<ragLsp.pythonPath> -m rag_lsp serve`, else `rag-lsp serve`.
 */
export function resolveServerCommand(settings: CommandSettings, expansions: Expansions = {}): ServerCommand {
  const problems: string[] = [];
  const { serverCommand, pythonPath } = settings;
  if (Array.isArray(serverCommand) && serverCommand.length > 0) {
    if (serverCommand.every((part) => typeof part === "string") && serverCommand[0].trim() !== "") {
      const [command, ...args] = serverCommand.map((part: string) => expand(part, expansions));
      return { command, args, source: "serverCommand", problems };
    }
    problems.push("ragLsp.serverCommand must be a list of strings, the program first; it is ignored");
  } else if (serverCommand !== undefined && serverCommand !== null && !Array.isArray(serverCommand)) {
    problems.push("ragLsp.serverCommand must be a list of strings, the program first; it is ignored");
  }
  if (typeof pythonPath === "string" && pythonPath.trim() !== "") {
    return {
      command: expand(pythonPath.trim(), expansions),
      args: ["-m", "rag_lsp", "serve"],
      source: "pythonPath",
      problems,
    };
  }
  return { command: "rag-lsp", args: ["serve"], source: "default", problems };
}

/** The install command for the environment the server is started from. */
export function installCommand(server: ServerCommand): string {
  if (server.source === "pythonPath") {
    return `${quote(server.command)} -m pip install rag-lsp`;
  }
  return INSTALL_COMMAND;
}

function quote(value: string): string {
  return /^[\w@%+=:,./\\-]+$/.test(value) ? value : `"${value.replace(/"/g, '\\"')}"`;
}

/** Why the server could not start, as the user reads it. */
export type StartFailure =
  | { kind: "notFound" }
  | { kind: "moduleMissing"; detail?: string }
  | { kind: "failed"; detail?: string };

export function failureMessage(server: ServerCommand, failure: StartFailure): string {
  const install = installCommand(server);
  const shown = [server.command, ...server.args].join(" ");
  switch (failure.kind) {
    case "notFound":
      if (server.source === "default") {
        return (
          "rag-lsp: the `rag-lsp` command was not found on PATH. Install the language server with " +
          `\`${install}\` (in the Python environment VS Code starts from), or set ` +
          "`ragLsp.pythonPath` to a Python interpreter that has it, or `ragLsp.serverCommand`."
        );
      }
      return (
        `rag-lsp: \`${server.command}\` (from ragLsp.${server.source}) was not found. ` +
        `Fix the setting, or install the language server with \`${install}\`.`
      );
    case "moduleMissing":
      return (
        `rag-lsp: the Python interpreter \`${server.command}\` (from ragLsp.pythonPath) has no rag_lsp module. ` +
        `Install it with \`${install}\`.` +
        (failure.detail ? ` (${firstLine(failure.detail)})` : "")
      );
    case "failed":
      return (
        `rag-lsp: the language server \`${shown}\` could not start` +
        (failure.detail ? `: ${firstLine(failure.detail)}` : "") +
        `. Is rag-lsp installed? \`${install}\``
      );
  }
}

function firstLine(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  // A Python traceback ends with the line that says what went wrong.
  return lines.length ? lines[lines.length - 1] : text.trim();
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

/** The check that tells a missing rag_lsp module from other failures, for `ragLsp.pythonPath`. */
export const MODULE_CHECK_ARGS = ["-c", "import rag_lsp"];

/**
 * What is wrong before the server is started, or `undefined` when it looks
 * startable: the program is missing, or (for `ragLsp.pythonPath`) the interpreter
 * cannot import rag_lsp. `runModuleCheck` runs the interpreter with
 * {@link MODULE_CHECK_ARGS} and gives its exit status and error output.
 */
export function preflight(
  server: ServerCommand,
  host: Platform,
  runModuleCheck: (python: string) => { status: number | null; stderr: string; error?: Error },
): StartFailure | undefined {
  const program = findExecutable(server.command, host);
  if (program === undefined) {
    return { kind: "notFound" };
  }
  if (server.source === "pythonPath") {
    const result = runModuleCheck(program);
    if (result.error) {
      return { kind: "failed", detail: result.error.message };
    }
    if (result.status !== 0) {
      return /No module named/.test(result.stderr)
        ? { kind: "moduleMissing", detail: result.stderr }
        : { kind: "failed", detail: result.stderr };
    }
  }
  return undefined;
}
