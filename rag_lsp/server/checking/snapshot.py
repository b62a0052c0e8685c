"""What one check pass of the checker looks at, and what it gives back.

The message loop captures a :class:`Snapshot` of the open documents (each an
:class:`OpenDocument`) and hands it to the checker's thread, which answers a
:class:`PassResult`: the diagnostics of each file checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...core.workspace.settings import EditorSettings
from ..base.diagnostics import FileDiagnostics
from ..base.document import Change


@dataclass(frozen=True)
class OpenDocument:
    uri: str
    version: int | None
    # The whole text; or None, and then ``lines`` holds it, or ``changes`` bring
    # the checker's copy of the document (a dataset model) up to this version.
    text: str | None
    changes: tuple[Change, ...] = ()
    # The whole text split at "\n" (a list the checker may keep), when the
    # document has it at hand; with no ``text``, for a dataset: not joined for it.
    lines: list[str] | None = None
    # The whole text's UTF-8 size, when the document knows it (see
    # LineDocument.whole_size).
    size: int | None = None

    @property
    def whole(self) -> bool:
        """Whether the document comes whole (not as changes)."""
        return self.text is not None or self.lines is not None

    def joined(self) -> str:
        """The whole text."""
        return self.text if self.text is not None else "\n".join(self.lines or ())


@dataclass(frozen=True)
class Snapshot:
    """What one check pass looks at, captured on the message loop."""

    generation: int
    documents: dict[Path, OpenDocument]
    folders: tuple[Path, ...]
    # What the editor set: each workspace's settings file lies below it.
    settings: EditorSettings
    encoding: str
    related_information: bool = True
    # Re-check every known workspace (start-up scan, new settings).
    full: bool = False
    # Files created, changed or deleted on disk (watched files) since the last pass.
    changed_files: tuple[Path, ...] = ()
    # Open documents whose last check was for a version superseded before it could
    # be published: checked again even when their text has not changed since.
    recheck: tuple[Path, ...] = ()


@dataclass
class PassResult:
    generation: int
    # Roots whose files were all re-checked: a file of such a root missing from
    # ``files`` has no findings any more.
    checked_roots: set[Path] = field(default_factory=set)
    files: dict[Path, FileDiagnostics] = field(default_factory=dict)
    # Open documents whose changes could not be applied: the session sends their
    # whole text in the next pass.
    resync: set[Path] = field(default_factory=set)
