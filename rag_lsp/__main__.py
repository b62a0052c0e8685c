"""`python -m rag_lsp`: the `rag-lsp` command line."""

from .cli import entry

entry()
