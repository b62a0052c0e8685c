// The rag-lsp extension: starts `rag-lsp serve` and connects it to VS Code.
//
// This file is the glue; the decisions (which command, which settings, which
// documents) are the pure functions of command.ts, settings.ts and documents.ts.

import * as cp from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  ServerOptions,
} from "vscode-languageclient/node";

import {
  MODULE_CHECK_ARGS,
  ServerCommand,
  StartFailure,
  failureMessage,
  installCommand,
  preflight,
  resolveServerCommand,
} from "./command";
import { WORKSPACE_MARKERS, documentSelector } from "./documents";
import {
  SECTION,
  ServerSetting,
  answerConfiguration,
  changeConcernsServer,
  changeNeedsRestart,
  commandContextKeys,
  didChangeConfigurationParams,
  explicitValue,
  serverSettings,
} from "./settings";

const COPY_INSTALL = "Copy install command";
const OPEN_SETTINGS = "Open Settings";

export class RagLspExtension implements vscode.Disposable {
  client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private waitingForDocument: vscode.Disposable | undefined;
  readonly output: vscode.OutputChannel;

  constructor() {
    this.output = vscode.window.createOutputChannel("rag-lsp");
    this.disposables.push(this.output);
  }

  async activate(): Promise<void> {
    this.disposables.push(
      vscode.commands.registerCommand("ragLsp.restartServer", () => this.restart()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.sendSettings()),
      vscode.workspace.onDidChangeConfiguration((event) => this.configurationChanged(event)),
    );
    if (await this.workspaceWantsServer()) {
      await this.start();
      return;
    }
    // No suite in sight: start when the first suite, dataset or manifest is opened.
    this.waitingForDocument = vscode.workspace.onDidOpenTextDocument((document) => {
      if (this.handles(document)) {
        this.stopWaiting();
        void this.start();
      }
    });
  }

  private stopWaiting(): void {
    this.waitingForDocument?.dispose();
    this.waitingForDocument = undefined;
  }

  private selector() {
    const config = vscode.workspace.getConfiguration(SECTION);
    return documentSelector({ suiteGlobs: config.get("suiteGlobs"), manifestGlobs: config.get("manifestGlobs") });
  }

  private handles(document: vscode.TextDocument): boolean {
    return vscode.languages.match(this.selector(), document) > 0;
  }

  private async workspaceWantsServer(): Promise<boolean> {
    if (vscode.workspace.textDocuments.some((document) => this.handles(document))) {
      return true;
    }
    if (!vscode.workspace.workspaceFolders?.length) {
      return false;
    }
    const found = await vscode.workspace.findFiles(WORKSPACE_MARKERS, "**/node_modules/**", 1);
    return found.length > 0;
  }

  /** What the server gets for section `ragLsp`: the user's settings and the workspace trust. */
  settingsFor(scopeUri?: string): Record<string, unknown> {
    const scope = scopeUri ? vscode.Uri.parse(scopeUri) : undefined;
    const config = vscode.workspace.getConfiguration(SECTION, scope);
    return serverSettings((key: ServerSetting) => explicitValue(config.inspect(key)), vscode.workspace.isTrusted);
  }

  private resolveCommand(): ServerCommand {
    const config = vscode.workspace.getConfiguration(SECTION);
    return resolveServerCommand(
      { serverCommand: config.get("serverCommand"), pythonPath: config.get("pythonPath") },
      { workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, home: os.homedir() },
    );
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    if (this.client) {
      return;
    }
    this.stopWaiting();
    const server = this.resolveCommand();
    for (const problem of server.problems) {
      void vscode.window.showWarningMessage(`rag-lsp: ${problem}`);
    }
    const failure = preflight(
      server,
      { platform: process.platform, env: process.env, isFile: isExecutableFile },
      (python) => {
        const result = cp.spawnSync(python, MODULE_CHECK_ARGS, { encoding: "utf8", timeout: 30_000 });
        return { status: result.status, stderr: result.stderr ?? "", error: result.error };
      },
    );
    if (failure) {
      this.reportFailure(server, failure);
      return;
    }
    const serverOptions: ServerOptions = {
      command: server.command,
      args: server.args,
      options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: this.selector(),
      outputChannel: this.output,
      // A function, so a restart sends the trust and settings of that moment.
      initializationOptions: () => this.settingsFor(),
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const defaults = await next(params, token);
            if (defaults instanceof ResponseError) {
              return defaults;
            }
            return answerConfiguration(params.items, defaults, (scopeUri) => this.settingsFor(scopeUri));
          },
        },
      },
    };
    const client = new LanguageClient("ragLsp", "rag-lsp", serverOptions, clientOptions);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      this.reportFailure(server, { kind: "failed", detail: error instanceof Error ? error.message : String(error) });
      return;
    }
    const offered = client.initializeResult?.capabilities.executeCommandProvider?.commands;
    for (const [key, value] of Object.entries(commandContextKeys(offered))) {
      void vscode.commands.executeCommand("setContext", key, value);
    }
  }

  private reportFailure(server: ServerCommand, failure: StartFailure): void {
    const message = failureMessage(server, failure);
    this.output.appendLine(message);
    void vscode.window.showErrorMessage(message, COPY_INSTALL, OPEN_SETTINGS).then((choice) => {
      if (choice === COPY_INSTALL) {
        void vscode.env.clipboard.writeText(installCommand(server));
      } else if (choice === OPEN_SETTINGS) {
        void vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.`);
      }
    });
  }

  async stop(): Promise<void> {
    await this.starting;
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop();
      } catch (error) {
        this.output.appendLine(`rag-lsp: stopping the server failed: ${String(error)}`);
      }
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Tells the running server its settings changed; it then asks for them again. */
  sendSettings(): void {
    if (!this.client) {
      return;
    }
    void this.client.sendNotification(
      DidChangeConfigurationNotification.type,
      didChangeConfigurationParams(this.settingsFor()),
    );
  }

  private configurationChanged(event: vscode.ConfigurationChangeEvent): void {
    const affects = (section: string) => event.affectsConfiguration(section);
    if (changeNeedsRestart(affects)) {
      if (this.client) {
        void this.restart();
      }
    } else if (changeConcernsServer(affects)) {
      this.sendSettings();
    }
  }

  dispose(): void {
    this.stopWaiting();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (process.platform !== "win32") {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

let extension: RagLspExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<RagLspExtension> {
  extension = new RagLspExtension();
  context.subscriptions.push(extension);
  await extension.activate();
  return extension;
}

export async function deactivate(): Promise<void> {
  const current = extension;
  extension = undefined;
  await current?.stop();
}
