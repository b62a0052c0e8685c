"""The server's ground floor, under both of its rooms.

What checking (:mod:`rag_lsp.server.checking`) and running
(:mod:`rag_lsp.server.running`) both stand on: the editor's URIs as paths
(:mod:`.uris`), conversion between the core's findings and positions and the
protocol's (:mod:`.convert`), a file's diagnostics as the two rooms hand them
over (:mod:`.diagnostics`), documents kept as lines (:mod:`.document`), the
protocol and the transport (:mod:`.protocol`, :mod:`.transport`), and the editor
as a client (:mod:`.client`). Nothing here imports either room.
"""
