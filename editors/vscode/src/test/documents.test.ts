import assert from "node:assert/strict";
import { test } from "node:test";

import { WORKSPACE_MARKERS, anywhere, documentSelector, startsServer, tableHeader } from "../documents";
import { globToRegExp } from "../testing/fake-vscode";

test("workspace-relative globs match anywhere in an absolute path", () => {
  assert.equal(anywhere(".punica/**/*.yaml"), "**/.punica/**/*.yaml");
  assert.equal(anywhere("./evals/*.yml"), "**/evals/*.yml");
  assert.equal(anywhere("**/*.suite.yaml"), "**/*.suite.yaml");
  assert.equal(anywhere("/abs/*.yaml"), "/abs/*.yaml");
  assert.equal(anywhere("C:\\ws\\*.yaml"), "C:/ws/*.yaml");
});

test("the default selector: suites, manifests, .punica YAML, the settings file and every JSON Lines file", () => {
  const selector = documentSelector({});
  const patterns = selector.filter((filter) => filter.pattern).map((filter) => filter.pattern);
  assert.deepEqual(patterns, [
    "**/.punica/**/*.yaml",
    "**/.punica/**/*.yml",
    "**/*.suite.yaml",
    "**/*.suite.yml",
    "**/.punica/metrics/*.yaml",
    "**/.punica/metrics/*.yml",
    "**/.punica/**",
    "**/.punica/rag-lsp.toml",
    "**/pyproject.toml",
  ]);
  assert.ok(selector.every((filter) => filter.scheme === "file"));
  assert.deepEqual(selector[selector.length - 1], { scheme: "file", language: "jsonl" });
  const yaml = (file: string) =>
    selector.some((filter) => filter.language === "yaml" && globToRegExp(filter.pattern ?? "**").test(file));
  assert.ok(yaml("/ws/.punica/evals/broken.suite.yaml"));
  assert.ok(yaml("/ws/evals/code.suite.yml"));
  assert.ok(yaml("/ws/.punica/targets.yaml"));
  assert.ok(!yaml("/ws/docker-compose.yaml"));
});

test("the user's globs choose the YAML files; bad values fall back to the defaults", () => {
  const selector = documentSelector({ suiteGlobs: ["evals/*.yaml"], manifestGlobs: "metrics/*.yaml" });
  assert.deepEqual(
    selector.map((filter) => filter.pattern).filter(Boolean),
    ["**/evals/*.yaml", "**/metrics/*.yaml", "**/.punica/**", "**/.punica/rag-lsp.toml", "**/pyproject.toml"],
  );
  assert.equal(documentSelector({ suiteGlobs: [1], manifestGlobs: [] }).length, documentSelector({}).length);
});

test("a pyproject.toml starts the server only when it holds a [tool.rag-lsp] table", () => {
  assert.ok(startsServer("/ws/.punica/evals/code.suite.yaml", "suites: []\n"));
  assert.ok(startsServer("/ws/pyproject.toml", "[project]\nname = 'x'\n\n[tool.rag-lsp]\nmax-file-bytes = 1000\n"));
  assert.ok(startsServer("C:\\ws\\pyproject.toml", '[tool."rag-lsp".severity]\nRAG207 = "off"\n'));
  assert.ok(!startsServer("/ws/pyproject.toml", "[project]\nname = 'x'\n\n[tool.ruff]\nline-length = 100\n"));
  assert.ok(!startsServer("/ws/pyproject.toml", "# [tool.rag-lsp] is documented elsewhere\n"));
});

test("a settings table's header is found however its keys are quoted, and nothing else is", () => {
  const header = tableHeader(["tool", "rag-lsp"]);
  assert.ok(header.test("[tool.rag-lsp]"));
  assert.ok(header.test("x = 1\n  [ tool . 'rag-lsp' . severity ]"));
  assert.ok(header.test('[["tool"."rag-lsp".per-file-ignores]]'));
  assert.ok(!header.test("[tool.rag-lsp-extra]"));
  assert.ok(!header.test("[tool.ragXlsp]"));
});

test("a workspace holding a file the default suite globs match, or rag-lsp's own folder, starts the server", () => {
  assert.equal(WORKSPACE_MARKERS, "{**/.punica/**,**/*.suite.yaml,**/*.suite.yml}");
  const starts = (file: string) => globToRegExp(WORKSPACE_MARKERS).test(file);
  for (const file of [".punica/suites.yaml", ".punica/evals/rag.suite.yml", ".punica/metrics/hit.yaml", ".punica/rag-lsp.toml", "rag.suite.yaml", "a/b/rag.suite.yml"]) {
    assert.ok(starts(file), file);
  }
  for (const file of ["rag.suite.yaml.bak", "punica/suites.yaml", "docs/a.yaml", "pyproject.toml"]) {
    assert.ok(!starts(file), file);
  }
});
