-- The workspace's settings file in a headless Neovim against the real server.
-- Workspace 1 (RAG_LSP_E2E_WORKSPACE) has .punica/rag-lsp.toml, a root
-- pyproject.toml without [tool.rag-lsp] and docs/pyproject.toml with one;
-- workspace 2 (RAG_LSP_E2E_WORKSPACE2) has its settings in the root
-- pyproject.toml. Records, for each file, its filetype, whether the plugin
-- gives it to the server, the clients attached and the diagnostics, as JSON.
-- Driven by tests/test_editors_nvim.py, with the environment of e2e.lua.

local dump = { notifications = {}, files = {} }

local function diagnostics(bufnr)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(list, { code = d.code or lsp.code, lnum = d.lnum, col = d.col, source = d.source })
  end
  return list
end

-- Waits until `bufnr` has diagnostics and they stop changing for a second.
local function settled_diagnostics(bufnr)
  local last, since = nil, vim.loop.now()
  vim.wait(30000, function()
    local now = vim.fn.json_encode(diagnostics(bufnr))
    if now ~= last then
      last, since = now, vim.loop.now()
    end
    return #vim.diagnostic.get(bufnr) > 0 and vim.loop.now() - since >= 1000
  end, 50)
  return diagnostics(bufnr)
end

local function main()
  vim.notify = function(message, level)
    table.insert(dump.notifications, { message = message, level = level })
  end
  vim.opt.runtimepath:prepend(assert(os.getenv("RAG_LSP_NVIM_PLUGIN"), "RAG_LSP_NVIM_PLUGIN"))
  vim.cmd("filetype on")
  vim.o.hidden = true
  local rag = require("rag_lsp")
  rag.setup({ cmd = vim.fn.json_decode((assert(os.getenv("RAG_LSP_E2E_CMD"), "RAG_LSP_E2E_CMD"))) })
  local first = assert(os.getenv("RAG_LSP_E2E_WORKSPACE"), "RAG_LSP_E2E_WORKSPACE")
  local second = assert(os.getenv("RAG_LSP_E2E_WORKSPACE2"), "RAG_LSP_E2E_WORKSPACE2")

  local function open(path)
    vim.cmd("edit " .. vim.fn.fnameescape(path))
    return vim.api.nvim_get_current_buf()
  end
  -- Files the server must not get are opened first, so they have had every
  -- chance to be attached by the time the others show their diagnostics.
  local others = { ["1:pyproject.toml"] = open(first .. "/pyproject.toml"), ["1:docs/pyproject.toml"] = open(first .. "/docs/pyproject.toml") }
  local checked = { ["1:.punica/rag-lsp.toml"] = open(first .. "/.punica/rag-lsp.toml") }
  dump.files["1:.punica/rag-lsp.toml"] = { diagnostics = settled_diagnostics(checked["1:.punica/rag-lsp.toml"]) }
  checked["2:pyproject.toml"] = open(second .. "/pyproject.toml")
  dump.files["2:pyproject.toml"] = { diagnostics = settled_diagnostics(checked["2:pyproject.toml"]) }
  for key, bufnr in pairs(vim.tbl_extend("error", others, checked)) do
    dump.files[key] = dump.files[key] or {}
    dump.files[key].filetype = vim.bo[bufnr].filetype
    dump.files[key].should_attach = rag.should_attach(bufnr)
    dump.files[key].attached = #rag.get_clients(bufnr)
  end
  dump.clients = {}
  for _, client in ipairs(rag.get_clients()) do
    table.insert(dump.clients, client.config.root_dir)
  end
end

-- Beside this script: run main, write the dump, stop the servers and quit.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
dofile(here .. "/harness.lua")(main, dump)
