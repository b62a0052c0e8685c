"""The one way into checking: every finding of a workspace file, whatever its size.

The command line and the language server both check through an
:class:`Analysis`; neither chooses how a file is read. The analysis picks it:

* a suite, manifest, settings file or small dataset is analysed in one go
  (:func:`~rag_lsp.core.checking.analyze.analyze_file`);
* a dataset of more than a batch of short lines (``MODELLED_FROM_BYTES``) is read
  by a :class:`~rag_lsp.core.checking.incremental.DatasetModel`, which counts a cause
  that most rows share instead of making a finding of each occurrence, and which
  an editor keeps to re-check only what an edit changed;
* a dataset of ``SHARED_FROM_BYTES`` or more, on a machine with a core to spare,
  has its first reading shared with a helper process (rag_lsp.core.checking.parallel).

The helper is the analysis's own: it is started ahead of need when a large
dataset is expected (:meth:`Analysis.expect_large`), stopped when none came
(:meth:`Analysis.idle`), and ended with the analysis (:meth:`Analysis.close`).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Iterable, Mapping

from .analyze import analyze_file, check_document
from ..reading.findings import Finding
from ..reading.jsondocument import head_may_be_document
from .incremental import MODELLED_FROM_BYTES, SHARED_FROM_BYTES, DatasetModel
from .parallel import Helper, reading_helper
from .screening import WorkspaceFiles
from ..workspace.workspace import DATASET_FILE, Workspace

# A dataset this large is read with the helper's share whenever one can start
# (its first reading is worth a second process). An editor's message this large
# most likely opens such a dataset: the server starts the helper when one is
# announced, before the message has even arrived.
LARGE_DATASET_BYTES = 2 << 20

__all__ = ["LARGE_DATASET_BYTES", "Analysis"]

# The default of Analysis(helper=...): a helper of the analysis's own.
_OWN = object()


class Analysis:
    """Checks workspace files, picking how each is read (see the module's docstring)."""

    def __init__(self, helper: Helper | None | object = _OWN) -> None:
        """``helper``: the helper process to share large readings with (started
        already or not), None for none; by default one of its own, made when a
        large dataset is first expected or read, on a machine with a core to spare."""
        self._helper = helper
        self._closed = False

    @property
    def helper(self) -> Helper | None:
        """The helper process (None: none, or no core to spare), made on first use."""
        if self._helper is _OWN:
            self._helper = None if self._closed else reading_helper()
        return self._helper  # type: ignore[return-value]

    def close(self) -> None:
        """End what the analysis started (its helper process), for good."""
        self._closed = True
        if self._helper is not _OWN and self._helper is not None:
            self._helper.close()  # type: ignore[union-attr]

    # -------------------------------------------------- the helper, ahead of need

    def expect_large(self) -> None:
        """A large dataset is most likely about to be read: the helper starts now
        (an interpreter and the checks' modules, a fifth of a second), so that it
        is ready when the reading begins."""
        if self.helper is not None:
            self.helper.start_soon()

    def expect_large_in(self, paths: Iterable[Path]) -> None:
        """:meth:`expect_large` when checking ``paths`` (files or folders) may
        read a large dataset: a folder may hold one; a file named is one only
        when it is large."""
        for path in paths:
            try:
                if os.path.isdir(path) or os.path.getsize(path) >= SHARED_FROM_BYTES:
                    self.expect_large()
                    return
            except (OSError, ValueError):  # no such file: the check reports it
                continue

    def expect_large_among(self, workspace: Workspace, discovered: Mapping[str, str]) -> bool:
        """:meth:`expect_large` when one of ``discovered`` (a workspace's files
        by kind) is a dataset of ``LARGE_DATASET_BYTES`` or more; whether one is."""
        for relative, kind in discovered.items():
            if kind == DATASET_FILE and _dataset_size(workspace, relative) >= LARGE_DATASET_BYTES:
                self.expect_large()
                return True
        return False

    def idle(self) -> None:
        """No large dataset is being read: the helper, if started, stops without
        being waited for (a later large reading starts it again)."""
        if self._helper is not _OWN and self._helper is not None:
            self._helper.stop(wait=False)  # type: ignore[union-attr]

    # -------------------------------------------------- checking

    def check(self, files: Iterable[tuple[Workspace, str, str | None]]) -> list[list[Finding]]:
        """Every finding of each file of ``files`` (its workspace, its path relative
        to the workspace's root, and its kind), in the order given.

        Datasets read by a model are checked first, the large ones with the
        helper: each model then stands for its dataset in its workspace's facts
        (the row shape its suites are checked against), so the suites that read
        it do not read it again."""
        files = list(files)
        sizes = [_dataset_size(workspace, relative) if kind == DATASET_FILE else 0 for workspace, relative, kind in files]
        if not any(size >= SHARED_FROM_BYTES for size in sizes):
            self.idle()
        found: dict[int, list[Finding]] = {}
        for index, ((workspace, relative, _), size) in enumerate(zip(files, sizes)):
            if size >= MODELLED_FROM_BYTES:
                model = self._read_from_disk(workspace, relative, shared=size >= SHARED_FROM_BYTES)
                if model is not None:
                    found[index] = model.findings()
        return [found[index] if index in found else analyze_file(workspace, relative, kind) for index, (workspace, relative, kind) in enumerate(files)]

    def findings_in_one_go(self, workspace: Workspace, relative: str) -> list[Finding]:
        """Every finding of a file analysed in one go, with no model: a file an
        editor has no model of (a suite, a manifest, a dataset refused for its
        size or its bytes)."""
        return analyze_file(workspace, relative)

    def model(
        self,
        workspace: Workspace,
        relative: str,
        text: str | None,
        lines: list[str] | None = None,
        size: int | None = None,
        encoding: str | None = None,
    ) -> DatasetModel:
        """A model of a dataset an editor has (or the disk has, with ``text``, read
        in ``encoding`` where that is not UTF-8): checked whole now, the helper
        sharing the reading of a large one, then re-checked in proportion to
        each edit (see DatasetModel)."""
        return DatasetModel(workspace, relative, text, self.helper, lines, size=size, encoding=encoding)

    def _read_from_disk(self, workspace: Workspace, relative: str, shared: bool) -> DatasetModel | OneDocument | None:
        """A model of a dataset as it is on disk, holding every finding, which
        then stands for the dataset in the workspace's facts; a dataset written
        as one JSON document is stood for by its :class:`OneDocument`. None for
        a dataset a model does not read (refused for its size, or holding a byte
        that is not UTF-8, which the one-shot analysis reports on its line)."""
        if _begins_a_document(workspace, relative):
            # A JSON document, not JSON Lines, most likely: its many lines are
            # not split for a model that would read no row.
            source = workspace.read(relative)
            found = check_document(workspace, relative, source.text) if source is not None and not source.refused else None
            if found is not None:
                document = workspace.live_datasets[relative] = OneDocument(source.text, found)
                return document
        helper = self.helper if shared else None
        if helper is not None:
            # Made by the helper while this process reads the file and its first batch.
            helper.prepare(WorkspaceFiles.of(workspace))
        # Its lines, read without its whole text where they can be: a large
        # dataset's bytes and text would be tens of megabytes of new memory.
        read = workspace.read_lines(relative)
        if read is not None:
            lines, size = read
            model = DatasetModel(workspace, relative, None, helper, lines, every_finding=True, size=size)
        else:
            source = workspace.read(relative)
            if source is None or source.refused or source.undecodable:
                return None
            model = DatasetModel(workspace, relative, source.text, helper, every_finding=True, encoding=source.encoding)
        workspace.live_datasets[relative] = model
        return model


class OneDocument:
    """A dataset on disk that is one JSON document, not JSON Lines (see
    core.reading.jsondocument): what stands for it in its workspace's facts, as
    a model stands for a dataset of JSON Lines. It has no row, and the findings
    of its text as a whole (see check_document)."""

    shape = None

    def __init__(self, text: str, found: list[Finding]) -> None:
        self._text = text
        self._found = found

    def findings(self) -> list[Finding]:
        return self._found

    def top_ks_asked(self) -> tuple[Counter[int], int]:
        return Counter(), 0

    def corpora_asked(self) -> tuple[Counter[str], int]:
        return Counter(), 0

    def line_text(self, line: int) -> str:
        """Line ``line`` without its ending, found from the start of the text (a
        finding on the whole document is on its first lines; millions of lines
        are not split for it)."""
        start = 0
        for _ in range(line):
            start = self._text.find("\n", start) + 1
            if start == 0:
                return ""
        end = self._text.find("\n", start)
        text = self._text[start : end if end >= 0 else len(self._text)]
        return text[:-1] if text.endswith("\r") else text


def _begins_a_document(workspace: Workspace, relative: str) -> bool:
    """Whether a dataset on disk begins as a JSON document does (see
    core.reading.jsondocument), told from its first bytes."""
    try:
        with workspace.absolute(relative).open("rb") as file:
            start = file.read(_LOOKED_AT_FIRST)
    except (OSError, ValueError):
        return False
    return head_may_be_document(start.decode("utf-8", "replace").lstrip("\ufeff"))


# The bytes of a dataset's beginning looked at: its first line, unless it is longer.
_LOOKED_AT_FIRST = 1 << 16


def _dataset_size(workspace: Workspace, relative: str) -> int:
    """The size of a dataset on disk; 0 for one gone since it was listed (its check says so)."""
    try:
        return workspace.absolute(relative).stat().st_size
    except (OSError, ValueError):
        return 0
