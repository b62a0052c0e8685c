// A stand-in for the `vscode` and `vscode-languageclient/node` modules, enough to
// drive extension.ts in plain Node. Importing this file installs it: later
// `require("vscode")` calls get the fakes.

import Module = require("module");

type Listener<T> = (value: T) => unknown;

export class Emitter<T> {
  private listeners: Listener<T>[] = [];
  dispose(): void {
    this.listeners = [];
  }
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
  getText(): string;
}

export function document(fsPath: string, languageId: string, text = ""): FakeDocument {
  return {
    uri: { scheme: "file", fsPath, toString: () => `file://${fsPath}` },
    languageId,
    fileName: fsPath,
    getText: () => text,
  };
}

/** Settings by scope, as `inspect()` reports them; defaults as package.json declares them. */
export interface FakeSettings {
  defaults: Record<string, unknown>;
  global: Record<string, unknown>;
  workspace: Record<string, unknown>;
}

/** The language client's states (`State` of vscode-languageclient). */
export const ClientState = { Stopped: 1, Running: 2, Starting: 3 } as const;

class FakeLanguageClient {
  static instances: FakeLanguageClient[] = [];
  static failStart: Error | undefined;
  static offeredCommands: string[] | undefined;
  /** Answers to requests, by method. */
  static answers = new Map<string, (params: any) => unknown>();
  notifications: { method: string; params: unknown }[] = [];
  requests: { method: string; params: unknown }[] = [];
  readonly states = new Emitter<{ oldState: number; newState: number }>();
  readonly onDidChangeState = this.states.event;
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
    this.states.fire({ oldState: ClientState.Starting, newState: ClientState.Running });
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
  async sendRequest(type: { method: string } | string, params: unknown): Promise<unknown> {
    const method = typeof type === "string" ? type : type.method;
    this.requests.push({ method, params });
    return FakeLanguageClient.answers.get(method)?.(params) ?? null;
  }
}

class FakeResponseError extends Error {}

export const languageClient = {
  LanguageClient: FakeLanguageClient,
  ResponseError: FakeResponseError,
  DidChangeConfigurationNotification: { type: { method: "workspace/didChangeConfiguration" } },
  CodeActionRequest: { type: { method: "textDocument/codeAction" } },
  State: ClientState,
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

/** A status bar item, as the extension last set it. */
export interface FakeStatusBarItem {
  id: string;
  text: string;
  tooltip: string | undefined;
  backgroundColor: { id: string } | undefined;
  command: string | undefined;
  name: string | undefined;
  visible: boolean;
}

/** A fake installed extension: what `vscode.extensions.getExtension` returns. */
export interface FakeExtension {
  id: string;
  isActive: boolean;
  exports: unknown;
  activate(): Promise<unknown>;
}

export const state = {
  settings: { defaults: {}, global: {}, workspace: {} } as FakeSettings,
  errors: [] as string[],
  warnings: [] as string[],
  infos: [] as string[],
  /** The buttons each error message offered, in order. */
  errorButtons: [] as string[][],
  /** What the user answers to the next messages, quick picks and dialogs (in order; `undefined` dismisses). */
  answers: [] as unknown[],
  /** The items of each quick pick shown. */
  quickPicks: [] as { label: string }[][],
  output: [] as string[],
  clipboard: "",
  statusBar: [] as FakeStatusBarItem[],
  extensions: new Map<string, FakeExtension>(),
  extensionsChanged: new Emitter<void>(),
  updates: [] as { key: string; value: unknown; target: unknown }[],
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  executed: [] as { command: string; args: unknown[] }[],
  markers: 0,
  trust: new Emitter<void>(),
  configuration: new Emitter<{ affectsConfiguration(section: string): boolean }>(),
  opened: new Emitter<FakeDocument>(),
};

/** The next scripted answer of the user, or `undefined` (dismissed). */
function answer(): any {
  return state.answers.shift();
}

/** A settled promise's callbacks run after this. */
export const settle = () => new Promise((resolve) => setImmediate(resolve));

export const vscode = {
  Uri: {
    parse: (value: string) => ({ toString: () => value, fsPath: value.replace(/^file:\/\//, "") }),
    file: (fsPath: string) => ({ toString: () => `file://${fsPath}`, fsPath, scheme: "file" }),
  },
  EventEmitter: Emitter,
  StatusBarAlignment: { Left: 1, Right: 2 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  ThemeColor: class {
    constructor(readonly id: string) {}
  },
  window: {
    createOutputChannel: () => ({
      appendLine(line: string) {
        state.output.push(line);
      },
      show() {},
      dispose() {},
    }),
    createStatusBarItem(id: string) {
      const item: FakeStatusBarItem & { show(): void; hide(): void; dispose(): void } = {
        id,
        text: "",
        tooltip: undefined,
        backgroundColor: undefined,
        command: undefined,
        name: undefined,
        visible: false,
        show() {
          item.visible = true;
        },
        hide() {
          item.visible = false;
        },
        dispose() {
          item.visible = false;
        },
      };
      state.statusBar.push(item);
      return item;
    },
    showErrorMessage: async (message: string, ...buttons: string[]) => {
      state.errors.push(message);
      state.errorButtons.push(buttons);
      return answer();
    },
    showWarningMessage: async (message: string) => {
      state.warnings.push(message);
      return undefined;
    },
    showInformationMessage: async (message: string) => {
      state.infos.push(message);
      return answer();
    },
    showQuickPick: async (items: { label: string }[]) => {
      state.quickPicks.push(items);
      const chosen = answer();
      return typeof chosen === "number" ? items[chosen] : chosen;
    },
    showOpenDialog: async () => answer(),
  },
  extensions: {
    getExtension: (id: string) => state.extensions.get(id),
    get onDidChange() {
      return state.extensionsChanged.event;
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
  env: {
    clipboard: {
      writeText: async (text: string) => {
        state.clipboard = text;
      },
    },
  },
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
        async update(name: string, value: unknown, target: unknown) {
          state.updates.push({ key: key(name), value, target });
          (target === 1 ? global : workspace)[key(name)] = value;
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
  state.infos.length = 0;
  state.errorButtons.length = 0;
  state.answers.length = 0;
  state.quickPicks.length = 0;
  state.output.length = 0;
  state.clipboard = "";
  state.statusBar.length = 0;
  state.extensions.clear();
  state.extensionsChanged = new Emitter();
  state.updates.length = 0;
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
  FakeLanguageClient.answers = new Map();
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
