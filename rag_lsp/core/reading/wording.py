"""How numbers are written for people.

Counts and sizes are written with thousands separators (``3,000 cases``) in every
text a person reads: reports, messages, hovers, lens titles, progress. Two
figures side by side then never read differently. JSON, SARIF and JUnit keep
plain numbers. Line numbers, ranks and values a person wrote (``k: 10``) are
positions and settings, not counts: they are printed as they are.
"""

from __future__ import annotations


def count(number: object) -> str:
    """``3,000``; anything but an integer as it is (a schema may hold ``2.5`` or
    ``"3"`` where a count belongs: RAG301 reports it, and this still writes it)."""
    return f"{number:,}" if isinstance(number, int) and not isinstance(number, bool) else str(number)


def counted(number: object, noun: str, plural: str | None = None) -> str:
    """``1 case``, ``3,000 cases`` (``plural`` when adding an s does not do)."""
    return f"{count(number)} {noun if number == 1 else plural or noun + 's'}"
