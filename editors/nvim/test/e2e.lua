-- End-to-end run of the rag_lsp plugin in a headless Neovim against the real
-- server. Driven by tests/test_editors_nvim.py:
--
--   nvim --headless -u NONE -i NONE -c "luafile editors/nvim/test/e2e.lua"
--
-- Environment: RAG_LSP_NVIM_PLUGIN (editors/nvim), RAG_LSP_E2E_WORKSPACE (a copy
-- of examples/ with the broken files of examples-caught/), RAG_LSP_E2E_CMD (the
-- server command, a JSON list) and RAG_LSP_E2E_OUT (where the JSON dump goes).
-- Every step records what Neovim showed; the Python side asserts on it.

local dump = { notifications = {}, messages = {}, steps = {} }

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

local function diagnostics(bufnr)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(list, {
      code = d.code or lsp.code,
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = d.severity,
      source = d.source,
      message = d.message,
    })
  end
  table.sort(list, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return list
end

-- Waits until `bufnr` has diagnostics and they stop changing for `quiet_ms`.
local function settled_diagnostics(bufnr, timeout_ms, quiet_ms)
  local last, since = nil, vim.loop.now()
  vim.wait(timeout_ms, function()
    local now = vim.fn.json_encode(diagnostics(bufnr))
    if now ~= last then
      last, since = now, vim.loop.now()
    end
    return #vim.diagnostic.get(bufnr) > 0 and vim.loop.now() - since >= quiet_ms
  end, 50)
  return diagnostics(bufnr)
end

local function client_info(client)
  local settings = client.settings or client.config.settings
  return {
    id = client.id,
    name = client.name,
    root_dir = client.config.root_dir,
    cmd = client.config.cmd,
    settings = vim.deepcopy(settings),
    initialized = client.initialized,
  }
end

local function main()
  local plugin = assert(os.getenv("RAG_LSP_NVIM_PLUGIN"), "RAG_LSP_NVIM_PLUGIN")
  local workspace = assert(os.getenv("RAG_LSP_E2E_WORKSPACE"), "RAG_LSP_E2E_WORKSPACE")
  local cmd = vim.fn.json_decode((assert(os.getenv("RAG_LSP_E2E_CMD"), "RAG_LSP_E2E_CMD")))

  vim.opt.runtimepath:prepend(plugin)
  vim.cmd("filetype on")
  vim.o.hidden = true
  vim.notify = function(message, level)
    table.insert(dump.notifications, { message = message, level = level })
  end
  vim.lsp.handlers["window/showMessage"] = function(_, result)
    table.insert(dump.messages, result)
  end

  local version = vim.version()
  dump.nvim = string.format("%d.%d.%d", version.major, version.minor, version.patch)
  dump.api = has("0.11") and "vim.lsp.enable" or "vim.lsp.start_client"

  local rag = require("rag_lsp")
  rag.setup({
    cmd = cmd,
    -- Settings the server must accept without a warning.
    settings = { severity = { RAG203 = "off" }, runTimeout = 30, maxLineBytes = 1048576 },
    trusted = false,
  })
  dump.commands = {
    RagRunCase = vim.fn.exists(":RagRunCase"),
    RagRunSuite = vim.fn.exists(":RagRunSuite"),
    RagTrust = vim.fn.exists(":RagTrust"),
  }

  -- Each file is opened in the window, as a user would (Neovim 0.11 pulls the
  -- diagnostics of visible buffers), and its diagnostics awaited.
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/broken.suite.yaml"))
  local suite = vim.api.nvim_get_current_buf()
  vim.wait(20000, function()
    local client = rag.get_clients(suite)[1]
    return client ~= nil and client.initialized
  end, 50)
  local client = rag.get_clients(suite)[1]
  assert(client, "no rag_lsp client attached to the suite")
  dump.diagnostics = { suite = settled_diagnostics(suite, 30000, 1000) }

  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/broken.jsonl"))
  local dataset = vim.api.nvim_get_current_buf()
  dump.diagnostics.dataset = settled_diagnostics(dataset, 30000, 1000)

  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/docs/approvals.md"))
  local other = vim.api.nvim_get_current_buf()
  dump.filetypes = { suite = vim.bo[suite].filetype, dataset = vim.bo[dataset].filetype, other = vim.bo[other].filetype }
  dump.attached = {
    suite = #rag.get_clients(suite),
    dataset = #rag.get_clients(dataset),
    other = #rag.get_clients(other),
  }
  dump.clients = {}
  for _, each in ipairs(rag.get_clients()) do
    table.insert(dump.clients, client_info(each))
  end
  local capabilities = client.server_capabilities or {}
  dump.server = {
    codeLens = capabilities.codeLensProvider ~= nil,
    codeAction = capabilities.codeActionProvider ~= nil,
    pullDiagnostics = capabilities.diagnosticProvider ~= nil,
    executeCommands = capabilities.executeCommandProvider and capabilities.executeCommandProvider.commands or {},
  }
  table.insert(dump.steps, "diagnostics")

  -- The code lenses of the gateway dataset: three suites read it, so each case has
  -- a "Run case" lens per suite. Listed (and resolved) as the plugin fetches them.
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/gateway.jsonl"))
  local gateway = vim.api.nvim_get_current_buf()
  vim.wait(20000, function()
    return #rag.get_clients(gateway) > 0
  end, 50)
  local function list_lenses(bufnr)
    local found
    rag.fetch_lenses(client, bufnr, nil, function(err, result)
      found = { err = err, lenses = result or {} }
    end)
    vim.wait(20000, function()
      return found ~= nil
    end, 50)
    local listed = {}
    for _, lens in ipairs(found and found.lenses or {}) do
      table.insert(listed, {
        line = lens.range.start.line,
        title = lens.command and lens.command.title,
        command = lens.command and lens.command.command,
        arguments = lens.command and lens.command.arguments,
      })
    end
    table.sort(listed, function(a, b)
      return a.line < b.line or (a.line == b.line and (a.title or "") < (b.title or ""))
    end)
    return listed
  end
  dump.lenses = list_lenses(gateway)
  table.insert(dump.steps, "lenses")

  -- "Run case" on the first case (its first lens: the recorded suite), as
  -- :RagRunCase does, then its RAG400 read back from the diagnostics.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local finished
  rag.run_case({
    on_done = function(err, result, lens)
      finished = { err = err, result = result, lens = lens }
    end,
  })
  vim.wait(60000, function()
    return finished ~= nil
  end, 50)
  dump.run_case = finished and { err = finished.err, lens = finished.lens, result = finished.result } or "timeout"
  vim.wait(30000, function()
    for _, d in ipairs(diagnostics(gateway)) do
      if d.code == "RAG400" then
        return true
      end
    end
    return false
  end, 50)
  dump.after_run = diagnostics(gateway)
  dump.lenses_after_run = list_lenses(gateway)
  table.insert(dump.steps, "run_case")

  -- A quick fix: RAG206 in broken.jsonl ("./src/gateway.ts"), asked for with its
  -- diagnostic and applied as Neovim applies a code action's workspace edit.
  vim.api.nvim_set_current_buf(dataset)
  -- The LSP diagnostic back from Neovim's (0.7 keeps only its extra fields in
  -- user_data.lsp; later versions the whole diagnostic). ASCII line: byte
  -- columns are UTF-16 columns.
  local function to_lsp(d)
    local lsp = d.user_data and d.user_data.lsp or {}
    if lsp.range and lsp.message then
      return lsp
    end
    return {
      range = {
        start = { line = d.lnum, character = d.col },
        ["end"] = { line = d.end_lnum, character = d.end_col },
      },
      severity = d.severity,
      message = d.message,
      source = d.source,
      code = lsp.code or d.code,
      data = lsp.data,
      relatedInformation = lsp.relatedInformation,
    }
  end
  local target
  for _, d in ipairs(vim.diagnostic.get(dataset)) do
    local lsp = to_lsp(d)
    if lsp.code == "RAG206" then
      target = lsp
    end
  end
  assert(target, "no RAG206 in broken.jsonl")
  local actions
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(dataset),
    range = target.range,
    context = { diagnostics = { target }, only = { "quickfix" } },
  }
  local function got(err, result)
    actions = { err = err, result = result or {} }
  end
  if has("0.11") then
    client:request("textDocument/codeAction", params, got, dataset)
  else
    client.request("textDocument/codeAction", params, got, dataset)
  end
  vim.wait(20000, function()
    return actions ~= nil
  end, 50)
  local action = actions and actions.result[1]
  assert(action and action.edit, "no quick fix for RAG206: " .. vim.inspect(actions))
  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  local fixed_line = target.range.start.line
  dump.quick_fix = {
    title = action.title,
    kind = action.kind,
    line = vim.api.nvim_buf_get_lines(dataset, fixed_line, fixed_line + 1, false)[1],
    lnum = fixed_line,
  }
  vim.wait(30000, function()
    for _, d in ipairs(diagnostics(dataset)) do
      if d.code == "RAG206" then
        return false
      end
    end
    return #vim.diagnostic.get(dataset) > 0
  end, 50)
  dump.after_fix = diagnostics(dataset)
  table.insert(dump.steps, "quick_fix")

  dump.notifications_before_trust = #dump.notifications
  vim.api.nvim_set_current_buf(suite)
  rag.trust()
  dump.trusted_settings = client_info(rag.get_clients(suite)[1]).settings
  vim.wait(2000, function()
    return false
  end, 50)
  table.insert(dump.steps, "trust")
end

-- Beside this script: run main, write the dump, stop the servers and quit.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
dofile(here .. "/harness.lua")(main, dump)
