-- The end of every end-to-end script: run its main function, then, whatever
-- happened, write the JSON dump to RAG_LSP_E2E_OUT, stop the rag-lsp clients and
-- quit (exit 1 when main raised; the error is in the dump).
return function(main, dump)
  local ok, err = xpcall(main, debug.traceback)
  if not ok then
    dump.error = err
  end
  pcall(function()
    local file = assert(io.open(assert(os.getenv("RAG_LSP_E2E_OUT"), "RAG_LSP_E2E_OUT"), "w"))
    file:write(vim.fn.json_encode(dump))
    file:close()
  end)
  pcall(function()
    local rag = require("rag_lsp")
    for _, client in ipairs(rag.get_clients()) do
      vim.lsp.stop_client(client.id)
    end
    vim.wait(3000, function()
      return #rag.get_clients() == 0
    end, 50)
  end)
  vim.cmd(ok and "qa!" or "cquit 1")
end
