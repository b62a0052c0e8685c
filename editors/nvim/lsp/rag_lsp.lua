-- rag-lsp for Neovim 0.11+: the configuration vim.lsp.enable("rag_lsp") starts
-- the server with, read from this folder on the runtimepath. Change it with
-- vim.lsp.config("rag_lsp", { ... }), e.g. its `cmd` or `settings.ragLsp`.
return require("rag_lsp").config()
