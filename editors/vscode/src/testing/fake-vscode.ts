// A stand-in for the `vscode` and `vscode-languageclient/node` modules, enough to
// drive extension.ts in plain Node. Importing this file installs it: later
// `require("vscode")` calls get the fakes.

import Module = require("module");

type Listener<T> = (value: T) => unknown;

export class Emitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((item) => item !== listener)) };
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  get count(): number {
    return this.listeners.length;
  }
}

export interface FakeDocument {
  uri: { scheme: string; fsPath: string; toString(): string };
  languageId: string;
  fileName: string;
}

export function document(fsPath: string, languageId: string): FakeDocument {
  return { uri: { scheme: "file", fsPath, toString: () => `file://${fsPath}` }, languageId, fileName: fsPath };
}

/** Settings by scope, as `inspect()` reports them; defaults as package.json declares them. */
export interface FakeSettings {
  defaults: Record<string, unknown>;
  global: Record<string, unknown>;
  workspace: Record<string, unknown>;
}

class FakeLanguageClient {
  static instances: FakeLanguageClient[] = [];
  static failStart: Error | undefined;
  static offeredCommands: string[] | undefined;
  notifications: { method: string; params: unknown }[] = [];
  started = false;
  stopped = false;
  initializeResult: unknown;
  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: { command: string; args: string[] },
    readonly clientOptions: any,
  ) {
    FakeLanguageClient.instances.push(this);
  }
  async start(): Promise<void> {
    if (FakeLanguageClient.failStart) {
      throw FakeLanguageClient.failStart;
    }
    this.started = true;
    this.initializeResult = {
      capabilities: FakeLanguageClient.offeredCommands
        ? { executeCommandProvider: { commands: FakeLanguageClient.offeredCommands } }
        : {},
    };
  }
  async stop(): Promise<void> {
    this.stopped = true;
  }
  async sendNotification(type: { method: string }, params: unknown): Promise<void> {
    this.notifications.push({ method: type.method, params });
  }
}

class FakeResponseError extends Error {}

export const languageClient = {
  LanguageClient: FakeLanguageClient,
  ResponseError: FakeResponseError,
  DidChangeConfigurationNotification: { type: { method: "workspace/didChangeConfiguration" } },
};

/** A small glob matcher: `**`, `*`, `?` and `{a,b}`, enough for document filters. */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (glob.startsWith("**/", i)) {
      source += "(?:.*/)?";
      i += 2;
    } else if (glob.startsWith("**", i)) {
      source += ".*";
      i += 1;
    } else if (char === "*") {
      source += "[^/]*";
    } else if (char === "?") {
      source += "[^/]";
    } else if (char === "{") {
      source += "(?:";
    } else if (char === "}") {
      source += ")";
    } else if (char === ",") {
      source += "|";
    } else {
      source += char.replace(/[.+^$()|[\]\\]/g, "\\$&");
    }
  }
  return new RegExp(`^${source}$`);
}

function matchFilter(filter: any, doc: FakeDocument): boolean {
  if (filter.language && filter.language !== doc.languageId) {
    return false;
  }
  if (filter.scheme && filter.scheme !== doc.uri.scheme) {
    return false;
  }
  return !filter.pattern || globToRegExp(filter.pattern).test(doc.uri.fsPath);
}

export const state = {
  settings: { defaults: {}, global: {}, workspace: {} } as FakeSettings,
  errors: [] as string[],
  warnings: [] as string[],
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  executed: [] as { command: string; args: unknown[] }[],
  markers: 0,
  trust: new Emitter<void>(),
  configuration: new Emitter<{ affectsConfiguration(section: string): boolean }>(),
  opened: new Emitter<FakeDocument>(),
};

export const vscode = {
  Uri: { parse: (value: string) => ({ toString: () => value, fsPath: value.replace(/^file:\/\//, "") }) },
  window: {
    createOutputChannel: () => ({ appendLine() {}, dispose() {} }),
    showErrorMessage: async (message: string) => {
      state.errors.push(message);
      return undefined;
    },
    showWarningMessage: async (message: string) => {
      state.warnings.push(message);
      return undefined;
    },
  },
  commands: {
    registerCommand(command: string, callback: (...args: unknown[]) => unknown) {
      state.commands.set(command, callback);
      return { dispose: () => state.commands.delete(command) };
    },
    async executeCommand(command: string, ...args: unknown[]) {
      state.executed.push({ command, args });
      const registered = state.commands.get(command);
      return registered ? registered(...args) : undefined;
    },
  },
  env: { clipboard: { writeText: async () => undefined } },
  languages: {
    match: (selector: any[], doc: FakeDocument) => (selector.some((filter) => matchFilter(filter, doc)) ? 10 : 0),
  },
  workspace: {
    isTrusted: false,
    textDocuments: [] as FakeDocument[],
    workspaceFolders: [{ uri: { fsPath: "/work/space" }, name: "space", index: 0 }] as unknown[] | undefined,
    findFiles: async () => Array.from({ length: state.markers }, () => ({})),
    onDidGrantWorkspaceTrust: state.trust.event,
    onDidChangeConfiguration: state.configuration.event,
    onDidOpenTextDocument: state.opened.event,
    getConfiguration(section: string) {
      const key = (name: string) => `${section}.${name}`;
      const { defaults, global, workspace } = state.settings;
      return {
        get(name: string) {
          const full = key(name);
          return full in workspace ? workspace[full] : full in global ? global[full] : defaults[full];
        },
        inspect(name: string) {
          const full = key(name);
          return {
            key: full,
            defaultValue: defaults[full],
            globalValue: global[full],
            workspaceValue: workspace[full],
          };
        },
      };
    },
  },
};

/** Back to a fresh VS Code: no settings, no clients, untrusted. */
export function reset(settings: Partial<FakeSettings> = {}): void {
  state.settings = { defaults: {}, global: {}, workspace: {}, ...settings };
  state.errors.length = 0;
  state.warnings.length = 0;
  state.commands.clear();
  state.executed.length = 0;
  state.markers = 0;
  state.trust = new Emitter<void>();
  state.configuration = new Emitter();
  state.opened = new Emitter();
  vscode.workspace.onDidGrantWorkspaceTrust = state.trust.event;
  vscode.workspace.onDidChangeConfiguration = state.configuration.event;
  vscode.workspace.onDidOpenTextDocument = state.opened.event;
  vscode.workspace.isTrusted = false;
  vscode.workspace.textDocuments = [];
  FakeLanguageClient.instances = [];
  FakeLanguageClient.failStart = undefined;
  FakeLanguageClient.offeredCommands = undefined;
}

export const clients = () => FakeLanguageClient.instances;
export const fakeClient = FakeLanguageClient;

const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const originalLoad = loader._load;
loader._load = function (request: string, ...rest: unknown[]) {
  if (request === "vscode") {
    return vscode;
  }
  if (request === "vscode-languageclient/node") {
    return languageClient;
  }
  return originalLoad.call(this, request, ...rest);
};
