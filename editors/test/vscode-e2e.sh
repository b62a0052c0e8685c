#!/usr/bin/env bash
# The VS Code extension end to end: the built .vsix installed in code-server (VS Code
# 1.100) on a fresh profile, driven through Debian's headless Chromium; see
# editors/vscode/e2e/run.mjs for what each scenario checks.
#
#   editors/test/vscode-e2e.sh PYTHON [VSIX]
#
# PYTHON has rag-lsp installed, its `rag-lsp` script beside it; VSIX defaults to
# editors/vscode/rag-lsp.vsix. Beforehand: in editors/vscode, `npm ci && npm run
# build` and `npx @vscode/vsce package --out rag-lsp.vsix`; `apt-get install
# chromium ripgrep`; editors/vscode/e2e/install.sh. Screenshots and logs of a failed
# scenario go to RAG_LSP_E2E_ARTIFACTS (default: a new temporary folder). With
# RAG_LSP_BUNDLED_VSIX (a build of editors/vscode/scripts/bundle.sh), the bundled
# copy is tried too.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
python="${1:?usage: editors/test/vscode-e2e.sh PYTHON [VSIX]}"
vsix="${2:-$repo/editors/vscode/rag-lsp.vsix}"
args=(--python "$python" --vsix "$vsix")
if [ -n "${RAG_LSP_E2E_ARTIFACTS:-}" ]; then
  args+=(--artifacts "$RAG_LSP_E2E_ARTIFACTS")
fi
if [ -n "${RAG_LSP_BUNDLED_VSIX:-}" ]; then
  args+=(--bundled-vsix "$RAG_LSP_BUNDLED_VSIX")
fi
exec node "$repo/editors/vscode/e2e/run.mjs" "${args[@]}"
