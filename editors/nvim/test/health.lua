-- :checkhealth rag_lsp in a headless Neovim: opens the broken suite, and when
-- RAG_LSP_E2E_CLIENT is 1 waits for the client and records the broken dataset's
-- diagnostics, then records the report called from the suite. The plugin starts
-- with require("rag_lsp").setup(RAG_LSP_E2E_SETUP, JSON) when that is set, else
-- with vim.lsp.enable("rag_lsp"), after vim.lsp.config("rag_lsp",
-- RAG_LSP_E2E_CONFIG) when that is set. Driven by tests/test_editors_nvim.py,
-- with the environment of e2e.lua.

local dump = { notifications = {} }

local function main()
  vim.notify = function(message, level)
    table.insert(dump.notifications, { message = message, level = level })
  end
  vim.opt.runtimepath:prepend(assert(os.getenv("RAG_LSP_NVIM_PLUGIN"), "RAG_LSP_NVIM_PLUGIN"))
  vim.cmd("filetype on")
  local rag = require("rag_lsp")
  local options = os.getenv("RAG_LSP_E2E_SETUP")
  if options then
    rag.setup(vim.fn.json_decode(options))
  else
    local config = os.getenv("RAG_LSP_E2E_CONFIG")
    if config then
      vim.lsp.config("rag_lsp", vim.fn.json_decode(config))
    end
    vim.lsp.enable("rag_lsp")
  end
  local workspace = assert(os.getenv("RAG_LSP_E2E_WORKSPACE"), "RAG_LSP_E2E_WORKSPACE")
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/broken.suite.yaml"))
  local suite = vim.api.nvim_get_current_buf()
  if os.getenv("RAG_LSP_E2E_CLIENT") == "1" then
    vim.wait(20000, function()
      local client = rag.get_clients(suite)[1]
      return client ~= nil and client.initialized
    end, 50)
    local client = assert(rag.get_clients(suite)[1], "no rag_lsp client attached to the suite")
    dump.settings = vim.deepcopy(client.settings or client.config.settings)
    -- The dataset's diagnostics, once they stop changing for a second.
    vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/.punica/evals/broken.jsonl"))
    local dataset = vim.api.nvim_get_current_buf()
    local last, since = nil, vim.loop.now()
    vim.wait(30000, function()
      local now = vim.fn.json_encode(vim.diagnostic.get(dataset))
      if now ~= last then
        last, since = now, vim.loop.now()
      end
      return #vim.diagnostic.get(dataset) > 0 and vim.loop.now() - since >= 1000
    end, 50)
    dump.dataset = {}
    for _, d in ipairs(vim.diagnostic.get(dataset)) do
      local lsp = d.user_data and d.user_data.lsp or {}
      table.insert(dump.dataset, { code = d.code or lsp.code, lnum = d.lnum, col = d.col })
    end
    vim.api.nvim_set_current_buf(suite)
  else
    -- No server: the plugin says so (vim.lsp.enable itself stays silent).
    vim.wait(10000, function()
      return #dump.notifications > 0
    end, 50)
  end
  dump.clients = #rag.get_clients()
  vim.cmd("checkhealth rag_lsp")
  dump.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

-- Beside this script: run main, write the dump, stop the servers and quit.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
dofile(here .. "/harness.lua")(main, dump)
