"""Every rule's code, with the severity its findings have unless settings say otherwise.

The rules (:mod:`rag_lsp.core.rules`) make the findings, each in its own module;
loading them loads what they read (contexts, the workspace, its settings). This
table is what a module below them knows of them without loading them: the
settings file's reader (:mod:`rag_lsp.core.config`) checks the codes a file
names against it, and reports the file's own problems as RAG001, RAG003, RAG004
and RAG005. The registry refuses to load when a rule's code or severity is not
the table's, or a code of the table has no rule, so the two never disagree.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Iterable, Mapping

from .findings import Finding, Related, Severity
from .text import Range

SEVERITIES: Mapping[str, Severity] = MappingProxyType({
    "RAG001": Severity.ERROR,  # yaml-syntax
    "RAG002": Severity.ERROR,  # json-syntax
    "RAG003": Severity.ERROR,  # duplicate-key
    "RAG004": Severity.ERROR,  # schema
    "RAG005": Severity.ERROR,  # unsafe-input
    "RAG100": Severity.ERROR,  # unknown-engine
    "RAG101": Severity.ERROR,  # unknown-metric
    "RAG102": Severity.WARNING,  # threshold-on-counter
    "RAG103": Severity.WARNING,  # semantic-mode-unchecked
    "RAG104": Severity.ERROR,  # threshold-out-of-range
    "RAG105": Severity.ERROR,  # dataset-missing
    "RAG106": Severity.ERROR,  # dataset-outside-workspace
    "RAG107": Severity.ERROR,  # duplicate-suite-id
    "RAG108": Severity.ERROR,  # invalid-config
    "RAG109": Severity.ERROR,  # match-not-returned
    "RAG110": Severity.ERROR,  # dataset-shape-mismatch
    "RAG111": Severity.ERROR,  # unknown-target
    "RAG200": Severity.ERROR,  # nothing-relevant
    "RAG201": Severity.ERROR,  # no-relevant
    "RAG202": Severity.ERROR,  # duplicate-case-id
    "RAG203": Severity.WARNING,  # missing-expected-path
    "RAG204": Severity.WARNING,  # corpus-not-searched
    "RAG205": Severity.WARNING,  # repeated-expected-value
    "RAG206": Severity.WARNING,  # unnormalized-path
    "RAG207": Severity.HINT,  # k-above-top-k
    "RAG208": Severity.ERROR,  # no-reference-contexts
    "RAG300": Severity.ERROR,  # manifest-schema
    "RAG301": Severity.ERROR,  # invalid-config-schema
    "RAG302": Severity.ERROR,  # invalid-default
    "RAG303": Severity.ERROR,  # duplicate-manifest-name
    "RAG400": Severity.INFORMATION,  # case-result
    "RAG401": Severity.ERROR,  # broken-case
    "RAG402": Severity.WARNING,  # keyword-fallback
    "RAG403": Severity.ERROR,  # threshold-failed
    "RAG404": Severity.HINT,  # threshold-met
    "RAG405": Severity.ERROR,  # target-failed
})


def rule_finding(code: str, range: Range, message: str, related: Iterable[Related] = ()) -> Finding:
    """A finding of the rule ``code``, with the rule's severity (as the rule's
    own ``Rule.finding`` makes it)."""
    return Finding(code, SEVERITIES[code], range, message, related=tuple(related))
