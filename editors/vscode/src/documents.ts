// Which documents the server is given. Pure functions, no `vscode` import.

/** The server's default globs (`rag_lsp/core/settings.py`), used when the user set none. */
export const DEFAULT_GLOBS = {
  suiteGlobs: [".punica/**/*.yaml", ".punica/**/*.yml", "**/*.suite.yaml", "**/*.suite.yml"],
  manifestGlobs: [".punica/metrics/*.yaml", ".punica/metrics/*.yml"],
};

export interface DocumentFilter {
  scheme: string;
  language?: string;
  pattern?: string;
}

/**
 * The workspace's settings file, in whatever language VS Code gives TOML (none is
 * built in): `.punica/rag-lsp.toml`, or `pyproject.toml` for its `[tool.rag-lsp]` table.
 */
export const SETTINGS_FILES = ["**/.punica/rag-lsp.toml", "**/pyproject.toml"];

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
    ".punica/**",
  ];
  const patterns = [...new Set(yamlGlobs.map(anywhere))];
  return [
    ...patterns.map((pattern) => ({ scheme: "file", language: "yaml", pattern })),
    ...SETTINGS_FILES.map((pattern) => ({ scheme: "file", pattern })),
    { scheme: "file", language: "jsonl" },
  ];
}

/**
 * Whether opening a document the selector matches is reason to start the server:
 * any but a `pyproject.toml` that holds no `[tool.rag-lsp]` table (every Python
 * project has a pyproject.toml; the server would only read it to find nothing).
 */
export function startsServer(fileName: string, text: string): boolean {
  const name = fileName.replace(/\\/g, "/").split("/").pop();
  if (name !== "pyproject.toml") {
    return true;
  }
  return /^\s*\[\s*tool\s*\.\s*["']?rag-lsp["']?\s*[\].]/m.test(text);
}

/** The files whose presence in a workspace starts the server before anything is opened. */
export const WORKSPACE_MARKERS = "{**/.punica/**,**/*.suite.yaml,**/*.suite.yml}";
