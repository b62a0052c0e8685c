"""The editor-agnostic core: parsing with positions, schemas, manifests, workspace
facts, the rules, the scorer, the targets and the runner. It imports neither the
shells (``rag_lsp.cli``, ``rag_lsp.server``) nor pygls and lsprotocol."""
