-- :checkhealth rag_lsp in a headless Neovim: opens the broken suite, waits for
-- the client when RAG_LSP_E2E_CLIENT is 1, and records the report. The plugin
-- starts with require("rag_lsp").setup(RAG_LSP_E2E_SETUP, JSON) when that is
-- set, else with vim.lsp.enable("rag_lsp") alone. Driven by
-- tests/test_editors_nvim.py, with the environment of e2e.lua.

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
