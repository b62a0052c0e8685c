// The interpreter selected in the Python extension, through its public API
// (`@vscode/python-extension`), as Microsoft's Python tool extensions read it.

import { PVSC_EXTENSION_ID, PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";

import { PythonExtensionState } from "./command";

/** A change that may give the server another interpreter. */
export interface InterpreterChange {
  reason: string;
  /** The interpreter now selected, when the Python extension said. */
  path?: string;
}

export class PythonInterpreter implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<InterpreterChange>();
  /** Fires when the selected interpreter may have changed. */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [this.changed];
  private watching = false;
  private installed: boolean;

  constructor() {
    this.installed = vscode.extensions.getExtension(PVSC_EXTENSION_ID) !== undefined;
    this.disposables.push(
      // Installed or enabled after this extension started: its interpreter may now do.
      vscode.extensions.onDidChange(() => {
        const installed = vscode.extensions.getExtension(PVSC_EXTENSION_ID) !== undefined;
        if (installed !== this.installed) {
          this.installed = installed;
          this.changed.fire({ reason: installed ? "the Python extension was installed" : "the Python extension was removed" });
        }
      }),
    );
  }

  /** The interpreter the Python extension selected for `resource` (default: the first workspace folder). */
  async state(resource?: vscode.Uri): Promise<PythonExtensionState> {
    if (vscode.extensions.getExtension(PVSC_EXTENSION_ID) === undefined) {
      return { kind: "absent" };
    }
    let api: PythonExtension;
    try {
      api = await PythonExtension.api();
    } catch (error) {
      return { kind: "absent", detail: error instanceof Error ? error.message : String(error) };
    }
    const environments = api?.environments;
    if (!environments) {
      return { kind: "absent", detail: "it offers no environments API" };
    }
    if (!this.watching) {
      this.watching = true;
      this.disposables.push(
        environments.onDidChangeActiveEnvironmentPath((event) =>
          this.changed.fire({ reason: `the Python extension selected ${event.path}`, path: event.path }),
        ),
      );
    }
    const scope = resource ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    const environment = await environments.resolveEnvironment(environments.getActiveEnvironmentPath(scope));
    const file = environment?.executable.uri?.fsPath;
    if (!environment || !file) {
      return { kind: "noInterpreter" };
    }
    const version = environment.version;
    return {
      kind: "selected",
      interpreter: {
        path: file,
        version:
          version && version.major !== undefined && version.minor !== undefined
            ? [version.major, version.minor, version.micro].filter((part) => part !== undefined).join(".")
            : undefined,
      },
    };
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}
