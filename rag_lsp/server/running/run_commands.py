"""The run commands: their names, their typed arguments and their handlers.

``ragLsp.runCase``, ``ragLsp.runSuite`` and ``ragLsp.clearResults`` come as
``workspace/executeCommand`` with one argument, an object structured into the
attrs classes below (a code lens's ``Command`` carries them); a missing or
malformed argument is answered with InvalidParams saying what is wrong. Each
handler turns them into a :class:`RunRequest` for the server's runs
(:mod:`.runs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from ..base.uris import path_of

RUN_CASE = "ragLsp.runCase"
RUN_SUITE = "ragLsp.runSuite"
CLEAR_RESULTS = "ragLsp.clearResults"
COMMANDS = (RUN_CASE, RUN_SUITE, CLEAR_RESULTS)

T = TypeVar("T")


def _file_uri(instance: object, attribute: attrs.Attribute, value: object) -> None:
    if value is not None and not (isinstance(value, str) and value.startswith("file:")):
        raise ValueError(f"`{attribute.name}` must be a file: URI, got {value!r}")


_line = attrs.validators.optional([attrs.validators.instance_of(int), attrs.validators.ge(0)])
_name = attrs.validators.optional(attrs.validators.instance_of(str))


@attrs.define
class RunCaseArguments:
    """``ragLsp.runCase``: the case on ``line`` (0-based) of the dataset ``uri``, in
    the suite named ``suite`` (default: every suite that reads the dataset)."""

    uri: str = attrs.field(validator=_file_uri)
    line: int = attrs.field(validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)])
    suite: str | None = attrs.field(default=None, validator=_name)


@attrs.define
class RunSuiteArguments:
    """``ragLsp.runSuite``: in a suite file ``uri``, the suite named ``suite``, else
    the one at ``line``, else every suite of the file; in a dataset, the suites that
    read it (only ``suite`` when given)."""

    uri: str = attrs.field(validator=_file_uri)
    line: int | None = attrs.field(default=None, validator=_line)
    suite: str | None = attrs.field(default=None, validator=_name)


@attrs.define
class ClearResultsArguments:
    """``ragLsp.clearResults``: the results shown in ``uri`` (and elsewhere for the
    same suites), or every result when no ``uri`` is given."""

    uri: str | None = attrs.field(default=None, validator=_file_uri)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a run command asks for: the command, the file, and its line and suite."""

    command: str
    path: Path
    line: int | None
    suite: str | None


def _strict_converter():
    """pygls's converter, but a string or an integer is taken only as itself: not
    `5` as "5", nor `true` as 1."""
    converter = default_converter()

    def exactly(kind: type) -> Any:
        def take(value: object, _: object) -> Any:
            if type(value) is not kind:
                raise ValueError(f"expected {'a string' if kind is str else 'an integer'}, got {value!r}")
            return value

        return take

    converter.register_structure_hook(str, exactly(str))
    converter.register_structure_hook(int, exactly(int))
    return converter


_CONVERTER = _strict_converter()


def structure(value: object, kind: type[T]) -> T:
    """Typed command arguments from their JSON, or an InvalidParams error saying what is wrong."""
    if not isinstance(value, dict):
        # cattrs would read a string as a mapping without the keys, all defaulted.
        raise JsonRpcInvalidParams(f"{kind.__name__}: expected an object, got {value!r}")
    try:
        return _CONVERTER.structure(value, kind)
    except Exception as error:  # cattrs groups the validators' errors
        causes = getattr(error, "exceptions", None) or [error]
        raise JsonRpcInvalidParams(f"{kind.__name__}: " + "; ".join(str(cause) for cause in causes)) from None


class Runs(Protocol):
    """What the handlers use of the server's runs."""

    async def run(self, request: RunRequest) -> dict[str, Any]: ...

    def clear(self, uri: str | None) -> dict[str, Any]: ...

    def cancel_progress(self, token: types.ProgressToken) -> None: ...


class RunningServer(Protocol):
    """What the handlers use of the server: its runs."""

    @property
    def runs(self) -> Runs: ...


def _file_path(uri: str) -> Path:
    path = path_of(uri)
    if path is None:
        raise JsonRpcInvalidParams(f"not a file: {uri}")
    return path


def _one(command: str, arguments: tuple[Any, ...]) -> Any:
    if len(arguments) != 1:
        raise JsonRpcInvalidParams(f"{command} takes one argument, an object such as {{\"uri\": ...}}; got {len(arguments)}")
    return arguments[0]


def register(server: LanguageServer) -> None:
    """The run commands' handlers, and the cancelling of a run's progress."""

    # The arguments come as sent (not structured by pygls, which calls a handler
    # short of one that was left out): each handler structures its own.
    @server.command(RUN_CASE)
    async def run_case(ls: RunningServer, *arguments: Any) -> dict[str, Any]:
        given = structure(_one(RUN_CASE, arguments), RunCaseArguments)
        return await ls.runs.run(RunRequest(RUN_CASE, _file_path(given.uri), given.line, given.suite))

    @server.command(RUN_SUITE)
    async def run_suite(ls: RunningServer, *arguments: Any) -> dict[str, Any]:
        given = structure(_one(RUN_SUITE, arguments), RunSuiteArguments)
        return await ls.runs.run(RunRequest(RUN_SUITE, _file_path(given.uri), given.line, given.suite))

    @server.command(CLEAR_RESULTS)
    def clear_results(ls: RunningServer, *arguments: Any) -> dict[str, Any]:
        # Optional: `[]`, `[{}]` and `[{"uri": ...}]` all do.
        given = structure(_one(CLEAR_RESULTS, arguments), ClearResultsArguments) if arguments else ClearResultsArguments()
        return ls.runs.clear(given.uri)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def work_done_progress_cancel(ls: RunningServer, params: types.WorkDoneProgressCancelParams) -> None:
        ls.runs.cancel_progress(params.token)
