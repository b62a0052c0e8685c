"""``python -m rag_lsp.core.search.bytepairs TOKENIZER_JSON...``: the tables
file of each tokenizer file named, written beside it (see writing)."""

from __future__ import annotations

import sys
from pathlib import Path

from .writing import write_tables

if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(f"wrote {write_tables(Path(argument))}")
