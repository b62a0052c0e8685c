"""Compile the package's modules before measuring, as ``pip install`` does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def compile_package() -> None:
    """Compile rag_lsp's modules once, unmeasured. A process that finds no
    current bytecode for a module compiles it: after an editable install's
    sources change, or in every process when PYTHONDONTWRITEBYTECODE is set.
    That is no figure of rag-lsp's."""
    import rag_lsp

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(rag_lsp.__file__).parent)], check=True)
