"""`rag-lsp check` and `rag-lsp serve` start as quickly as before the builtin target
searched by meaning: neither loads the embedding model, its tokenizer or numpy
until a run needs them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lspclient import SERVER, diagnostics, open_file, scanned, server_pid, start
from pytest_lsp import LanguageClient

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# What loading the model brings in: the arrays, the tokenizer, the index.
HEAVY = ("numpy", "tokenizers", "bm25s", "rag_lsp.core.search.embedding", "rag_lsp.core.search.index")


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    return root


def test_check_loads_no_model(examples: Path) -> None:
    """`rag-lsp check` over examples/ (whose suites run on the semantic default) passes without importing
    numpy, the tokenizer or the index."""
    code = (
        "import json, sys; from rag_lsp.cli import main; "
        f"code = main(['check', {str(examples)!r}]); "
        f"print(json.dumps([code, sorted(m for m in {HEAVY!r} if m in sys.modules)]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []]


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.mark.slow  # starts a server process
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's memory map in /proc")
async def test_serve_start_loads_no_model(client: LanguageClient, examples: Path) -> None:
    """The server opens examples/, scans it and checks a suite without mapping numpy's or the
    tokenizer's compiled libraries: the model waits for a run."""
    await start(client, examples)
    await scanned(client)
    suite = examples / ".punica" / "evals" / "gateway.suite.yaml"
    await diagnostics(client, open_file(client, suite), 1)
    maps = Path(f"/proc/{server_pid()}/maps").read_text()
    assert "_multiarray_umath" not in maps and "tokenizers" not in maps
