"""``python -m rag_lsp.core.search.bytepairs TOKENIZER_JSON...``: the tables
file of each tokenizer file named, written beside it (see writing)."""

from __future__ import annotations

import sys
from pathlib import Path

from .reading import Unsupported
from .writing import write_tables


def main(arguments: list[str]) -> int:
    """Write the tables of each tokenizer file; 2 when one cannot be read or used."""
    if not arguments:
        print("usage: python -m rag_lsp.core.search.bytepairs TOKENIZER_JSON...", file=sys.stderr)
        return 2
    for argument in arguments:
        try:
            print(f"wrote {write_tables(Path(argument))}")
        except (OSError, ValueError, Unsupported) as error:
            print(f"{argument}: {error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
