// Which documents the server is given. Pure functions, no `vscode` import.

import { DEFAULTS } from "./defaults.generated";

/** The server's default globs, used when the user set none. */
export const DEFAULT_GLOBS = {
  suiteGlobs: DEFAULTS.suiteGlobs,
  manifestGlobs: DEFAULTS.manifestGlobs,
};

/** rag-lsp's own folder (`.punica`), the first marker of a workspace root. */
export const OWN_FOLDER = DEFAULTS.rootMarkers[0].name;

export interface DocumentFilter {
  scheme: string;
  language?: string;
  pattern?: string;
}

/**
 * A glob relative to a workspace root, made to match anywhere in an absolute path
 * (document filters match the whole file path).
 */
export function anywhere(glob: string): string {
  const normalized = glob.replace(/\\/g, "/").replace(/^\.\//, "");
  if (normalized.startsWith("/") || /^[A-Za-z]:\//.test(normalized) || normalized.startsWith("**/")) {
    return normalized;
  }
  return `**/${normalized}`;
}

/**
 * The workspace's settings files, in whatever language VS Code gives TOML (none is
 * built in): `.punica/rag-lsp.toml`, or `pyproject.toml` for its `[tool.rag-lsp]` table.
 */
export const SETTINGS_FILES = DEFAULTS.settingsFiles.map((file) => anywhere(file.path));

function globList(value: unknown, fallback: readonly string[]): string[] {
  if (typeof value === "string" && value) {
    return [value];
  }
  if (Array.isArray(value) && value.length && value.every((item) => typeof item === "string" && item)) {
    return value as string[];
  }
  return [...fallback];
}

/**
 * Documents the server checks: YAML files matching the suite and manifest globs
 * (and anything under `.punica/`, where the targets config lives), the settings
 * file, and every JSON Lines file (a suite may name a dataset anywhere in the workspace).
 */
export function documentSelector(settings: { suiteGlobs?: unknown; manifestGlobs?: unknown }): DocumentFilter[] {
  const yamlGlobs = [
    ...globList(settings.suiteGlobs, DEFAULT_GLOBS.suiteGlobs),
    ...globList(settings.manifestGlobs, DEFAULT_GLOBS.manifestGlobs),
    `${OWN_FOLDER}/**`,
  ];
  const patterns = [...new Set(yamlGlobs.map(anywhere))];
  return [
    ...patterns.map((pattern) => ({ scheme: "file", language: "yaml", pattern })),
    ...SETTINGS_FILES.map((pattern) => ({ scheme: "file", pattern })),
    { scheme: "file", language: "jsonl" },
  ];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A line that opens the TOML table `table` or one inside it (`[tool.rag-lsp]`, `[tool."rag-lsp".severity]`). */
export function tableHeader(table: readonly string[]): RegExp {
  const keys = table.map((key) => `["']?${escapeRegExp(key)}["']?`).join("\\s*\\.\\s*");
  return new RegExp(`^\\s*\\[+\\s*${keys}\\s*[\\].]`, "m");
}

/**
 * Whether opening a document the selector matches is reason to start the server:
 * any but a settings file that holds its settings in a table it lacks, i.e. a
 * `pyproject.toml` without `[tool.rag-lsp]` (every Python project has a
 * pyproject.toml; the server would only read it to find nothing).
 */
export function startsServer(fileName: string, text: string): boolean {
  const name = fileName.replace(/\\/g, "/").split("/").pop();
  for (const file of DEFAULTS.settingsFiles) {
    if ("table" in file && name === file.path.split("/").pop()) {
      return tableHeader(file.table).test(text);
    }
  }
  return true;
}

/**
 * The files whose presence in a workspace starts the server before anything is
 * opened: anything in rag-lsp's own folder, or a file the default suite globs match.
 */
export const WORKSPACE_MARKERS = `{${[
  `**/${OWN_FOLDER}/**`,
  ...DEFAULT_GLOBS.suiteGlobs.map(anywhere).filter((glob) => !glob.startsWith(`**/${OWN_FOLDER}/`)),
].join(",")}}`;
