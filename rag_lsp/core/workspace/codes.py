"""Every rule's code, known without loading the rules.

The rules (:mod:`rag_lsp.core.checking.rules`) make the findings, each in its own module
``ragNNN_name.py``; loading them loads what they read (contexts, the workspace,
its settings). What a module below them needs of them is known from their file
names alone: the settings file's reader (:mod:`rag_lsp.core.workspace.config`) checks the
codes a file names against :func:`known_codes`, and reports the file's own
problems (RAG001, RAG003, RAG004, RAG005) with :func:`rule_finding`. The registry
refuses to load a rule whose code is not its file's, so a new rule is its file
alone.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from ..reading.findings import Finding, Related, Severity
from ..reading.text import Range

# A rule module's name: its code in lower case, then its name.
RULE_MODULE = re.compile(r"(rag\d{3})_\w+")

# The settings file's own problems (its syntax, a repeated key, its schema, an
# unsafe input): errors, as those rules are (the registry checks it).
OWN_PROBLEMS = {"RAG001": Severity.ERROR, "RAG003": Severity.ERROR, "RAG004": Severity.ERROR, "RAG005": Severity.ERROR}


def code_of_module(name: str) -> str | None:
    """The code of the rule module named ``name`` (``rag202_duplicate_case_id``:
    RAG202), None for a module of the package that holds no rule."""
    match = RULE_MODULE.fullmatch(name)
    return match.group(1).upper() if match else None


@lru_cache(maxsize=1)
def known_codes() -> frozenset[str]:
    """The code of every rule, from the names of the rule modules."""
    folder = Path(__file__).resolve().parent.parent / "checking" / "rules"
    return frozenset(code for path in folder.glob("rag*.py") if (code := code_of_module(path.stem)) is not None)


def rule_finding(code: str, range: Range, message: str, related: Iterable[Related] = ()) -> Finding:
    """A finding of the settings file's own problem ``code`` (see OWN_PROBLEMS),
    with the rule's severity (as the rule's own ``Rule.finding`` makes it)."""
    return Finding(code, OWN_PROBLEMS[code], range, message, related=tuple(related))
