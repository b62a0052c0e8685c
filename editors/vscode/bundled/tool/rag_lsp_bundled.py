"""Starts the rag-lsp bundled with the VS Code extension, with the Python that runs this file.

The platform-specific build of the extension (scripts/bundle.sh) installs rag-lsp
and its dependencies into ../libs for one Python version (``../libs/rag_lsp_bundle.json``
names it). ``python rag_lsp_bundled.py serve`` runs ``rag-lsp serve`` from there;
``--check`` only says whether this interpreter can: exit 0 with its version on
stdout, or 1 and why on stderr.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")


def problem() -> str | None:
    """Why this interpreter cannot run the bundled copy, or None."""
    try:
        with open(os.path.join(LIBS, "rag_lsp_bundle.json"), encoding="utf-8") as file:
            bundle = json.load(file)
    except (OSError, ValueError) as error:
        return f"the bundle is incomplete ({error})"
    wanted = str(bundle.get("python", ""))
    running = "%d.%d" % sys.version_info[:2]
    if wanted != running:
        return f"is Python {running}; the bundled rag-lsp is built for Python {wanted}"
    try:
        import rag_lsp.server.server  # noqa: F401  (imports the server and every compiled dependency)
    except Exception as error:  # a missing or incompatible dependency, said in one line
        return f"cannot import the bundled rag-lsp ({type(error).__name__}: {error})"
    return None


def main() -> None:
    sys.path.insert(0, LIBS)
    if sys.argv[1:] == ["--check"]:
        reason = problem()
        if reason:
            print(reason, file=sys.stderr)
            sys.exit(1)
        print("%d.%d.%d" % sys.version_info[:3])
        return
    runpy.run_module("rag_lsp", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
