"""What a ``model`` option of the builtin target may name, told from the files
alone: what ``rag-lsp check`` looks at without loading anything (no numpy, no
tokenizer), so checking stays as quick as it was."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

WORDLLAMA = "wordllama"
MODEL2VEC_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def model2vec_problem(folder: Path) -> str | None:
    """Why ``folder`` does not hold a model2vec static model, by its files; None
    when it has them (whether they load is found out by a run)."""
    # os.path answers False for a name the file system refuses (too long), where pathlib raises.
    if not os.path.exists(folder):
        return "there is no such folder"
    if not os.path.isdir(folder):
        return "it is a file, not a folder"
    missing = [name for name in MODEL2VEC_FILES if not os.path.isfile(folder / name)]
    if missing:
        return f"it has no {', '.join(missing)}"
    return None


def files_outside(folder: Path, inside: Callable[[Path], bool]) -> list[str]:
    """The model files of ``folder`` that are not in the workspace by ``inside``
    (its test, links resolved): links out of it, which the builtin target never
    reads, as it reads no other file outside."""
    return [name for name in MODEL2VEC_FILES if not inside(folder / name)]
