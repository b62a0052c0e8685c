"""The checking room: documents checked as they are typed, and what helps write them.

The diagnostics session (:mod:`.session`) schedules passes of the checker
(:mod:`.checker`) on its worker thread, each handed a snapshot of the open
documents (:mod:`.snapshot`), and publishes their findings, converted for the
client once and kept while they hold (:mod:`.conversions`); the
editing features (:mod:`.features`: completion, hover, links, definitions,
symbols) and the code actions (:mod:`.actions`: quick fixes, the index's top
hit) answer from the same thread. It stands on :mod:`rag_lsp.server.base` and
never imports the running room: what it uses of the runs is declared in
:mod:`.roles`.
"""
