-- The rag_lsp plugin when the server cannot start: opens a dataset with the
-- setup() options in RAG_LSP_E2E_SETUP (JSON) and writes what it was told, and
-- whether a client started, to RAG_LSP_E2E_OUT. Driven by tests/test_editors_nvim.py.

local dump = { notifications = {} }
local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(assert(os.getenv("RAG_LSP_NVIM_PLUGIN")))
  vim.cmd("filetype on")
  vim.notify = function(message, level)
    table.insert(dump.notifications, { message = message, level = level })
  end
  local rag = require("rag_lsp")
  rag.setup(vim.fn.json_decode((assert(os.getenv("RAG_LSP_E2E_SETUP")))))
  vim.cmd("edit " .. vim.fn.fnameescape(assert(os.getenv("RAG_LSP_E2E_WORKSPACE")) .. "/.punica/evals/broken.jsonl"))
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("RAG_LSP_E2E_WORKSPACE") .. "/.punica/evals/broken.suite.yaml"))
  vim.wait(1000, function()
    return false
  end, 50)
  dump.clients = #rag.get_clients()
end)
if not ok then
  dump.error = err
end
local file = assert(io.open(assert(os.getenv("RAG_LSP_E2E_OUT")), "w"))
file:write(vim.fn.json_encode(dump))
file:close()
vim.cmd("qa!")
