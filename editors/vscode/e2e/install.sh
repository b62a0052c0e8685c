#!/usr/bin/env bash
# Installs what the end-to-end test drives into editors/vscode/e2e/node_modules:
# code-server 4.100 (VS Code 1.100 served to a browser) and playwright-core, both
# from npm. Chromium and ripgrep come from Debian's packages:
#
#   apt-get install chromium ripgrep
#
# code-server's own install script builds VS Code's native modules and downloads
# ripgrep from GitHub. Only the package registries answer here, so this script
# takes the same steps with Debian's rg in place of the download, and builds the
# native modules against the installed Node's headers (/usr/include/node) instead
# of downloading them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

rg="$(command -v rg)" || {
  echo "ripgrep (rg) is not installed: apt-get install ripgrep" >&2
  exit 1
}
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" != 20 ]; then
  echo "code-server 4.100 runs on Node 20, this is Node $(node --version)" >&2
  exit 1
fi
export npm_config_nodedir="${npm_config_nodedir:-$(dirname "$(dirname "$(command -v node)")")}"
npm_quiet=(--no-audit --no-fund --loglevel=error)

npm ci --ignore-scripts "${npm_quiet[@]}"
# code-server's own native module (its password hashing, loaded on start).
npm rebuild argon2 "${npm_quiet[@]}"

cd node_modules/code-server/lib/vscode
npm install --omit=dev --ignore-scripts "${npm_quiet[@]}"
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$rg" node_modules/@vscode/ripgrep/bin/rg
# The native modules the extension host loads: spdlog writes VS Code's logs and its
# output channels (without it the rag-lsp output stays empty), the watchdog follows
# its parent process. The file watcher comes prebuilt (@parcel/watcher-linux-*);
# left out are the terminal (node-pty), the Kerberos proxy login and the
# Windows-only modules, which opening files, the problems panel and code lenses
# never load.
npm rebuild @vscode/spdlog native-watchdog "${npm_quiet[@]}"
# What code-server's postinstall.sh does after its install.
ln -sfn node_modules node_modules.asar
ln -sf code-linux.sh bin/remote-cli/code-server
ln -sf browser-linux.sh bin/helpers/browser.sh
cd extensions
npm install --omit=dev --ignore-scripts "${npm_quiet[@]}"
node postinstall.mjs > /dev/null
