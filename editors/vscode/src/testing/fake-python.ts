// A stand-in for the Python extension (`ms-python.python`) in the fake VS Code:
// its environments API, as `@vscode/python-extension` types it, serving one
// selected interpreter that a test can change.

import type { ActiveEnvironmentPathChangeEvent, PythonExtension, ResolvedEnvironment } from "@vscode/python-extension";

import { Emitter, state } from "./fake-vscode";

export interface FakePython {
  /** Selects another interpreter (`undefined`: none) and tells listeners, as the Python extension does. */
  select(interpreter: string | undefined, version?: string): void;
  readonly listeners: () => number;
}

/** Installs the stand-in under the Python extension's id, with `interpreter` selected. */
export function installPython(interpreter: string | undefined, version = "3.11.4"): FakePython {
  let selected = interpreter;
  let selectedVersion = version;
  const changed = new Emitter<ActiveEnvironmentPathChangeEvent>();
  const environment = (file: string): ResolvedEnvironment => {
    const [major, minor, micro] = selectedVersion.split(".").map(Number);
    return {
      id: file,
      path: file,
      executable: { uri: { fsPath: file } as never, bitness: "64-bit", sysPrefix: file.replace(/\/bin\/[^/]+$/, "") },
      environment: undefined,
      version: { major, minor, micro, release: { level: "final", serial: 0 }, sysVersion: selectedVersion },
      tools: [],
    };
  };
  const environments: PythonExtension["environments"] = {
    getActiveEnvironmentPath: () => ({ id: selected ?? "DEFAULT_PYTHON", path: selected ?? "python" }),
    updateActiveEnvironmentPath: async () => undefined,
    onDidChangeActiveEnvironmentPath: changed.event as never,
    known: [],
    onDidChangeEnvironments: new Emitter().event as never,
    refreshEnvironments: async () => undefined,
    resolveEnvironment: async (given) => {
      const file = typeof given === "string" ? given : given.path;
      return selected !== undefined && file === selected ? environment(file) : undefined;
    },
    getEnvironmentVariables: () => ({}),
    onDidEnvironmentVariablesChange: new Emitter().event as never,
  };
  const api: Partial<PythonExtension> = { ready: Promise.resolve(), environments };
  const extension = {
    id: "ms-python.python",
    isActive: false,
    exports: undefined as unknown,
    async activate() {
      extension.isActive = true;
      extension.exports = api;
      return api;
    },
  };
  state.extensions.set(extension.id, extension);
  state.extensionsChanged.fire();
  return {
    select(interpreter, version = "3.11.4") {
      selected = interpreter;
      selectedVersion = version;
      changed.fire({ id: interpreter ?? "DEFAULT_PYTHON", path: interpreter ?? "python", resource: undefined });
    },
    listeners: () => changed.count,
  };
}
