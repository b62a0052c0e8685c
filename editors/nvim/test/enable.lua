-- Neovim 0.11+ with the plugin folder on the runtimepath and nothing but
-- vim.lsp.enable("rag_lsp"): no setup(), no options. The default command
-- (`rag-lsp serve`) must be on PATH. Driven by tests/test_editors_nvim.py, with
-- the environment of e2e.lua (RAG_LSP_E2E_CMD is not used). Records the
-- diagnostics, lenses and a run Neovim showed, and :checkhealth rag_lsp before
-- and after :RagTrust, as JSON.

local dump = { notifications = {}, steps = {} }

local function diagnostics(bufnr)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(list, { code = d.code, lnum = d.lnum, col = d.col, source = d.source, message = d.message })
  end
  return list
end

-- Waits until `bufnr` has diagnostics and they stop changing for `quiet_ms`.
local function settled_diagnostics(bufnr, timeout_ms, quiet_ms)
  local last, since = nil, vim.uv.now()
  vim.wait(timeout_ms, function()
    local now = vim.json.encode(diagnostics(bufnr))
    if now ~= last then
      last, since = now, vim.uv.now()
    end
    return #vim.diagnostic.get(bufnr) > 0 and vim.uv.now() - since >= quiet_ms
  end, 50)
  return diagnostics(bufnr)
end

-- The lens text Neovim displays, by 0-based line.
local function displayed_lenses(bufnr)
  local shown = {}
  for name, ns in pairs(vim.api.nvim_get_namespaces()) do
    if name:find("codelens") then
      for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })) do
        local text = {}
        for _, chunk in ipairs(mark[4].virt_text or {}) do
          table.insert(text, chunk[1])
        end
        if #text > 0 then
          shown[tostring(mark[2])] = table.concat(text)
        end
      end
    end
  end
  return shown
end

local function clients(bufnr)
  return vim.lsp.get_clients({ name = "rag_lsp", bufnr = bufnr })
end

-- The report of :checkhealth rag_lsp called from the current buffer, then back.
local function checkhealth()
  local from = vim.api.nvim_get_current_buf()
  vim.cmd("checkhealth rag_lsp")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd("tabclose")
  vim.api.nvim_set_current_buf(from)
  return lines
end

local function main()
  local plugin = assert(os.getenv("RAG_LSP_NVIM_PLUGIN"), "RAG_LSP_NVIM_PLUGIN")
  local workspace = assert(os.getenv("RAG_LSP_E2E_WORKSPACE"), "RAG_LSP_E2E_WORKSPACE")
  vim.notify = function(message, level)
    table.insert(dump.notifications, { message = message, level = level })
  end

  -- What a user's config holds.
  vim.opt.runtimepath:prepend(plugin)
  vim.cmd("filetype on")
  vim.lsp.enable("rag_lsp")

  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/broken.suite.yaml"))
  local suite = vim.api.nvim_get_current_buf()
  vim.wait(20000, function()
    local client = clients(suite)[1]
    return client ~= nil and client.initialized
  end, 50)
  local client = assert(clients(suite)[1], "no rag_lsp client attached to the suite")
  dump.diagnostics = { suite = settled_diagnostics(suite, 30000, 1000) }
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/broken.jsonl"))
  local dataset = vim.api.nvim_get_current_buf()
  dump.diagnostics.dataset = settled_diagnostics(dataset, 30000, 1000)

  local config = vim.lsp.config.rag_lsp
  dump.config = {
    cmd = config.cmd,
    filetypes = config.filetypes,
    settings = config.settings,
    init_options = config.init_options,
    root_dir = type(config.root_dir),
  }
  dump.client = {
    root_dir = client.config.root_dir,
    settings = vim.deepcopy(client.settings),
    attached = { suite = #clients(suite), dataset = #clients(dataset) },
  }
  table.insert(dump.steps, "diagnostics")

  -- Lenses are shown, and :RagRunCase runs the case under the cursor: its RAG400
  -- arrives when the server asks Neovim to pull diagnostics again.
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/gateway.jsonl"))
  local gateway = vim.api.nvim_get_current_buf()
  vim.wait(20000, function()
    return (displayed_lenses(gateway)["0"] or ""):find("Run case") ~= nil
  end, 50)
  dump.lenses = displayed_lenses(gateway)
  dump.commands = { RagRunCase = vim.fn.exists(":RagRunCase"), RagTrust = vim.fn.exists(":RagTrust") }
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  if dump.commands.RagRunCase == 2 then
    vim.cmd("RagRunCase")
    vim.wait(60000, function()
      for _, d in ipairs(diagnostics(gateway)) do
        if d.code == "RAG400" then
          return true
        end
      end
      return false
    end, 50)
  end
  dump.after_run = diagnostics(gateway)
  table.insert(dump.steps, "run_case")

  vim.api.nvim_set_current_buf(suite)
  dump.health = checkhealth()
  vim.cmd("RagTrust")
  dump.trusted_settings = vim.deepcopy(client.settings)
  dump.health_trusted = checkhealth()
  table.insert(dump.steps, "health")
end

-- Beside this script: run main, write the dump, stop the servers and quit.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
dofile(here .. "/harness.lua")(main, dump)
