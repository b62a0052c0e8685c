// Settings: what the extension tells the rag-lsp server, and how.
//
// Pure functions, no `vscode` import: the extension passes in readers for the
// configuration, so tests drive them with plain objects.

/** The configuration section the server asks for (`workspace/configuration`). */
export const SECTION = "ragLsp";

/**
 * Every server setting, under the camelCase key the server accepts
 * (`rag_lsp/core/workspace/settings.py`). `trusted` is not among them: it is never a user
 * setting, the extension passes VS Code's workspace trust.
 */
export const SERVER_SETTINGS = [
  "suiteGlobs",
  "datasetGlobs",
  "manifestGlobs",
  "severity",
  "perFileIgnores",
  "maxFileBytes",
  "maxYamlBytes",
  "maxLineBytes",
  "maxYamlDepth",
  "maxYamlNodes",
  "runTimeout",
  "runConcurrency",
  "baseline",
  "maxFindingsShown",
] as const;

export type ServerSetting = (typeof SERVER_SETTINGS)[number];

/** Settings of the extension itself: never sent to the server, which would call them unknown. */
export const CLIENT_SETTINGS = ["serverCommand", "pythonPath", "importStrategy", "trace"] as const;

/** What `WorkspaceConfiguration.inspect()` tells about one key (the fields used here). */
export interface Inspection<T = unknown> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * The value the user set, most specific scope first, or `undefined` when only the
 * default applies: the server then keeps its own default, so the two never drift.
 */
export function explicitValue<T>(inspection: Inspection<T> | undefined): T | undefined {
  if (!inspection) {
    return undefined;
  }
  for (const value of [inspection.workspaceFolderValue, inspection.workspaceValue, inspection.globalValue]) {
    if (value !== undefined) {
      return value;
    }
  }
  return undefined;
}

/** Reads the user's explicit value of one `ragLsp.*` key. */
export type SettingReader = (key: ServerSetting) => unknown;

/**
 * The object the server gets, as initialization options and as the answer for
 * section `ragLsp`: the settings the user set, and `trusted`.
 */
export function serverSettings(read: SettingReader, trusted: boolean): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const key of SERVER_SETTINGS) {
    const value = read(key);
    if (value !== undefined) {
      settings[key] = plain(value);
    }
  }
  settings.trusted = trusted;
  return settings;
}

/** A JSON copy: configuration values are proxies, and the wire wants plain data. */
function plain(value: unknown): unknown {
  return value === null ? null : JSON.parse(JSON.stringify(value));
}

export interface ConfigurationItem {
  section?: string;
  scopeUri?: string;
}

/**
 * Answers a `workspace/configuration` request: items for section `ragLsp` get
 * {@link serverSettings} for their scope, every other item the answer VS Code
 * would have given (`defaults`, in item order).
 */
export function answerConfiguration(
  items: readonly ConfigurationItem[],
  defaults: readonly unknown[],
  settingsFor: (scopeUri: string | undefined) => Record<string, unknown>,
): unknown[] {
  return items.map((item, index) =>
    item.section === SECTION ? settingsFor(item.scopeUri) : index < defaults.length ? defaults[index] : null,
  );
}

/** The `workspace/didChangeConfiguration` parameters that tell the server about new settings. */
export function didChangeConfigurationParams(settings: Record<string, unknown>): { settings: Record<string, unknown> } {
  return { settings: { [SECTION]: settings } };
}

/**
 * Whether a configuration change means starting the server again: the settings
 * that choose it changed, or the globs that choose the documents it is given
 * (the language client's document selector is fixed when it starts).
 */
export function changeNeedsRestart(affects: (section: string) => boolean): boolean {
  return ["serverCommand", "pythonPath", "importStrategy", "suiteGlobs", "manifestGlobs"].some((key) =>
    affects(`${SECTION}.${key}`),
  );
}

/** Whether a configuration change concerns the server's settings (and so is sent to it). */
export function changeConcernsServer(affects: (section: string) => boolean): boolean {
  return SERVER_SETTINGS.some((key) => affects(`${SECTION}.${key}`));
}

/** The server commands this extension knows, for context keys and menus. */
export const SERVER_COMMANDS = ["ragLsp.runCase", "ragLsp.runSuite", "ragLsp.clearResults"] as const;

/**
 * Context keys saying which commands the running server offers (its
 * `executeCommandProvider`): `ragLsp.offers.clearResults` and so on. The language
 * client registers the offered commands itself; menus use these keys to show only
 * commands that will work.
 */
export function commandContextKeys(offered: readonly string[] | undefined): Record<string, boolean> {
  const keys: Record<string, boolean> = {};
  for (const command of SERVER_COMMANDS) {
    keys[`ragLsp.offers.${command.slice(SECTION.length + 1)}`] = (offered ?? []).includes(command);
  }
  return keys;
}
