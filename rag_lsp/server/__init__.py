"""The language server shell: pygls and lsprotocol live here, never in the core.

``create_server()`` builds a server; ``rag-lsp serve`` starts one over stdio or TCP.
"""

from __future__ import annotations

from .server import RagLanguageServer, create_server

__all__ = ["RagLanguageServer", "create_server"]
