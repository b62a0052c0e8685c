// The rag-lsp extension: starts `rag-lsp serve` and connects it to VS Code.
//
// This file is the glue; the decisions (which command, which settings, which
// documents) are the pure functions of command.ts, settings.ts and documents.ts.

import * as cp from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import {
  CodeActionRequest,
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  ServerOptions,
  State,
} from "vscode-languageclient/node";

import {
  ACTIONS,
  Host,
  MODULE_CHECK_ARGS,
  Resolution,
  RunResult,
  StartFailure,
  describeResolution,
  failureActions,
  failureMessage,
  findExecutable,
  installCommand,
  interpreterChangeNeedsRestart,
  probeResult,
  resolveServer,
  skippedSettings,
} from "./command";
import { WORKSPACE_MARKERS, documentSelector, startsServer } from "./documents";
import { InterpreterChange, PythonInterpreter } from "./python";
import { everySuiteRun, runActionsParams, suiteChoices } from "./runs";
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
import { ServerState, statusItem } from "./status";

/** The launcher of the bundled copy, relative to the extension (bundled/libs holds rag-lsp). */
export const BUNDLED_LAUNCHER = path.join("bundled", "tool", "rag_lsp_bundled.py");
const CHECK_TIMEOUT_MS = 30_000;

export class RagLspExtension implements vscode.Disposable {
  client: LanguageClient | undefined;
  /** How the last start found its server (or found none). */
  resolution: Resolution | undefined;
  private starting: Promise<void> | undefined;
  /** Set once the server was wanted: later changes of its command restart it. */
  private wanted = false;
  private readonly disposables: vscode.Disposable[] = [];
  private waitingForDocument: vscode.Disposable | undefined;
  private clientState: vscode.Disposable | undefined;
  readonly output: vscode.OutputChannel;
  readonly status: vscode.StatusBarItem;
  readonly python: PythonInterpreter;

  constructor(private readonly extensionPath?: string) {
    this.output = vscode.window.createOutputChannel("rag-lsp");
    this.status = vscode.window.createStatusBarItem("ragLsp.status", vscode.StatusBarAlignment.Right, 100);
    this.status.name = "rag-lsp";
    this.status.command = "ragLsp.showOutput";
    this.python = new PythonInterpreter();
    this.disposables.push(this.output, this.status, this.python);
  }

  async activate(): Promise<void> {
    this.disposables.push(
      vscode.commands.registerCommand("ragLsp.restartServer", () => this.restart()),
      vscode.commands.registerCommand("ragLsp.showOutput", () => this.output.show(true)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.trustGranted()),
      vscode.workspace.onDidChangeConfiguration((event) => this.configurationChanged(event)),
      this.python.onDidChange((change) => this.interpreterChanged(change)),
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
    return vscode.languages.match(this.selector(), document) > 0 && startsServer(document.fileName, document.getText());
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

  /** What the resolution asks of the machine: files, interpreters, the Python extension. */
  private host(): Host {
    const platform = { platform: process.platform, env: process.env, isFile: isExecutableFile };
    return {
      findExecutable: (command) => findExecutable(command, platform),
      pythonExtension: () => this.python.state(),
      checkModule: async (python) => probeResult(await run(python, MODULE_CHECK_ARGS)),
      bundledLauncher: () => {
        if (!this.extensionPath) {
          return undefined;
        }
        const launcher = path.join(this.extensionPath, BUNDLED_LAUNCHER);
        const libs = path.join(this.extensionPath, "bundled", "libs", "rag_lsp");
        return fs.existsSync(launcher) && fs.existsSync(libs) ? launcher : undefined;
      },
      checkBundled: async (python, launcher) => probeResult(await run(python, [launcher, "--check"]), "bundled"),
    };
  }

  private resolve(): Promise<Resolution> {
    const config = vscode.workspace.getConfiguration(SECTION);
    return resolveServer(
      {
        serverCommand: config.get("serverCommand"),
        pythonPath: config.get("pythonPath"),
        importStrategy: config.get("importStrategy"),
        trusted: vscode.workspace.isTrusted,
        workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath),
        platform: process.platform,
      },
      { workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, home: os.homedir() },
      this.host(),
    );
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private showStatus(state: ServerState, detail?: string): void {
    const item = statusItem(state, this.resolution?.server, detail);
    this.status.text = item.text;
    this.status.tooltip = item.tooltip;
    this.status.backgroundColor = item.error ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
    this.status.show();
  }

  private async doStart(): Promise<void> {
    if (this.client) {
      return;
    }
    this.wanted = true;
    this.stopWaiting();
    this.resolution = undefined;
    this.showStatus("starting");
    const resolution = await this.resolve();
    this.resolution = resolution;
    this.output.appendLine("Finding the rag-lsp language server:");
    for (const line of describeResolution(resolution)) {
      this.output.appendLine(`  ${line}`);
    }
    for (const problem of resolution.problems) {
      void vscode.window.showWarningMessage(`rag-lsp: ${problem}`);
    }
    const skipped = skippedSettings(resolution);
    if (skipped) {
      void vscode.window.showWarningMessage(skipped);
    }
    const server = resolution.server;
    if (!server) {
      this.reportFailure(resolution, { kind: "notFound" });
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
        executeCommand: (command, args, next) => this.executeCommand(command, args, next),
      },
    };
    const client = new LanguageClient("ragLsp", "rag-lsp", serverOptions, clientOptions);
    this.client = client;
    this.clientState?.dispose();
    this.clientState = client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      if (event.newState === State.Running) {
        this.showStatus("running");
      } else if (event.newState === State.Starting) {
        this.showStatus("starting");
      } else {
        this.showStatus("stopped", "The server stopped: see the rag-lsp output, or run rag-lsp: Restart Server.");
      }
    });
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      this.reportFailure(resolution, { kind: "failed", detail: error instanceof Error ? error.message : String(error) });
      return;
    }
    this.showStatus("running");
    const offered = client.initializeResult?.capabilities.executeCommandProvider?.commands;
    for (const [key, value] of Object.entries(commandContextKeys(offered))) {
      void vscode.commands.executeCommand("setContext", key, value);
    }
  }

  /**
   * A "Run case (N suites)" lens runs the case in every suite that reads the
   * dataset; first the user may pick one suite, or all.
   */
  private async executeCommand(command: string, args: any[], next: (command: string, args: any[]) => unknown) {
    const run = everySuiteRun(command, args);
    const client = this.client;
    if (!run || !client) {
      return next(command, args);
    }
    let choices: ReturnType<typeof suiteChoices> = [];
    try {
      choices = suiteChoices(run, (await client.sendRequest(CodeActionRequest.type.method, runActionsParams(run))) as any);
    } catch (error) {
      this.output.appendLine(`Asking which suites read the case failed: ${String(error)}`);
    }
    if (choices.length < 2) {
      return next(command, args);
    }
    const chosen = await vscode.window.showQuickPick(choices, { title: "Run the case in", placeHolder: "All suites, or one" });
    return chosen ? next(command, [chosen.args]) : undefined;
  }

  private reportFailure(resolution: Resolution, failure: StartFailure): void {
    const message = failureMessage(resolution, failure);
    this.output.appendLine(message);
    this.showStatus(failure.kind === "notFound" ? "notFound" : "failed", message);
    void vscode.window.showErrorMessage(message, ...failureActions()).then((choice) => this.failureAction(resolution, choice));
  }

  private async failureAction(resolution: Resolution, choice: string | undefined): Promise<void> {
    if (choice === ACTIONS.selectInterpreter) {
      if (resolution.pythonExtension) {
        // The Python extension's own picker; its choice restarts the server.
        await vscode.commands.executeCommand("python.setInterpreter");
        return;
      }
      const picked = await vscode.window.showOpenDialog({
        title: "A Python interpreter that has rag-lsp installed",
        openLabel: "Use this interpreter",
        canSelectMany: false,
      });
      if (picked?.[0]) {
        const target = vscode.workspace.workspaceFolders?.length
          ? vscode.ConfigurationTarget.Workspace
          : vscode.ConfigurationTarget.Global;
        await vscode.workspace.getConfiguration(SECTION).update("pythonPath", picked[0].fsPath, target);
      }
    } else if (choice === ACTIONS.openSetting) {
      await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.pythonPath`);
    } else if (choice === ACTIONS.showInstall) {
      const install = installCommand(resolution.installInto);
      this.output.appendLine(`Install the language server with: ${install}`);
      this.output.show(true);
      await vscode.env.clipboard.writeText(install);
      const again = await vscode.window.showInformationMessage(
        `rag-lsp: \`${install}\` is copied to the clipboard. Run it, then restart the server.`,
        "Restart Server",
      );
      if (again) {
        await this.restart();
      }
    }
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
      if (this.wanted) {
        this.output.appendLine("The settings that choose the server changed: finding it again.");
        void this.restart();
      }
    } else if (changeConcernsServer(affects)) {
      this.sendSettings();
    }
  }

  private interpreterChanged({ reason, path: selected }: InterpreterChange): void {
    if (!this.wanted || !interpreterChangeNeedsRestart(this.resolution, selected)) {
      return;
    }
    this.output.appendLine(`${reason[0].toUpperCase()}${reason.slice(1)}: finding the server again.`);
    void this.restart();
  }

  private trustGranted(): void {
    // The workspace's interpreter, skipped until now, comes before PATH and the bundled copy.
    if (this.wanted && this.resolution?.waitsForTrust && interpreterChangeNeedsRestart(this.resolution)) {
      this.output.appendLine("The workspace is trusted now: finding the server again.");
      void this.restart();
    } else {
      this.sendSettings();
    }
  }

  dispose(): void {
    this.stopWaiting();
    this.clientState?.dispose();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

/** Runs `program` with `args`, never longer than {@link CHECK_TIMEOUT_MS}. */
function run(program: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    cp.execFile(program, args, { encoding: "utf8", timeout: CHECK_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (!error) {
        resolve({ status: 0, stdout, stderr });
      } else if (typeof error.code === "number") {
        resolve({ status: error.code, stdout, stderr });
      } else {
        resolve({ status: null, stdout, stderr, error });
      }
    });
  });
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
  extension = new RagLspExtension(context.extensionPath);
  context.subscriptions.push(extension);
  await extension.activate();
  return extension;
}

export async function deactivate(): Promise<void> {
  const current = extension;
  extension = undefined;
  await current?.stop();
}
