// A stand-in for the Python extension (`ms-python.python`), for the end-to-end
// test in real VS Code, where the Python extension cannot be downloaded. It serves
// the environments API exactly as `@vscode/python-extension` types it: the active
// interpreter is the `python.defaultInterpreterPath` setting (none when empty),
// changing that setting fires `onDidChangeActiveEnvironmentPath`, and
// `python.setInterpreter` asks for a path, as the real picker's "Enter
// interpreter path" does.
//
// e2e/python-stand-in/package.json is its manifest; e2e/run.mjs packages the two.

import type {
  ActiveEnvironmentPathChangeEvent,
  Environment,
  EnvironmentPath,
  EnvironmentVariablesChangeEvent,
  EnvironmentsChangeEvent,
  PythonExtension,
  ResolvedEnvironment,
} from "@vscode/python-extension";
import * as cp from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";

const SETTING = "defaultInterpreterPath";

function active(): string {
  return (vscode.workspace.getConfiguration("python").get<string>(SETTING) ?? "").trim();
}

function environmentPath(file: string): EnvironmentPath {
  return file ? { id: file, path: file } : { id: "DEFAULT_PYTHON", path: "python" };
}

function resolve(file: string): ResolvedEnvironment | undefined {
  if (!path.isAbsolute(file) || !fs.existsSync(file)) {
    return undefined;
  }
  const asked = cp.spawnSync(file, ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.prefix)"], {
    encoding: "utf8",
    timeout: 30_000,
  });
  if (asked.status !== 0) {
    return undefined;
  }
  const [version, prefix] = asked.stdout.trim().split(/\r?\n/);
  const [major, minor, micro] = version.split(".").map(Number);
  return {
    id: file,
    path: file,
    executable: { uri: vscode.Uri.file(file), bitness: "64-bit", sysPrefix: prefix },
    environment: { type: "VirtualEnvironment", name: path.basename(prefix), folderUri: vscode.Uri.file(prefix), workspaceFolder: undefined },
    version: { major, minor, micro, release: { level: "final", serial: 0 }, sysVersion: version },
    tools: ["Venv"],
  };
}

export function activate(context: vscode.ExtensionContext): Partial<PythonExtension> {
  const changed = new vscode.EventEmitter<ActiveEnvironmentPathChangeEvent>();
  const environmentsChanged = new vscode.EventEmitter<EnvironmentsChangeEvent>();
  const variablesChanged = new vscode.EventEmitter<EnvironmentVariablesChangeEvent>();
  context.subscriptions.push(
    changed,
    environmentsChanged,
    variablesChanged,
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`python.${SETTING}`)) {
        changed.fire({ ...environmentPath(active()), resource: undefined });
      }
    }),
    vscode.commands.registerCommand("python.setInterpreter", async () => {
      const file = await vscode.window.showInputBox({ title: "Select Interpreter", prompt: "Enter interpreter path" });
      if (file) {
        await vscode.workspace.getConfiguration("python").update(SETTING, file, vscode.ConfigurationTarget.Global);
      }
    }),
  );
  const environments: PythonExtension["environments"] = {
    getActiveEnvironmentPath: () => environmentPath(active()),
    updateActiveEnvironmentPath: async (environment: string | EnvironmentPath | Environment) => {
      const file = typeof environment === "string" ? environment : environment.path;
      await vscode.workspace.getConfiguration("python").update(SETTING, file, vscode.ConfigurationTarget.Global);
    },
    onDidChangeActiveEnvironmentPath: changed.event,
    get known() {
      const current = resolve(active());
      return current ? [current] : [];
    },
    onDidChangeEnvironments: environmentsChanged.event,
    refreshEnvironments: async () => undefined,
    resolveEnvironment: async (environment) => resolve(typeof environment === "string" ? environment : environment.path),
    getEnvironmentVariables: () => ({}),
    onDidEnvironmentVariablesChange: variablesChanged.event,
  };
  return { ready: Promise.resolve(), environments };
}
