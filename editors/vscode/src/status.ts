// The status bar item: the server's state and the interpreter it runs on.
//
// Pure functions, no `vscode` import.

import * as path from "path";

import { Interpreter, RULE_NAMES, ServerCommand } from "./command";

export type ServerState = "starting" | "running" | "stopped" | "notFound" | "failed";

export interface StatusItem {
  text: string;
  tooltip: string;
  /** Shown with the error background. */
  error: boolean;
}

/** Folders that hold a system's interpreters rather than name an environment. */
const SYSTEM_FOLDERS = new Set(["", "usr", "local", "opt"]);

/** `3.11.4 (.venv)`: the version when known, and the environment's folder (not `/usr`). */
export function interpreterLabel(interpreter: Interpreter): string {
  const p = interpreter.path.includes("\\") ? path.win32 : path.posix;
  const folder = p.dirname(interpreter.path);
  const parent = p.basename(p.dirname(folder));
  const environment = ["bin", "Scripts"].includes(p.basename(folder)) && !SYSTEM_FOLDERS.has(parent) ? parent : undefined;
  if (interpreter.version) {
    return environment ? `${interpreter.version} (${environment})` : interpreter.version;
  }
  return environment ?? interpreter.path;
}

/** What the server runs on, in a few words: `Python 3.11.4 (.venv)`, `rag-lsp on PATH`. */
export function runsOn(server: ServerCommand): string {
  if (server.interpreter) {
    return `Python ${interpreterLabel(server.interpreter)}${server.rule === "bundled" ? ", bundled rag-lsp" : ""}`;
  }
  if (server.rule === "path") {
    return "rag-lsp on PATH";
  }
  return path.basename(server.command);
}

const ICONS: Record<ServerState, string> = {
  starting: "$(sync~spin)",
  running: "$(check)",
  stopped: "$(debug-stop)",
  notFound: "$(error)",
  failed: "$(error)",
};

const WORDS: Record<ServerState, string> = {
  starting: "starting",
  running: "running",
  stopped: "stopped",
  notFound: "not found",
  failed: "could not start",
};

export function statusItem(state: ServerState, server: ServerCommand | undefined, detail?: string): StatusItem {
  const lines = [`rag-lsp: ${WORDS[state]}`];
  let text = `${ICONS[state]} rag-lsp`;
  if (server && state !== "notFound") {
    text += `: ${runsOn(server)}`;
    lines.push(`Server: ${[server.command, ...server.args].join(" ")}`);
    lines.push(`Found by: ${RULE_NAMES[server.rule]}`);
  } else if (state === "notFound") {
    text += ": not found";
  }
  if (detail) {
    lines.push(detail);
  }
  lines.push("Click to show the rag-lsp output.");
  return { text, tooltip: lines.join("\n"), error: state === "notFound" || state === "failed" };
}
