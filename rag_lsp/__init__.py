"""rag-lsp: checks retrieval eval suites, datasets and metric manifests as you type and in CI."""

__version__ = "0.1.0"
