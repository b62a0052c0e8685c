"""The running room: cases and suites run from the editor, and their results.

The run manager (:mod:`.runs`) is what the message loop knows of runs; the
commands (:mod:`.run_commands`) type what is asked, the run thread
(:mod:`.run_worker`) runs it off the loop, and the marks (:mod:`.run_marks`)
keep the results moving with edits. Code lenses (:mod:`.lenses`) and the run
actions (:mod:`.run_actions`) offer the runs. It stands on
:mod:`rag_lsp.server.base` and never imports the checking room: what it uses of
the diagnostics session is declared in :mod:`.roles`.
"""
