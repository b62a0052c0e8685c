"""Code actions that run from the cursor.

"Run this case" on a dataset line (``source.ragLsp.runCase``), "Run suite …"
in a suite file or a dataset (``source.ragLsp.runSuite``), both under
``source``; each is the command its code lens runs
(:mod:`.lenses`). The quick fixes and the index's top hit are the checking
side's (:mod:`rag_lsp.server.checking.actions`); the server answers both
together.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from ...core.reading.wording import counted
from ..base.client import asks_for
from ..base.uris import path_of
from .lenses import CASE_LENS, DocumentSuites, SuiteEntry, document_suites
from .run_commands import RUN_CASE, RUN_SUITE, RunCaseArguments, RunSuiteArguments

if TYPE_CHECKING:
    from .roles import Checks, Workspaces

log = logging.getLogger(__name__)

RUN_CASE_KIND = "source.ragLsp.runCase"
RUN_SUITE_KIND = "source.ragLsp.runSuite"
KINDS = [types.CodeActionKind.Source, RUN_CASE_KIND, RUN_SUITE_KIND]


class RunActions:
    def __init__(self, session: Checks) -> None:
        self.session = session

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        path = path_of(params.text_document.uri)
        if path is None:
            return None
        only = params.context.only
        if not (asks_for(only, RUN_CASE_KIND) or asks_for(only, RUN_SUITE_KIND)):
            return []
        session = self.session
        folders, settings = session.folders(), session.settings

        def job(checker: Workspaces) -> DocumentSuites | None:
            return document_suites(checker, path, folders, settings)

        try:
            found = await session.on_worker(job)
        except Exception:
            log.exception("run actions for %s failed", params.text_document.uri)
            return []
        if found is None:
            return []
        uri = params.text_document.uri
        line = params.range.start.line
        several = len(found.suites) > 1
        actions = []
        if found.kind == CASE_LENS:
            if asks_for(only, RUN_CASE_KIND) and line in set(found.lines):
                for suite in found.suites:
                    title = f"Run this case in {suite.id}" if several else "Run this case"
                    command = types.Command(title=title, command=RUN_CASE, arguments=[RunCaseArguments(uri, line, suite.id)])
                    actions.append(types.CodeAction(title=title, kind=RUN_CASE_KIND, command=command))
            if asks_for(only, RUN_SUITE_KIND):
                for suite in found.suites:
                    actions.append(self._suite_action(uri, None, suite))
        elif asks_for(only, RUN_SUITE_KIND):
            above = [suite for suite in found.suites if suite.line <= line] or list(found.suites[:1])
            actions.append(self._suite_action(uri, above[-1].line, above[-1]))
        return actions

    @staticmethod
    def _suite_action(uri: str, line: int | None, suite: SuiteEntry) -> types.CodeAction:
        cases = f" ({counted(suite.cases, 'case')})" if suite.cases is not None else ""
        title = f"Run suite {suite.id}{cases}" if suite.id else f"Run suite{cases}"
        command = types.Command(title=title, command=RUN_SUITE, arguments=[RunSuiteArguments(uri, line, suite.id)])
        return types.CodeAction(title=title, kind=RUN_SUITE_KIND, command=command)
