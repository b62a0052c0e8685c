-- The code lens and run half of the rag_lsp plugin, in a headless Neovim against
-- a server that offers lenses and run commands (editors/test/lens_server.py until the
-- real server has them). Driven by tests/test_editors_nvim.py, with the same
-- environment as e2e.lua. Records what Neovim displayed and ran, as JSON.

local dump = { notifications = {}, steps = {} }

local function diagnostics(bufnr)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(list, { code = d.code or lsp.code, lnum = d.lnum, message = d.message })
  end
  return list
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

local function wait_for(timeout_ms, predicate)
  return vim.wait(timeout_ms, predicate, 50)
end

local function run(fn, opts)
  local finished
  opts = opts or {}
  opts.on_done = function(err, result, lens)
    finished = { err = err or vim.NIL, result = result or vim.NIL, lens = lens or vim.NIL }
  end
  fn(opts)
  wait_for(20000, function()
    return finished ~= nil
  end)
  return finished or "timeout"
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
  local version = vim.version()
  dump.nvim = string.format("%d.%d.%d", version.major, version.minor, version.patch)

  local rag = require("rag_lsp")
  rag.setup({ cmd = cmd })

  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/gateway.jsonl"))
  local dataset = vim.api.nvim_get_current_buf()
  wait_for(20000, function()
    local client = rag.get_clients(dataset)[1]
    return client ~= nil and client.initialized
  end)
  -- Lenses are displayed (and resolved) without any user action.
  wait_for(20000, function()
    return (displayed_lenses(dataset)["1"] or ""):find("Run case") ~= nil
  end)
  dump.lenses_before = displayed_lenses(dataset)
  table.insert(dump.steps, "lenses")

  -- :RagRunCase on the second case runs that case's lens.
  vim.api.nvim_win_set_cursor(0, { 2, 5 })
  dump.run_case = run(rag.run_case)
  wait_for(20000, function()
    for _, d in ipairs(diagnostics(dataset)) do
      if d.code == "RAG400" then
        return true
      end
    end
    return false
  end)
  dump.diagnostics_after_run = diagnostics(dataset)
  -- The server asked for a lens refresh: the case's lens shows its figures.
  wait_for(20000, function()
    return (displayed_lenses(dataset)["1"] or ""):find("recall") ~= nil
  end)
  dump.lenses_after = displayed_lenses(dataset)
  table.insert(dump.steps, "run_case")

  -- The user command itself.
  vim.api.nvim_win_set_cursor(0, { 4, 0 })
  vim.cmd("RagRunCase")
  wait_for(20000, function()
    return (displayed_lenses(dataset)["3"] or ""):find("recall") ~= nil
  end)
  dump.lenses_after_command = displayed_lenses(dataset)

  -- :RagRunSuite from inside a suite runs the suite the cursor is in.
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/gateway.suite.yaml"))
  local suite = vim.api.nvim_get_current_buf()
  -- The first suite's `- id:` line (0-based), where its lens is.
  local suite_line
  for number, line in ipairs(vim.api.nvim_buf_get_lines(suite, 0, -1, false)) do
    if line:match("^%s*%-%s+id%s*:") then
      suite_line = number - 1
      break
    end
  end
  dump.suite_line = suite_line
  wait_for(20000, function()
    return (displayed_lenses(suite)[tostring(suite_line)] or ""):find("Run suite") ~= nil
  end)
  dump.suite_lenses = displayed_lenses(suite)
  vim.api.nvim_win_set_cursor(0, { suite_line + 6, 0 }) -- inside the first suite
  dump.run_suite = run(rag.run_suite)
  -- No case lens on a suite line: said, nothing run.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  dump.run_case_without_lens = run(rag.run_case)
  table.insert(dump.steps, "run_suite")

  -- A large dataset: its lenses are resolved only around the lines shown, and
  -- :RagRunSuite runs the suites that read it without resolving any lens.
  local big_path = workspace .. "/.punica/evals/big.jsonl"
  local rows = {}
  for number = 1, 3000 do
    rows[number] = string.format('{"id": "c%d", "input": {"query": "q"}, "expect": {"relevant": ["src/gateway.ts"]}}', number)
  end
  vim.fn.writefile(rows, big_path)
  vim.cmd("edit " .. vim.fn.fnameescape(big_path))
  local big = vim.api.nvim_get_current_buf()
  wait_for(20000, function()
    return (displayed_lenses(big)["0"] or ""):find("Run case") ~= nil
  end)
  local function resolved_in_big()
    local count = 0
    for _, line in ipairs(vim.fn.readfile(os.getenv("RAG_LSP_STUB_LOG"))) do
      local entry = vim.fn.json_decode(line)
      if entry.resolved and entry.resolved:find("big.jsonl", 1, true) then
        count = count + 1
      end
    end
    return count
  end
  dump.big_resolved = resolved_in_big()
  vim.api.nvim_win_set_cursor(0, { 2500, 0 })
  dump.run_suite_in_dataset = run(rag.run_suite)
  dump.big_resolved_after_run = resolved_in_big()
  table.insert(dump.steps, "large_dataset")
end

-- Beside this script: run main, write the dump, stop the servers and quit.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
dofile(here .. "/harness.lua")(main, dump)
