-- :checkhealth rag_lsp: whether the server command is found and which version it
-- is, how this Neovim starts it (vim.lsp.enable, setup() or start_client), and
-- the workspace root and trust of the buffer :checkhealth was called from.

local M = {}

local rag = require("rag_lsp")

-- The report functions: vim.health.start/ok/... (0.10+), vim.health.report_*
-- (0.8, 0.9) or health#report_* (0.7).
local function reporter(kind)
  local health = vim.health or {}
  local fn = health[kind] or health["report_" .. kind]
  if fn then
    return fn
  end
  return function(...)
    return vim.fn["health#report_" .. kind](...)
  end
end

local start, ok, info, warn = reporter("start"), reporter("ok"), reporter("info"), reporter("warn")
local report_error = reporter("error")

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

local function quote(cmd)
  return table.concat(cmd, " ")
end

local function enabled()
  if not has("0.11") then
    return false
  end
  if vim.lsp.is_enabled then
    return vim.lsp.is_enabled(rag.name)
  end
  return vim.lsp._enabled_configs ~= nil and vim.lsp._enabled_configs[rag.name] ~= nil
end

-- The server command's `--version` run: `serve` and what follows it swapped for
-- `--version`. Nil when the command has no `serve` (a wrapper of the user's).
local function version_command(cmd)
  local out = {}
  for _, part in ipairs(cmd) do
    if part == "serve" then
      table.insert(out, "--version")
      return out
    end
    table.insert(out, part)
  end
  return nil
end

-- Runs `cmd` and returns its exit code and output (stdout, else stderr), or nil
-- and why when it did not finish within `timeout_ms`.
local function run(cmd, timeout_ms)
  local output = { stdout = {}, stderr = {} }
  local function collect(name)
    return function(_, data)
      vim.list_extend(output[name], data or {})
    end
  end
  local ok_start, job = pcall(vim.fn.jobstart, cmd, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = collect("stdout"),
    on_stderr = collect("stderr"),
  })
  if not ok_start or job <= 0 then
    return nil, "could not be started"
  end
  local code = vim.fn.jobwait({ job }, timeout_ms)[1]
  if code == -1 then
    vim.fn.jobstop(job)
    return nil, string.format("gave no answer within %d s", timeout_ms / 1000)
  end
  local text = vim.trim(table.concat(output.stdout, "\n"))
  if text == "" then
    text = vim.trim(table.concat(output.stderr, "\n"))
  end
  return code, text
end

local function check_server()
  start("rag-lsp server")
  local cmd = rag.active_command()
  local problem = rag.check_command(cmd)
  if problem then
    report_error("The server command `" .. quote(cmd) .. "` cannot start: " .. problem)
    return
  end
  ok("Server command: `" .. quote(cmd) .. "` (" .. vim.fn.exepath(cmd[1]) .. ")")
  local version = version_command(cmd)
  if not version then
    info("The command has no `serve`: its version is not asked for.")
    return
  end
  local code, text = run(version, 10000)
  if code == 0 and text:match("^rag%-lsp ") then
    ok("Version: " .. text)
  elseif code == nil then
    report_error("`" .. quote(version) .. "` " .. text)
  else
    report_error(
      "`" .. quote(version) .. "` failed (exit " .. code .. "): " .. text,
      { "Reinstall the server: `pip install --force-reinstall rag-lsp`." }
    )
  end
end

local function check_neovim()
  start("Neovim")
  local v = vim.version()
  local version = string.format("Neovim %d.%d.%d", v.major, v.minor, v.patch)
  if rag.set_up and has("0.11") then
    ok(version .. ': started by require("rag_lsp").setup() through vim.lsp.config and vim.lsp.enable.')
  elseif rag.set_up then
    ok(version .. ': started by require("rag_lsp").setup() with vim.lsp.start_client, one client per workspace root.')
  elseif enabled() then
    ok(version .. ': started by vim.lsp.enable("rag_lsp") with the configuration of lsp/rag_lsp.lua.')
  elseif has("0.11") then
    warn(version .. ": the server is not enabled, so no buffer gets it.", {
      'Add vim.lsp.enable("rag_lsp") to your config, or call require("rag_lsp").setup({}).',
    })
  else
    warn(version .. ": the server is not set up, so no buffer gets it.", {
      'Call require("rag_lsp").setup({}) in your config (vim.lsp.enable needs Neovim 0.11).',
    })
  end
end

local function is_file(bufnr)
  return bufnr > 0
    and vim.api.nvim_buf_is_valid(bufnr)
    and vim.bo[bufnr].buftype == ""
    and vim.api.nvim_buf_get_name(bufnr) ~= ""
end

-- The buffer :checkhealth was called from: its report opens in a new tab (or a
-- split), whose alternate buffer is that one; else the previous tab's.
local function calling_buffer()
  local candidates = { vim.fn.bufnr("#"), vim.api.nvim_get_current_buf() }
  local tab = vim.fn.tabpagenr("#")
  if tab > 0 then
    table.insert(candidates, vim.fn.tabpagebuflist(tab)[vim.fn.tabpagewinnr(tab)])
  end
  local win = vim.fn.winnr("#")
  if win > 0 then
    table.insert(candidates, vim.fn.winbufnr(win))
  end
  for _, bufnr in ipairs(candidates) do
    if is_file(bufnr) then
      return bufnr
    end
  end
  return nil
end

local HOW = {
  [".punica"] = "the nearest folder holding .punica/",
  [".git"] = "the git root: no folder above holds .punica/",
  folder = "the file's folder: no .punica/ and no git root above it",
}

local BY = {
  session = "by :RagTrust, for this session",
  setup = "by the `trusted` option of setup()",
  settings = "by `trusted` in the client's settings (vim.lsp.config)",
}

local function client_settings(client)
  local settings = client.settings or client.config.settings or {}
  return settings.ragLsp or {}
end

local function report_trust(root, trusted, by)
  if trusted then
    ok("Trusted " .. (BY[by] or "by the editor") .. ": `command` and `http` targets in " .. root .. " may run.")
    return
  end
  local always = rag.set_up and "setup({ trusted = true })"
    or 'vim.lsp.config("rag_lsp", { settings = { ragLsp = { trusted = true } } })'
  info(
    "Not trusted: `command` and `http` targets in "
      .. root
      .. " do not run. :RagTrust trusts it for this session, "
      .. always
      .. " always."
  )
end

local function check_workspace()
  start("Workspace")
  local bufnr = calling_buffer()
  if not bufnr then
    info("No file buffer: call :checkhealth rag_lsp from a suite or dataset to see its workspace.")
  else
    local path = vim.api.nvim_buf_get_name(bufnr)
    local root, how = rag.root_info(path)
    local client = rag.get_clients(bufnr)[1]
    if client then
      ok("Buffer: " .. path .. " (" .. vim.bo[bufnr].filetype .. "), attached to client " .. client.id .. ".")
    elseif rag.should_attach(bufnr) then
      warn("Buffer: " .. path .. " is a file the server checks, but no rag-lsp client is attached.", {
        "The sections above say why; so may the LSP log, :lua print(vim.lsp.get_log_path()).",
      })
    else
      info(
        "Buffer: "
          .. path
          .. " ("
          .. (vim.bo[bufnr].filetype ~= "" and vim.bo[bufnr].filetype or "no filetype")
          .. ") is not a suite, dataset or manifest, so the server does not get it."
      )
    end
    local client_root = client and client.config.root_dir
    if client_root and client_root ~= root then
      info("Workspace root: " .. client_root .. " (the client's; the server's rule gives " .. root .. ")")
      root = client_root
    else
      ok("Workspace root: " .. root .. " (" .. HOW[how] .. ")")
    end
    if client then
      local configured = client_settings(client).trusted
      local _, by = rag.trust_of(root, configured)
      report_trust(root, configured == true, by)
    else
      local base = rag.set_up and rag.options.settings or nil
      if not base and has("0.11") then
        local ok_config, config = pcall(function()
          return vim.lsp.config[rag.name]
        end)
        base = ok_config and config and config.settings and config.settings.ragLsp or nil
      end
      report_trust(root, rag.trust_of(root, (base or {}).trusted))
    end
  end
  for _, client in ipairs(rag.get_clients()) do
    if not bufnr or not vim.lsp.buf_is_attached(bufnr, client.id) then
      local trusted = client_settings(client).trusted == true
      info(
        "Client "
          .. client.id
          .. ": workspace root "
          .. tostring(client.config.root_dir)
          .. ", "
          .. (trusted and "trusted" or "not trusted")
          .. "."
      )
    end
  end
end

function M.check()
  check_server()
  check_neovim()
  check_workspace()
end

return M
