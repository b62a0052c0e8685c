// The packaged extension in real VS Code: code-server 4.100 (VS Code 1.100) driven
// through headless Chromium with playwright-core, on a fresh profile and a copy of
// examples/ (with the broken suite and dataset of examples-caught/) each time.
//
//   node e2e/run.mjs --vsix rag-lsp.vsix --python /venv/bin/python [--only NAME] [--artifacts DIR]
//
// --python is an interpreter that has rag-lsp installed. Scenarios:
//
// * interpreter: the Python extension (a stand-in under its id, serving its
//   environments API) has --python selected; no ragLsp.* setting, no rag-lsp on
//   PATH. The status bar shows the interpreter, the output channel the rule that
//   won, the problems panel exactly the findings of `rag-lsp check` (counts, files
//   and codes), and a click on "Run case (N suites)" (then "All N suites" in the
//   quick pick) puts RAG400 in the problems panel, once per suite.
// * path: no Python extension; `rag-lsp` on PATH (~/.local/bin, as pipx puts it).
//   The same checks.
// * venv: no Python extension, rag-lsp on PATH, and a `.venv` in the workspace
//   that has rag-lsp: the server runs from the venv (rule 4, before PATH), as the
//   output channel and the status bar say, and the findings show.
// * none: the Python extension with no interpreter, no rag-lsp on PATH: one
//   notification with its three buttons, and the status bar says "not found".
//   "Select Interpreter" then selects --python, and the server starts on it.
// * bundled (with --bundled-vsix, the platform-specific build of scripts/bundle.sh):
//   no Python extension, rag-lsp on PATH, `ragLsp.importStrategy: useBundled`:
//   the bundled rag-lsp (rule 2), run by python3 on PATH, shows the findings.
//
// Every wait is for a condition, with a timeout; a failed scenario leaves a
// screenshot and the logs in --artifacts. Exit status 0 only when all pass.

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionRoot = path.dirname(here);
const repo = path.resolve(extensionRoot, "..", "..");
const codeServer = path.join(here, "node_modules", "code-server", "out", "node", "entry.js");
const vsce = path.join(extensionRoot, "node_modules", "@vscode", "vsce", "vsce");
// Waits for the server (start, checks, runs), and for the workbench's own widgets.
const WAIT_MS = Number(process.env.RAG_LSP_E2E_TIMEOUT_MS || 90_000);
const UI_MS = 20_000;

const { values: options } = parseArgs({
  options: {
    vsix: { type: "string" },
    python: { type: "string" },
    only: { type: "string" },
    artifacts: { type: "string" },
    chromium: { type: "string" },
    "bundled-vsix": { type: "string" },
  },
});
if (!options.vsix || !options.python) {
  console.error("usage: node e2e/run.mjs --vsix rag-lsp.vsix --python /venv/bin/python [--only NAME] [--artifacts DIR]");
  process.exit(2);
}
const vsix = path.resolve(options.vsix);
const python = path.resolve(options.python);
const chromiumPath = options.chromium || process.env.RAG_LSP_CHROMIUM || which("chromium") || which("chromium-browser");
const artifacts = path.resolve(options.artifacts || fs.mkdtempSync(path.join(os.tmpdir(), "rag-lsp-e2e-artifacts-")));
fs.mkdirSync(artifacts, { recursive: true });

function which(name, searchPath = process.env.PATH ?? "") {
  for (const folder of searchPath.split(path.delimiter)) {
    const file = path.join(folder, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) {
        return file;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

/** PATH without any folder that has a `rag-lsp` (so a scenario chooses whether the server is on it). */
function pathWithoutRagLsp() {
  return (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((folder) => folder && !fs.existsSync(path.join(folder, "rag-lsp")))
    .join(path.delimiter);
}

function log(message) {
  console.log(`[e2e ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

/** What `rag-lsp check` finds in the workspace: {errors, warnings, pairs: Set("file code")}. */
/**
 * A copy of examples/ that also holds the broken suite and dataset of
 * examples-caught/ (as the other editor tests use): suites to run and findings to show.
 */
function examplesWithBrokenFiles(workspace) {
  fs.cpSync(path.join(repo, "examples"), workspace, { recursive: true });
  for (const name of ["broken.suite.yaml", "broken.jsonl"]) {
    fs.copyFileSync(path.join(repo, "examples-caught", ".punica", "evals", name), path.join(workspace, ".punica", "evals", name));
  }
  return workspace;
}

function expectedFindings(workspace) {
  const result = spawnSync(python, ["-m", "rag_lsp", "check", workspace, "--format", "json"], {
    cwd: workspace,
    encoding: "utf8",
  });
  if (result.status !== 1) {
    throw new Error(`rag-lsp check exited ${result.status}: ${result.stderr}`);
  }
  const findings = JSON.parse(result.stdout);
  return {
    errors: findings.filter((finding) => finding.severity === "error").length,
    warnings: findings.filter((finding) => finding.severity === "warning").length,
    pairs: new Set(findings.map((finding) => `${path.posix.basename(finding.path)} ${finding.code}`)),
  };
}

function run(program, args, env) {
  const result = spawnSync(program, args, { encoding: "utf8", env });
  if (result.status !== 0) {
    throw new Error(`${program} ${args.join(" ")} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/**
 * A `.venv` in `workspace` that has rag-lsp: a real virtual environment (its own
 * pyvenv.cfg and bin/python, as `python -m venv` makes one), whose site-packages
 * adds --python's through a .pth file. Installing rag-lsp into it would take a
 * minute and the network; `--system-site-packages` would not do, since --python is
 * itself usually a venv, whose packages are not its base interpreter's. Returns
 * the venv's interpreter.
 */
function venvWithRagLsp(workspace) {
  const venv = path.join(workspace, ".venv");
  run(python, ["-m", "venv", "--without-pip", venv]);
  const venvPython = path.join(venv, "bin", "python");
  const sitePackages = run(venvPython, ["-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).trim();
  const theirs = JSON.parse(run(python, ["-c", "import json, site; print(json.dumps(site.getsitepackages()))"]));
  // `import` lines of a .pth run at start-up; addsitedir also reads the .pth files
  // there, such as an editable install's.
  const lines = theirs.map((folder) => `import site; site.addsitedir(${JSON.stringify(folder)})`);
  fs.writeFileSync(path.join(sitePackages, "rag_lsp_e2e.pth"), `${lines.join("\n")}\n`);
  run(venvPython, ["-c", "import rag_lsp"]);
  return venvPython;
}

/** The stand-in for the Python extension, packaged as a .vsix. */
function packStandIn(folder) {
  const source = path.join(extensionRoot, "out", "testing", "python-stand-in.js");
  if (!fs.existsSync(source)) {
    throw new Error(`${source} is missing: build the extension first (npm run build)`);
  }
  const root = path.join(folder, "python-stand-in");
  fs.mkdirSync(root, { recursive: true });
  fs.copyFileSync(path.join(here, "python-stand-in", "package.json"), path.join(root, "package.json"));
  fs.copyFileSync(source, path.join(root, "extension.js"));
  fs.copyFileSync(path.join(extensionRoot, "LICENSE"), path.join(root, "LICENSE"));
  const out = path.join(folder, "python-stand-in.vsix");
  const result = spawnSync(process.execPath, [vsce, "package", "--allow-missing-repository", "--out", out], {
    cwd: root,
    encoding: "utf8",
  });
  if (result.status !== 0) {
    throw new Error(`packaging the Python stand-in failed:\n${result.stdout}\n${result.stderr}`);
  }
  return out;
}

/** A fresh profile, workspace and code-server for one scenario. */
async function startCodeServer(name, setup) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `rag-lsp-e2e-${name}-`));
  try {
    return await launch(root, setup);
  } catch (error) {
    fs.rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

async function launch(root, { extensions, settings, env, onPath, prepare }) {
  const userData = path.join(root, "data");
  const extensionsDir = path.join(root, "extensions");
  const workspace = examplesWithBrokenFiles(path.join(root, "examples"));
  prepare?.(workspace);
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify(
      {
        "security.workspace.trust.enabled": false,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "telemetry.telemetryLevel": "off",
        "extensions.autoUpdate": false,
        "extensions.autoCheckUpdates": false,
        "extensions.ignoreRecommendations": true,
        "update.mode": "none",
        "window.restoreWindows": "none",
        "editor.codeLens": true,
        ...settings,
      },
      null,
      2,
    ),
  );
  const config = path.join(root, "config.yaml");
  fs.writeFileSync(config, "auth: none\n");
  const common = ["--config", config, "--user-data-dir", userData, "--extensions-dir", extensionsDir];
  // VS Code gives extensions the environment of the user's login shell, as when it is
  // started from the desktop: a program is on PATH when the shell's profile puts it there.
  const fullEnv = { ...process.env, ...env, HOME: path.join(root, "home"), SHELL: "/bin/bash" };
  fs.mkdirSync(path.join(fullEnv.HOME, ".local", "bin"), { recursive: true });
  fs.writeFileSync(path.join(fullEnv.HOME, ".profile"), 'PATH="$HOME/.local/bin:$PATH"\n');
  for (const program of onPath ?? []) {
    fs.symlinkSync(program, path.join(fullEnv.HOME, ".local", "bin", path.basename(program)));
  }
  run(process.execPath, [codeServer, ...common, ...extensions.flatMap((file) => ["--install-extension", file])], fullEnv);
  const server = spawn(
    process.execPath,
    [
      codeServer,
      ...common,
      "--auth",
      "none",
      "--bind-addr",
      "127.0.0.1:0",
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
    ],
    { env: fullEnv, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  const output = [];
  const stop = () => {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {
      // already gone
    }
  };
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start:\n${output.join("")}`)), WAIT_MS);
    const read = (chunk) => {
      output.push(chunk.toString());
      const found = /HTTP server listening on (http:\/\/[\d.]+:\d+)/.exec(output.join(""));
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    };
    server.stdout.on("data", read);
    server.stderr.on("data", read);
    server.on("exit", (code) => reject(new Error(`code-server exited (${code}):\n${output.join("")}`)));
  }).catch((error) => {
    stop();
    throw error;
  });
  return {
    root,
    userData,
    workspace,
    url: `${url}/?folder=${encodeURIComponent(workspace)}`,
    output,
    stop,
  };
}

/** Polls `probe` until it returns a truthy value; fails with `what` after the timeout. */
async function until(what, probe, timeout = WAIT_MS) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) {
        return last;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout / 1000} s waiting for ${what}${last ? ` (last: ${last})` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function command(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: UI_MS });
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: UI_MS });
  await page.keyboard.press("Enter");
}

/** The rag-lsp status bar item's text. */
async function statusText(page) {
  const items = await page.locator(".statusbar-item").allInnerTexts();
  return items.map((text) => text.trim()).find((text) => text.startsWith("rag-lsp")) ?? "";
}

/** The problems panel's rows: ["broken.jsonl", "RAG200 ... message", ...], maximized so none is hidden. */
async function problemRows(page) {
  return page
    .locator(".markers-panel .monaco-list-row")
    .evaluateAll((rows) => rows.map((row) => (row.innerText ?? "").replace(/\s+/g, " ")));
}

/** {errors, warnings} as the status bar's problems item counts them. */
async function problemCounts(page) {
  const item = page.locator("[id='status.problems']").first();
  const label = [(await item.getAttribute("aria-label")) ?? "", await item.innerText()].join(" | ");
  const count = (word) => {
    const found = new RegExp(`${word}s?: (\\d+)|(\\d+) ${word}`, "i").exec(label);
    return found ? Number(found[1] ?? found[2]) : 0;
  };
  return { errors: count("error"), warnings: count("warning"), label };
}

async function checkFindings(page, expected) {
  let seen = "";
  await until("the problems panel to show the findings of rag-lsp check", async () => {
    const counts = await problemCounts(page);
    seen = counts.label;
    return counts.errors === expected.errors && counts.warnings === expected.warnings ? counts : undefined;
  }).catch((error) => {
    throw new Error(`${error.message}; expected ${expected.errors} errors and ${expected.warnings} warnings, the status bar says "${seen}"`);
  });
  await command(page, "View: Focus Problems (Errors, Warnings, Infos)");
  await command(page, "View: Toggle Maximized Panel");
  let absent = [];
  await until("every finding of rag-lsp check in the problems panel", async () => {
    const text = (await problemRows(page)).join("\n");
    absent = [...expected.pairs].filter((pair) => !pair.split(" ").every((part) => text.includes(part)));
    return absent.length === 0;
  }).catch((error) => {
    throw new Error(`${error.message}; not shown: ${absent.join(", ")}`);
  });
  await command(page, "View: Toggle Maximized Panel");
  log(`problems panel: ${expected.errors} errors and ${expected.warnings} warnings, ${[...expected.pairs].sort().join(", ")}: as rag-lsp check finds`);
}

/** The rag-lsp output channel says `line`. */
async function checkOutput(page, line) {
  await command(page, "rag-lsp: Show Output");
  const text = await until(`the rag-lsp output to say "${line}"`, async () => {
    // Monaco draws spaces as no-break spaces.
    const shown = (await page.locator(".output-view .view-lines").first().innerText()).replace(/\u00a0/g, " ");
    return shown.includes(line) ? shown : undefined;
  });
  log(`output: ${text.split("\n").find((shown) => shown.includes(line)).trim()}`);
  await command(page, "View: Hide Panel");
}

async function openFile(page, name) {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: UI_MS });
  await input.fill(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: UI_MS });
  await page.keyboard.press("Enter");
  await page.locator(".tab.active", { hasText: name }).waitFor({ timeout: UI_MS });
}

async function checkRunCase(page) {
  await openFile(page, "gateway.jsonl");
  const lens = page.locator(".codelens-decoration a", { hasText: /^Run case \(\d+ suites\)$/ }).first();
  await lens.waitFor({ timeout: WAIT_MS });
  await lens.click();
  const all = page.locator(".quick-input-list .monaco-list-row", { hasText: /All \d+ suites/ });
  await all.waitFor({ timeout: UI_MS });
  await all.click();
  await command(page, "View: Focus Problems (Errors, Warnings, Infos)");
  await command(page, "View: Toggle Maximized Panel");
  const rows = await until("RAG400 in the problems panel after the run-case click", async () => {
    const found = (await problemRows(page)).filter((text) => text.includes("RAG400"));
    return found.length ? found : undefined;
  });
  await command(page, "View: Toggle Maximized Panel");
  for (const row of rows) {
    log(`run case: ${row.trim()}`);
  }
}

function logFiles(folder) {
  if (!fs.existsSync(folder)) {
    return [];
  }
  return fs.readdirSync(folder, { recursive: true }).map((file) => path.join(folder, String(file))).filter((file) => fs.statSync(file).isFile());
}

async function scenario(name, browser, setup, checks) {
  const started = Date.now();
  const workspaceRun = await startCodeServer(name, setup);
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const page = await context.newPage();
  try {
    log(`${name}: VS Code at ${workspaceRun.url}`);
    await page.goto(workspaceRun.url);
    await page.locator(".monaco-workbench").waitFor({ timeout: WAIT_MS });
    await checks(page, workspaceRun);
    log(`${name}: passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return true;
  } catch (error) {
    const shot = path.join(artifacts, `${name}.png`);
    await page.screenshot({ path: shot }).catch(() => undefined);
    fs.writeFileSync(path.join(artifacts, `${name}-code-server.log`), workspaceRun.output.join(""));
    fs.cpSync(path.join(workspaceRun.userData, "logs"), path.join(artifacts, `${name}-logs`), { recursive: true, force: true });
    console.error(`[e2e] ${name}: FAILED: ${error instanceof Error ? error.message : error}`);
    for (const file of logFiles(path.join(workspaceRun.userData, "logs"))) {
      if (/rag-lsp|exthost\.log$/.test(path.basename(file))) {
        const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-40);
        console.error(`[e2e] ${name}: ${path.relative(workspaceRun.userData, file)}, its end:\n${lines.join("\n")}`);
      }
    }
    console.error(`[e2e] ${name}: screenshot and logs in ${artifacts}`);
    return false;
  } finally {
    await context.close();
    workspaceRun.stop();
    fs.rmSync(workspaceRun.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

async function main() {
  for (const [what, file] of [
    ["code-server (e2e/install.sh)", codeServer],
    ["Chromium (apt-get install chromium)", chromiumPath],
    ["the .vsix", vsix],
    ["the interpreter", python],
  ]) {
    if (!file || !fs.existsSync(file)) {
      console.error(`[e2e] ${what} is missing${file ? `: ${file}` : ""}`);
      process.exit(2);
    }
  }
  const expected = expectedFindings(examplesWithBrokenFiles(fs.mkdtempSync(path.join(os.tmpdir(), "rag-lsp-e2e-expected-")) + "/examples"));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "rag-lsp-e2e-"));
  process.on("exit", () => fs.rmSync(scratch, { recursive: true, force: true }));
  const standIn = packStandIn(scratch);
  const bare = pathWithoutRagLsp();
  const ragLsp = path.join(path.dirname(python), "rag-lsp");
  if (!fs.existsSync(ragLsp)) {
    throw new Error(`no rag-lsp beside ${python}: the path scenario needs one`);
  }
  const scenarios = {
    interpreter: [
      { extensions: [vsix, standIn], settings: { "python.defaultInterpreterPath": python }, env: { PATH: bare } },
      async (page) => {
        const status = await until("the status bar to show the interpreter", async () => {
          const text = await statusText(page);
          return /^rag-lsp: Python \d+\.\d+\.\d+ \(/.test(text) ? text : undefined;
        });
        log(`status bar: ${status}`);
        await checkOutput(page, "Starting the server found by rule 3 (the interpreter selected in the Python extension)");
        await checkFindings(page, expected);
        await checkRunCase(page);
      },
    ],
    path: [
      // As pipx installs it: ~/.local/bin/rag-lsp, on the login shell's PATH.
      { extensions: [vsix], settings: {}, env: { PATH: bare }, onPath: [ragLsp] },
      async (page) => {
        const status = await until("the status bar to show rag-lsp on PATH", async () => {
          const text = await statusText(page);
          return text === "rag-lsp: rag-lsp on PATH" ? text : undefined;
        });
        log(`status bar: ${status}`);
        await checkFindings(page, expected);
        await checkRunCase(page);
      },
    ],
    venv: [
      // rag-lsp on PATH as well: the workspace's venv comes first.
      { extensions: [vsix], settings: {}, env: { PATH: bare }, onPath: [ragLsp], prepare: venvWithRagLsp },
      async (page, { workspace }) => {
        const status = await until("the status bar to show the workspace's .venv", async () => {
          const text = await statusText(page);
          return /^rag-lsp: Python \d+\.\d+\.\d+ \(\.venv\)$/.test(text) ? text : undefined;
        });
        log(`status bar: ${status}`);
        const venvPython = path.join(workspace, ".venv", "bin", "python");
        await checkOutput(page, `Starting the server found by rule 4 (the workspace's .venv or venv): ${venvPython} -m rag_lsp serve`);
        await checkFindings(page, expected);
      },
    ],
    none: [
      { extensions: [vsix, standIn], settings: {}, env: { PATH: bare } },
      async (page) => {
        const toast = page.locator(".notification-toast", { hasText: "the language server was not found" });
        await toast.waitFor({ timeout: WAIT_MS });
        const buttons = (await toast.locator(".monaco-button").allInnerTexts()).map((text) => text.trim());
        for (const button of ["Select Interpreter", "Open Setting", "Show Install Command"]) {
          if (!buttons.includes(button)) {
            throw new Error(`the notification has no "${button}" button: ${buttons.join(", ")}`);
          }
        }
        const status = await until("the status bar to say not found", async () => {
          const text = await statusText(page);
          return text === "rag-lsp: not found" ? text : undefined;
        });
        const toasts = await page.locator(".notification-toast", { hasText: "rag-lsp" }).count();
        if (toasts !== 1) {
          throw new Error(`${toasts} rag-lsp notifications, not one`);
        }
        log(`notification: ${(await toast.locator(".notification-list-item-message").innerText()).trim()}`);
        log(`buttons: ${buttons.join(" | ")}; status bar: ${status}`);
        // Select Interpreter: the Python extension's picker; the server then starts on its choice.
        await toast.locator(".monaco-button", { hasText: "Select Interpreter" }).click();
        const input = page.locator(".quick-input-widget input");
        await input.waitFor({ state: "visible", timeout: WAIT_MS });
        await input.fill(python);
        await page.keyboard.press("Enter");
        const running = await until("the server to start on the selected interpreter", async () => {
          const text = await statusText(page);
          return /^rag-lsp: Python \d+\.\d+\.\d+ \(/.test(text) ? text : undefined;
        });
        log(`after Select Interpreter, status bar: ${running}`);
        await checkFindings(page, expected);
      },
    ],
  };
  if (options["bundled-vsix"]) {
    scenarios.bundled = [
      // rag-lsp on PATH too: useBundled means the bundled copy all the same.
      {
        extensions: [path.resolve(options["bundled-vsix"])],
        settings: { "ragLsp.importStrategy": "useBundled" },
        env: { PATH: bare },
        onPath: [ragLsp],
      },
      async (page) => {
        const status = await until("the status bar to show the bundled rag-lsp", async () => {
          const text = await statusText(page);
          return /^rag-lsp: Python \d+\.\d+\.\d+( \(.*\))?, bundled rag-lsp$/.test(text) ? text : undefined;
        });
        log(`status bar: ${status}`);
        await checkOutput(page, "Starting the server found by rule 2 (the rag-lsp bundled with the extension)");
        await checkFindings(page, expected);
      },
    ];
  }
  const chosen = options.only ? options.only.split(",") : Object.keys(scenarios);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-gpu"] });
  let failed = 0;
  try {
    for (const name of chosen) {
      if (!scenarios[name]) {
        throw new Error(`no scenario ${name}; there are ${Object.keys(scenarios).join(", ")}`);
      }
      const [setup, checks] = scenarios[name];
      if (!(await scenario(name, browser, setup, checks))) {
        failed += 1;
      }
    }
  } finally {
    await browser.close();
  }
  console.log(`vscode e2e: ${chosen.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  console.error(`[e2e] ${error instanceof Error ? error.stack : error}`);
  process.exit(1);
});
