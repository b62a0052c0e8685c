-- rag-lsp for Neovim: starts `rag-lsp serve` for retrieval eval suites (YAML),
-- datasets (JSON Lines) and metric manifests.
--
--   vim.lsp.enable("rag_lsp")       -- Neovim 0.11+, configured by lsp/rag_lsp.lua
--   require("rag_lsp").setup({})    -- any Neovim from 0.7
--
-- Neovim 0.11+: M.config() is the vim.lsp.config entry; lsp/rag_lsp.lua returns
-- it with the defaults, setup() registers it with its options and enables it.
-- Neovim 0.7 to 0.10: setup() starts vim.lsp.start_client from a FileType
-- autocmd, one client per workspace root.

local M = {}

M.name = "rag_lsp"

-- The defaults shared with the server (globs, settings files, root markers),
-- generated from rag_lsp/core/workspace/defaults.json.
local DEFAULTS = require("rag_lsp.defaults")
-- rag-lsp's own folder (`.punica`), the first marker of a workspace root.
local OWN_FOLDER = DEFAULTS.rootMarkers[1].name

local INSTALL = "pip install rag-lsp"
local RUN_CASE = "ragLsp.runCase"
local RUN_SUITE = "ragLsp.runSuite"

local defaults = {
  -- The server command. Default: { "rag-lsp", "serve" }, or
  -- { python, "-m", "rag_lsp", "serve" } when `python` is set.
  cmd = nil,
  -- A Python interpreter that has rag-lsp installed.
  python = nil,
  -- `toml`: only the workspace's settings file (see should_attach).
  filetypes = { "yaml", "jsonl", "toml" },
  -- Server settings, camelCase as in docs/reference/settings.md: suiteGlobs, datasetGlobs,
  -- manifestGlobs, severity, maxFileBytes, maxYamlBytes, maxLineBytes,
  -- maxYamlDepth, maxYamlNodes, runTimeout, runConcurrency, baseline,
  -- maxFindingsShown.
  settings = {},
  -- Whether the workspace may run `command` / `http` targets: a boolean, or a
  -- function(root_dir) returning one. Never read from the workspace itself.
  trusted = false,
  -- Show code lenses ("Run case", "Run suite", results) and refresh them on these events.
  codelens = true,
  codelens_events = { "BufEnter", "InsertLeave", "BufWritePost", "CursorHold" },
  -- Echo the server's run progress ($/progress) in the command line.
  progress = true,
  on_attach = nil,
  capabilities = nil,
}

M.options = vim.deepcopy(defaults)
-- Whether setup() was called (:checkhealth tells which way the server starts).
M.set_up = false

-- Roots trusted for this session with :RagTrust.
local session_trust = {}
-- 0.7 to 0.10: client id per root.
local clients_by_root = {}
local warned_missing = false

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

local function notify(message, level)
  vim.notify("rag-lsp: " .. message, level or vim.log.levels.INFO)
end

-- Client methods: `client:request()` on 0.11+, `client.request()` before.
local function request(client, method, params, handler, bufnr)
  if has("0.11") then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function client_notify(client, method, params)
  if has("0.11") then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

local function get_clients(bufnr)
  local found = {}
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ name = M.name })
    or vim.lsp.get_active_clients()
  for _, client in ipairs(all) do
    if client.name == M.name and (bufnr == nil or vim.lsp.buf_is_attached(bufnr, client.id)) then
      table.insert(found, client)
    end
  end
  return found
end
M.get_clients = get_clients

-- Paths -----------------------------------------------------------------------

local uv = vim.loop or vim.uv

local function is_dir(path)
  local stat = uv.fs_stat(path)
  return stat ~= nil and stat.type == "directory"
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function dirname(path)
  return vim.fn.fnamemodify(path, ":h")
end

local function normalize(path)
  return (vim.fn.fnamemodify(path, ":p"):gsub("\\", "/"):gsub("(.)/$", "%1"))
end

-- The workspace root of a file, as the server sees it: the nearest folder upwards
-- holding `.punica/`, else the git root, else the file's folder (the first of the
-- root markers found upwards). The second value says which: the marker's name
-- (".punica", ".git") or "folder".
function M.root_info(path)
  path = normalize(path)
  local function upwards(test)
    local dir = is_dir(path) and path or dirname(path)
    while true do
      if test(dir) then
        return dir
      end
      local parent = dirname(dir)
      if parent == dir then
        return nil
      end
      dir = parent
    end
  end
  for _, marker in ipairs(DEFAULTS.rootMarkers) do
    local found = upwards(function(dir)
      local candidate = dir .. "/" .. marker.name
      if marker.kind == "folder" then
        return is_dir(candidate)
      end
      return exists(candidate)
    end)
    if found then
      return found, marker.name
    end
  end
  return is_dir(path) and path or dirname(path), "folder"
end

function M.root_dir(path)
  return (M.root_info(path))
end

-- A workspace glob (`**`, `*`, `?`, `{a,b}`) as a Vim regex, anchored.
function M.glob_to_regex(glob)
  local out, i = { "^" }, 1
  while i <= #glob do
    local c = glob:sub(i, i)
    if glob:sub(i, i + 2) == "**/" then
      table.insert(out, "\\%(.*/\\)\\=")
      i = i + 2
    elseif glob:sub(i, i + 1) == "**" then
      table.insert(out, ".*")
      i = i + 1
    elseif c == "*" then
      table.insert(out, "[^/]*")
    elseif c == "?" then
      table.insert(out, "[^/]")
    elseif c == "{" then
      table.insert(out, "\\%(")
    elseif c == "}" then
      table.insert(out, "\\)")
    elseif c == "," then
      table.insert(out, "\\|")
    elseif c:match("[%.%[%]~\\%^%$]") then
      table.insert(out, "\\" .. c)
    else
      table.insert(out, c)
    end
    i = i + 1
  end
  table.insert(out, "$")
  return table.concat(out)
end

local function glob_list(value, fallback)
  if type(value) == "string" then
    return { value }
  end
  if type(value) == "table" and #value > 0 then
    return value
  end
  return fallback
end

local function relative(path, root)
  if path:sub(1, #root + 1) == root .. "/" then
    return path:sub(#root + 2)
  end
  return nil
end

-- A Lua pattern of a line that opens the TOML table `names` (a list of keys) or
-- one inside it: `[tool.rag-lsp]`, `[tool."rag-lsp".severity]`.
local function table_header(names)
  local keys = {}
  for _, key in ipairs(names) do
    keys[#keys + 1] = "[\"']?" .. key:gsub("%W", "%%%0") .. "[\"']?"
  end
  return "^%s*%[+%s*" .. table.concat(keys, "%s*%.%s*") .. "%s*[%]%.]"
end

-- Whether a TOML buffer is the workspace's settings file, as the server reads
-- it: `.punica/rag-lsp.toml`, or the root's `pyproject.toml` when it holds a
-- `[tool.rag-lsp]` table (any other pyproject.toml is left to other servers).
local function is_settings_file(bufnr, path)
  local rel = relative(path, M.root_dir(path))
  for _, file in ipairs(DEFAULTS.settingsFiles) do
    if rel == file.path then
      if not file.table then
        return true
      end
      local header = table_header(file.table)
      for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
        if line:match(header) then
          return true
        end
      end
      return false
    end
  end
  return false
end

-- Whether the server should get this buffer: every JSON Lines file (a suite may
-- name a dataset anywhere); a YAML file that matches the suite or manifest globs,
-- lies under `.punica/`, or starts a top-level `suites:` or `manifest_version:`;
-- the workspace's settings file.
function M.should_attach(bufnr)
  if vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then
    return false
  end
  local filetype = vim.bo[bufnr].filetype
  if filetype == "jsonl" then
    return true
  end
  if not vim.tbl_contains(M.options.filetypes, filetype) then
    return false
  end
  local path = normalize(name)
  if filetype == "toml" then
    return is_settings_file(bufnr, path)
  end
  if path:find("/" .. OWN_FOLDER:gsub("%W", "%%%0") .. "/", 1) then
    return true
  end
  local rel = relative(path, M.root_dir(path)) or vim.fn.fnamemodify(path, ":t")
  local settings = M.options.settings or {}
  local globs = vim.list_extend(
    vim.deepcopy(glob_list(settings.suiteGlobs, DEFAULTS.suiteGlobs)),
    glob_list(settings.manifestGlobs, DEFAULTS.manifestGlobs)
  )
  for _, glob in ipairs(globs) do
    if vim.fn.match(rel, M.glob_to_regex(glob)) >= 0 then
      return true
    end
  end
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, 200, false)) do
    if line:match("^suites%s*:") or line:match("^manifest_version%s*:") then
      return true
    end
  end
  return false
end

-- Command and settings --------------------------------------------------------

function M.command()
  local options = M.options
  if type(options.cmd) == "table" and #options.cmd > 0 then
    return options.cmd
  end
  if type(options.python) == "string" and options.python ~= "" then
    return { vim.fn.expand(options.python), "-m", "rag_lsp", "serve" }
  end
  return { "rag-lsp", "serve" }
end

-- The command the server starts with: on 0.11+ that of the resolved
-- vim.lsp.config entry (where a user of vim.lsp.enable alone may have changed it),
-- else setup()'s. Never called while that entry is being resolved.
function M.active_command()
  if has("0.11") then
    local ok, config = pcall(function()
      return vim.lsp.config[M.name]
    end)
    if ok and config and type(config.cmd) == "table" and #config.cmd > 0 then
      return config.cmd
    end
  end
  return M.command()
end

-- Why the server cannot start, or nil: the program is missing, or the chosen
-- Python cannot import rag_lsp. The message names the install command.
function M.check_command(cmd)
  cmd = cmd or M.command()
  if vim.fn.executable(cmd[1]) ~= 1 then
    -- Started by vim.lsp.enable alone, the command is set with vim.lsp.config.
    local enabled_alone = has("0.11") and not M.set_up
    if cmd[1] == "rag-lsp" then
      return "`rag-lsp` was not found on PATH. Install it with `"
        .. INSTALL
        .. (
          enabled_alone and "`, or set its path with vim.lsp.config('rag_lsp', { cmd = { '/path/to/rag-lsp', 'serve' } })."
          or "`, or pass `python` (an interpreter that has it) or `cmd` to require('rag_lsp').setup()."
        )
    end
    local fix = enabled_alone and "Fix `cmd` in vim.lsp.config('rag_lsp', ...)"
      or "Fix `cmd`/`python` in require('rag_lsp').setup()"
    return "`" .. cmd[1] .. "` was not found. " .. fix .. ", or install rag-lsp with `" .. INSTALL .. "`."
  end
  if cmd[2] == "-m" and cmd[3] == "rag_lsp" then
    local output = vim.fn.system({ cmd[1], "-c", "import rag_lsp" })
    if vim.v.shell_error ~= 0 then
      return "`"
        .. cmd[1]
        .. "` cannot import rag_lsp ("
        .. vim.trim(output):gsub(".*\n", "")
        .. "). Install it with `"
        .. cmd[1]
        .. " -m "
        .. INSTALL
        .. "`."
    end
  end
  return nil
end

-- Whether the workspace at `root` is trusted, and by what: "session" (:RagTrust),
-- "setup" (the `trusted` option), "settings" (`configured`, the `trusted` of the
-- client's settings, as a vim.lsp.config entry gives it), or nil when it is not.
function M.trust_of(root, configured)
  if root and session_trust[root] then
    return true, "session"
  end
  local trusted = M.options.trusted
  if type(trusted) == "function" then
    local ok, value = pcall(trusted, root)
    trusted = ok and value == true
  end
  if trusted == true then
    return true, "setup"
  end
  if configured == true then
    return true, "settings"
  end
  return false, nil
end

function M.is_trusted(root, configured)
  return (M.trust_of(root, configured))
end

-- The object the server gets as initialization options and for section `ragLsp`:
-- `base` (the client's settings; setup()'s by default) with the root's trust.
function M.server_settings(root, base)
  local settings = vim.deepcopy(base or M.options.settings or {})
  settings.trusted = M.is_trusted(root, settings.trusted)
  return settings
end

-- Code lenses -----------------------------------------------------------------

local function supports_lenses(client)
  local capabilities = client.server_capabilities or {}
  return capabilities.codeLensProvider ~= nil and capabilities.codeLensProvider ~= false
end

-- Past this many lines, a buffer's lenses are resolved only around the lines its
-- windows show: Neovim's own refresh resolves every lens of the buffer, a
-- request per dataset line (100,000 for a large dataset, on every refresh).
local LAZY_LENS_LINES = 2000
-- Lines above and below those shown whose lenses are resolved too.
local LENS_MARGIN = 100

-- The first and last lines (0-based) of `bufnr` its windows show, with the
-- margin; nil when no window shows it.
local function shown_lines(bufnr)
  local first, last
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    local top, bottom = vim.fn.line("w0", win) - 1, vim.fn.line("w$", win) - 1
    first = first and math.min(first, top) or top
    last = last and math.max(last, bottom) or bottom
  end
  if first == nil then
    return nil
  end
  return first - LENS_MARGIN, last + LENS_MARGIN
end

-- The lenses of a large buffer, resolved and shown around the lines shown.
local function refresh_shown_lenses(bufnr)
  local first, last = shown_lines(bufnr)
  if first == nil then
    return
  end
  for _, client in ipairs(get_clients(bufnr)) do
    if supports_lenses(client) then
      M.fetch_lenses(client, bufnr, function(lens)
        local at = lens.range.start.line
        return at >= first and at <= last
      end, function(err, lenses)
        if err or not vim.api.nvim_buf_is_loaded(bufnr) then
          return
        end
        vim.lsp.codelens.save(lenses, bufnr, client.id)
        vim.lsp.codelens.display(lenses, bufnr, client.id)
      end)
    end
  end
end

-- Re-request the lenses of a buffer, from the rag-lsp client only when no other
-- client there would be asked for lenses it does not serve.
function M.refresh_lenses(bufnr)
  if not M.options.codelens or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  if vim.api.nvim_buf_line_count(bufnr) > LAZY_LENS_LINES then
    refresh_shown_lenses(bufnr)
    return
  end
  local any = false
  for _, client in ipairs(get_clients(bufnr)) do
    any = any or supports_lenses(client)
  end
  if not any then
    return
  end
  if has("0.10") then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
  elseif bufnr == vim.api.nvim_get_current_buf() then
    vim.lsp.codelens.refresh()
  end
end

local function attached_buffers(client)
  if client.attached_buffers then -- 0.9+
    return vim.tbl_keys(client.attached_buffers)
  end
  return vim.lsp.get_buffers_by_client_id(client.id)
end

-- Whether this Neovim pulls diagnostics (0.10+): then it must also pull again when
-- the server asks, or a run's results would show only after the next edit.
local function pulls_diagnostics()
  return has("0.10") and vim.lsp.diagnostic and vim.lsp.diagnostic.on_diagnostic ~= nil
end

-- Pull the diagnostics of `bufnr` now, as Neovim does after an edit.
function M.pull_diagnostics(client, bufnr)
  local capabilities = client.server_capabilities or {}
  if not pulls_diagnostics() or not capabilities.diagnosticProvider or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
  request(client, "textDocument/diagnostic", params, function(err, result, ctx)
    vim.lsp.diagnostic.on_diagnostic(err, result, ctx)
  end, bufnr)
end

local handlers = {
  -- The server asks for fresh lenses (results changed): re-request them everywhere.
  ["workspace/codeLens/refresh"] = function(_, _, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if client then
      for _, bufnr in ipairs(attached_buffers(client)) do
        M.refresh_lenses(bufnr)
      end
    end
    return vim.NIL
  end,
  -- The server asks to pull diagnostics again (a run's results came): Neovim
  -- (through 0.11) pulls only after edits, so pull each attached buffer here.
  ["workspace/diagnostic/refresh"] = function(_, _, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if client then
      for _, bufnr in ipairs(attached_buffers(client)) do
        M.pull_diagnostics(client, bufnr)
      end
    end
    return vim.NIL
  end,
}

-- The client capabilities: the user's (or Neovim's), and, where Neovim pulls
-- diagnostics, the refresh request the handler above answers. Neovim 0.11 lays
-- a config's capabilities over its own, so there the refresh request alone is
-- given, and capabilities set with vim.lsp.config("*", ...) are kept.
local function client_capabilities()
  local capabilities = M.options.capabilities
  if not pulls_diagnostics() then
    return capabilities
  end
  local own = has("0.11") and {} or vim.lsp.protocol.make_client_capabilities()
  capabilities = vim.deepcopy(capabilities or own)
  capabilities.workspace = capabilities.workspace or {}
  capabilities.workspace.diagnostics = capabilities.workspace.diagnostics or {}
  if capabilities.workspace.diagnostics.refreshSupport == nil then
    capabilities.workspace.diagnostics.refreshSupport = true
  end
  return capabilities
end

local augroup = vim.api.nvim_create_augroup("rag_lsp", { clear = true })

local function on_attach(client, bufnr)
  -- Started by vim.lsp.enable alone: the commands and progress come now.
  M.prepare()
  if M.options.codelens then
    local group = vim.api.nvim_create_augroup("rag_lsp_lens_" .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd(M.options.codelens_events, {
      group = group,
      buffer = bufnr,
      callback = function()
        M.refresh_lenses(bufnr)
      end,
    })
    M.refresh_lenses(bufnr)
  end
  if M.options.on_attach then
    M.options.on_attach(client, bufnr)
  end
end
-- For an on_attach of the user's own in vim.lsp.config("rag_lsp", ...), which
-- replaces this one: call it from there.
M.on_attach = on_attach

-- The code lenses of `bufnr` from `client`, resolved, in `callback(err, lenses)`.
-- `wanted(lens)` picks the lenses worth resolving (all by default).
local function fetch_lenses(client, bufnr, wanted, callback)
  local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
  request(client, "textDocument/codeLens", params, function(err, result)
    if err then
      return callback(err, nil)
    end
    local lenses = {}
    for _, lens in ipairs(result or {}) do
      if not wanted or wanted(lens) then
        table.insert(lenses, lens)
      end
    end
    local pending = 0
    local resolvable = client.server_capabilities.codeLensProvider
    resolvable = type(resolvable) == "table" and resolvable.resolveProvider
    for _, lens in ipairs(lenses) do
      if not lens.command and resolvable then
        pending = pending + 1
        request(client, "codeLens/resolve", lens, function(_, resolved)
          if resolved and resolved.command then
            lens.command = resolved.command
          end
          pending = pending - 1
          if pending == 0 then
            callback(nil, lenses)
          end
        end, bufnr)
      end
    end
    if pending == 0 then
      callback(nil, lenses)
    end
  end, bufnr)
end
M.fetch_lenses = fetch_lenses

local function is_dataset(bufnr)
  return vim.bo[bufnr].filetype == "jsonl" or vim.api.nvim_buf_get_name(bufnr):match("%.jsonl$") ~= nil
end

-- Runs the lens command `command` nearest the cursor: on the cursor line for a
-- case; on the cursor line or the nearest line above for a suite (in a dataset,
-- the suites that read it).
-- `opts.on_done(err, result)` is called when the server answers.
local function run_lens(command, opts)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local line = opts.line
  if line == nil then
    line = vim.api.nvim_win_get_cursor(0)[1] - 1
  end
  local done = opts.on_done or function() end
  local what = command == RUN_CASE and "Run case" or "Run suite"
  local client = get_clients(bufnr)[1]
  if not client then
    notify("no rag-lsp server is attached to this buffer", vim.log.levels.WARN)
    return done("not attached")
  end
  if not supports_lenses(client) then
    notify("this rag-lsp server offers no code lenses, so no " .. what .. "; upgrade rag-lsp", vim.log.levels.WARN)
    return done("no code lenses")
  end
  -- Executes the run command (of `lens`, when one was found); then every attached
  -- buffer's lenses are asked for again.
  local function execute(params, lens)
    request(client, "workspace/executeCommand", params, function(run_err, result)
      if run_err then
        notify(what .. " failed: " .. (run_err.message or vim.inspect(run_err)), vim.log.levels.ERROR)
      end
      for _, attached in ipairs(attached_buffers(client)) do
        M.refresh_lenses(attached)
      end
      done(run_err, result, lens)
    end, bufnr)
  end
  if command == RUN_SUITE and is_dataset(bufnr) then
    -- In a dataset, the server runs the suites that read it: no lens to look for
    -- (a large dataset's lenses above the cursor would each be resolved first).
    return execute({ command = RUN_SUITE, arguments = { { uri = vim.uri_from_bufnr(bufnr) } } }, nil)
  end
  local wanted = function(lens)
    local at = lens.range.start.line
    if command == RUN_CASE then
      return at == line
    end
    return at <= line
  end
  fetch_lenses(client, bufnr, wanted, function(err, lenses)
    if err then
      notify(what .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return done(err)
    end
    local chosen
    for _, lens in ipairs(lenses) do
      if lens.command and lens.command.command == command then
        if not chosen or lens.range.start.line > chosen.range.start.line then
          chosen = lens
        end
      end
    end
    if not chosen then
      local where = command == RUN_CASE and "on this line" or "on or above this line"
      notify("no " .. what .. " lens " .. where, vim.log.levels.WARN)
      return done("no lens")
    end
    execute({ command = chosen.command.command, arguments = chosen.command.arguments }, chosen)
  end)
end

function M.run_case(opts)
  run_lens(RUN_CASE, opts)
end

function M.run_suite(opts)
  run_lens(RUN_SUITE, opts)
end

-- Trusts the current buffer's workspace for this session and tells the server.
function M.trust(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local clients = get_clients(bufnr)
  if #clients == 0 then
    notify("no rag-lsp server is attached to this buffer", vim.log.levels.WARN)
    return
  end
  for _, client in ipairs(clients) do
    local root = client.config.root_dir
    session_trust[root] = true
    local current = client.settings or client.config.settings or {}
    local settings = M.server_settings(root, current.ragLsp)
    client.config.settings = client.config.settings or {}
    client.config.settings.ragLsp = settings
    if client.settings then
      client.settings.ragLsp = settings
    end
    client_notify(client, "workspace/didChangeConfiguration", { settings = { ragLsp = settings } })
    notify("workspace " .. root .. " is trusted for this session")
  end
end

-- Progress ----------------------------------------------------------------------

local function echo_progress(client_id, value)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or client.name ~= M.name or type(value) ~= "table" then
    return
  end
  local title = value.title or ""
  local text = title:match("^rag%-lsp") and title or ("rag-lsp: " .. title)
  if value.message then
    text = text .. " " .. value.message
  end
  if value.percentage then
    text = text .. string.format(" (%d%%)", value.percentage)
  end
  if value.kind == "end" then
    text = text .. " done"
  end
  vim.api.nvim_echo({ { text } }, false, {})
end

local function setup_progress()
  if not M.options.progress then
    return
  end
  if has("0.10") then
    vim.api.nvim_create_autocmd("LspProgress", {
      group = augroup,
      callback = function(event)
        local data = event.data or {}
        echo_progress(data.client_id, data.params and data.params.value)
      end,
    })
  else
    vim.api.nvim_create_autocmd("User", {
      group = augroup,
      pattern = "LspProgressUpdate",
      callback = function()
        for _, client in ipairs(get_clients()) do
          for _, progress in pairs(client.messages and client.messages.progress or {}) do
            echo_progress(client.id, progress)
          end
        end
      end,
    })
  end
end

-- Starting ----------------------------------------------------------------------

local function base_config()
  local settings = vim.deepcopy(M.options.settings or {})
  settings.trusted = M.options.trusted == true
  return {
    name = M.name,
    cmd = M.command(),
    filetypes = M.options.filetypes,
    handlers = handlers,
    on_attach = on_attach,
    capabilities = client_capabilities(),
    -- What the server gets, as settings (section `ragLsp`) and initialization
    -- options; before_init puts in the root's trust. A copy per client.
    settings = { ragLsp = settings },
    init_options = vim.deepcopy(settings),
    before_init = function(params, config)
      config.settings = config.settings or {}
      local given = vim.tbl_deep_extend("force", config.init_options or {}, config.settings.ragLsp or {})
      local sent = M.server_settings(config.root_dir, given)
      params.initializationOptions = sent
      -- In place: the client answers workspace/configuration from this table.
      config.settings.ragLsp = sent
    end,
  }
end

-- Commands found startable, so the check (a Python start for `python`) runs once.
local startable = {}

local function warn_if_missing(cmd)
  cmd = cmd or M.command()
  local key = table.concat(cmd, "\0")
  if startable[key] then
    return false
  end
  local problem = M.check_command(cmd)
  if problem then
    if not warned_missing then
      warned_missing = true
      notify(problem, vim.log.levels.ERROR)
    end
    return true
  end
  startable[key] = true
  return false
end

-- 0.7 to 0.10: one client per root, started on the first buffer that needs it.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not M.should_attach(bufnr) then
    return nil
  end
  local root = M.root_dir(vim.api.nvim_buf_get_name(bufnr))
  local client_id = clients_by_root[root]
  if client_id and not vim.lsp.get_client_by_id(client_id) then
    client_id = nil
  end
  if not client_id then
    if warn_if_missing() then
      return nil
    end
    local config = base_config()
    config.root_dir = root
    config.workspace_folders = { { uri = vim.uri_from_fname(root), name = root } }
    config.on_exit = function()
      if clients_by_root[root] == client_id then
        clients_by_root[root] = nil
      end
    end
    client_id = vim.lsp.start_client(config)
    if not client_id then
      return nil
    end
    clients_by_root[root] = client_id
  end
  vim.lsp.buf_attach_client(bufnr, client_id)
  return client_id
end

local function create_commands()
  vim.api.nvim_create_user_command("RagRunCase", function()
    M.run_case()
  end, { desc = "rag-lsp: run the case on the cursor line (its Run case lens)" })
  vim.api.nvim_create_user_command("RagRunSuite", function()
    M.run_suite()
  end, { desc = "rag-lsp: run the suite at or above the cursor (its Run suite lens)" })
  vim.api.nvim_create_user_command("RagTrust", function()
    M.trust()
  end, { desc = "rag-lsp: let this workspace run command/http targets, for this session" })
end

local function add_filetype()
  if vim.filetype and vim.filetype.add then
    vim.filetype.add({ extension = { jsonl = "jsonl" } })
  end
  -- Neovim before 0.8 detects filetypes with filetype.vim, which has no jsonl.
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
    group = augroup,
    pattern = "*.jsonl",
    command = "setfiletype jsonl",
  })
end

-- The user commands and the progress echo, made once: by setup(), or by the
-- first attach of a server started with vim.lsp.enable alone.
local prepared = false
function M.prepare()
  if prepared then
    return
  end
  prepared = true
  create_commands()
  setup_progress()
end

-- Says, once, what to install when a buffer the server should get cannot have
-- it: vim.lsp.enable skips a missing program silently, and never asks root_dir.
local watching = false
local function watch_command()
  if watching then
    return
  end
  watching = true
  local function check(bufnr)
    if vim.api.nvim_buf_is_valid(bufnr) and M.should_attach(bufnr) then
      warn_if_missing(M.active_command())
    end
  end
  vim.api.nvim_create_autocmd("FileType", {
    group = augroup,
    pattern = M.options.filetypes,
    callback = function(event)
      check(event.buf)
    end,
  })
  -- The entry is first read on the FileType of some buffer, too late for the
  -- autocmd above to see it: check the buffers open now, once this one is done.
  vim.schedule(function()
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(M.options.filetypes, vim.bo[bufnr].filetype) then
        check(bufnr)
      end
    end
  end)
end

-- Neovim 0.11+: the vim.lsp.config entry, from the current options (setup()'s,
-- or the defaults): cmd, filetypes, a root_dir that picks the buffers the server
-- checks and finds their workspace root as the server does, the trust-aware
-- settings, and the handlers and on_attach behind lenses, runs and commands.
-- lsp/rag_lsp.lua returns it, so vim.lsp.enable("rag_lsp") needs nothing more.
function M.config()
  local config = base_config()
  config.root_dir = function(bufnr, on_dir)
    if M.should_attach(bufnr) and not warn_if_missing(M.active_command()) then
      on_dir(M.root_dir(vim.api.nvim_buf_get_name(bufnr)))
    end
  end
  watch_command()
  return config
end

function M.setup(options)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(defaults), options or {})
  M.set_up = true
  vim.api.nvim_create_augroup("rag_lsp", { clear = true })
  prepared, watching = false, false
  add_filetype()
  M.prepare()

  if has("0.11") then
    vim.lsp.config(M.name, M.config())
    vim.lsp.enable(M.name)
    return
  end

  vim.api.nvim_create_autocmd("FileType", {
    group = augroup,
    pattern = M.options.filetypes,
    callback = function(event)
      M.attach(event.buf)
    end,
  })
  -- Buffers opened before setup() (a lazily loaded plugin).
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(M.options.filetypes, vim.bo[bufnr].filetype) then
      M.attach(bufnr)
    end
  end
  -- A dataset among them has no filetype where Neovim knows no jsonl (before
  -- 0.8: the detection added above applies to buffers read from now on); given
  -- one, the FileType autocommand attaches it.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype == "" and name:match("%.jsonl$") then
      vim.bo[bufnr].filetype = "jsonl"
    end
  end
end

return M
