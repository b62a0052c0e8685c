"""`python -m rag_lsp`: the `rag-lsp` command line."""

from .cli import entry

# Guarded: a process this one spawns (the tokenizer's, see
# core.search.embedding) imports the main module again and must not run it.
if __name__ == "__main__":
    entry()
