"""The import structure holds: the core is free of the shells and of the LSP
libraries, the command line sits over the server, the server's two rooms
(checking and running) never import each other and stand on its base, and no
modules import each other in a cycle.

The contracts are import-linter's, written in ``pyproject.toml`` (``lint-imports``
checks them too). Import-linter's ``acyclic_siblings`` contract compares siblings;
a module cycle through a package and its own submodules (a package's
``__init__`` importing a submodule that imports the package) is found here, over
grimp's graph of the same imports. Imports under ``if TYPE_CHECKING:`` count in
both: a module that names another in its annotations depends on it too.
"""

from __future__ import annotations

import ast
import graphlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parent.parent


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter on the package under ``root`` with ``root``'s pyproject.toml."""
    environment = {**os.environ, "PYTHONPATH": str(root), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()", "--no-cache"],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def module_cycle(package: str) -> tuple[str, ...] | None:
    """A cycle of imports (those made for annotations only included) between the
    modules of ``package``, or None."""
    graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=False)
    imports = {module: {imported for imported in graph.find_modules_directly_imported_by(module) if imported in graph.modules} for module in graph.modules}
    try:
        graphlib.TopologicalSorter(imports).prepare()
    except graphlib.CycleError as error:
        return tuple(error.args[1])
    return None


def plant(module: Path, line: str) -> None:
    """Add an import to a module, after its ``from __future__`` line."""
    text = module.read_text(encoding="utf-8")
    future = "from __future__ import annotations\n"
    assert future in text, f"{module} has no {future!r} to plant after"
    module.write_text(text.replace(future, future + line + "\n", 1), encoding="utf-8")


def copy_of_the_package(root: Path) -> Path:
    """A copy of rag_lsp and pyproject.toml under ``root``: its package folder."""
    shutil.copytree(REPO / "rag_lsp", root / "rag_lsp", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root / "rag_lsp"


def broken(root: Path) -> str:
    """What lint-imports says of the package under ``root``, which must break a contract."""
    result = lint_imports(root)
    assert result.returncode != 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What lint-imports says of a copy of the package with one violation of each contract planted."""
    root = tmp_path_factory.mktemp("planted")
    package = copy_of_the_package(root)
    plant(package / "core" / "editing" / "hover.py", "import pygls  # planted")
    plant(package / "core" / "editing" / "docs.py", "from ...server.base import convert  # planted")
    plant(package / "server" / "base" / "convert.py", "from ...cli import formats  # planted")
    # core.reading.findings imports core.reading.text; this closes the loop.
    plant(package / "core" / "reading" / "text.py", "from . import findings  # planted")
    # The rooms of the server: running reaching into checking, checking naming
    # running in an annotation only, the ground floor reaching up, and a module
    # given no place.
    plant(package / "server" / "running" / "run_marks.py", "from ..checking import checker  # planted")
    plant(package / "server" / "checking" / "features.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..running import runs  # planted")
    plant(package / "server" / "base" / "uris.py", "from ..checking import session  # planted")
    (package / "server" / "stray.py").write_text("VALUE = 1  # planted\n", encoding="utf-8")
    # The checks reaching into the search engine, and the workspace up into the checks.
    plant(package / "core" / "checking" / "folding.py", "from ..search import ranking  # planted")
    plant(package / "core" / "workspace" / "rows.py", "from ..checking import datasetindex  # planted")
    # A shell checking around the one way in.
    plant(package / "cli" / "formats.py", "from ..core.checking.analyze import analyze_file  # planted")
    return broken(root)


ROOMS = "The server's rooms, checking and running, never import each other and stand on base"


def verdict(report: str, contract: str) -> str:
    """KEPT or BROKEN: what the report says of the contract named ``contract``."""
    line = next(line for line in report.splitlines() if line.startswith(contract))
    return line[len(contract) :].split()[0]


def test_the_import_contracts_are_kept() -> None:
    """lint-imports keeps every contract of pyproject.toml on the package as it is."""
    result = lint_imports(REPO)
    assert "0 broken" in result.stdout, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_module_imports_itself_through_others() -> None:
    """No module of rag_lsp reaches itself through its runtime imports."""
    assert module_cycle("rag_lsp") is None


def test_the_core_importing_the_lsp_library_or_the_server_breaks_its_contract(planted: str) -> None:
    """Core modules importing pygls and the server break the core's contract, each import named."""
    assert verdict(planted, "The core imports neither the shells nor the LSP libraries") == "BROKEN"
    assert "rag_lsp.core.editing.hover -> pygls" in planted
    assert "rag_lsp.core.editing.docs -> rag_lsp.server.base.convert" in planted


def test_the_server_importing_the_command_line_breaks_the_layers(planted: str) -> None:
    """A server module importing the command line breaks the layers contract."""
    assert verdict(planted, "The command line may start the server; the server never imports the command line") == "BROKEN"
    assert "rag_lsp.server.base.convert -> rag_lsp.cli.formats" in planted


def test_a_cycle_between_sibling_modules_breaks_the_acyclic_contract(planted: str) -> None:
    """Two core modules importing each other break the acyclic contract, in the core."""
    assert verdict(planted, "No import cycles between the sibling modules and packages of any package") == "BROKEN"
    assert "No cycles are allowed in rag_lsp.core." in planted


CORE_FLOORS = "The core's floors: editing and running over checking and search, over the workspace, over reading"


def test_the_checks_importing_the_search_engine_break_the_core_floors(planted: str) -> None:
    """The checks never import the builtin search engine: an import of it from a check is reported."""
    assert verdict(planted, CORE_FLOORS) == "BROKEN"
    assert "rag_lsp.core.checking.folding -> rag_lsp.core.search.ranking" in planted


def test_the_workspace_importing_the_checks_breaks_the_core_floors(planted: str) -> None:
    """The workspace's facts stand below the checks: the workspace importing a check is reported."""
    assert "rag_lsp.core.workspace.rows -> rag_lsp.core.checking.datasetindex" in planted


def test_a_shell_checking_around_the_one_way_in_breaks_its_contract(planted: str) -> None:
    """The command line calling the one-shot analysis itself, not through core.checking.analysis, is reported."""
    assert verdict(planted, "The shells check through the core's one way in, core.checking.analysis, never around it") == "BROKEN"
    assert "rag_lsp.cli.formats -> rag_lsp.core.checking.analyze" in planted


def test_the_running_room_importing_the_checking_room_breaks_the_rooms_contract(planted: str) -> None:
    """A running module importing a checking module breaks the rooms contract, the import named."""
    assert verdict(planted, ROOMS) == "BROKEN"
    assert "rag_lsp.server.running is not allowed to import rag_lsp.server.checking" in planted
    assert "rag_lsp.server.running.run_marks -> rag_lsp.server.checking.checker" in planted


def test_the_checking_room_naming_the_running_room_in_an_annotation_breaks_the_rooms_contract(planted: str) -> None:
    """A checking module importing a running module under TYPE_CHECKING only breaks the rooms contract too."""
    assert "rag_lsp.server.checking is not allowed to import rag_lsp.server.running" in planted
    assert "rag_lsp.server.checking.features -> rag_lsp.server.running.runs" in planted


def test_the_ground_floor_importing_a_room_breaks_the_rooms_contract(planted: str) -> None:
    """A module of the server's base importing one of the checking room breaks the layers of the server."""
    assert "rag_lsp.server.base is not allowed to import rag_lsp.server.checking" in planted
    assert "rag_lsp.server.base.uris -> rag_lsp.server.checking.session" in planted


def test_a_server_module_outside_the_rooms_breaks_the_rooms_contract(planted: str) -> None:
    """A module added to the server beside the rooms, given no layer, breaks the (exhaustive) rooms contract."""
    assert "The following modules are not listed as layers:\n\n- rag_lsp.server.stray" in planted


def test_a_cycle_between_the_rooms_breaks_the_acyclic_contract(planted: str) -> None:
    """Checking and running importing each other (one way in annotations only) are a cycle in the server."""
    assert "No cycles are allowed in rag_lsp.server." in planted


def test_the_settings_reader_importing_the_rule_registry_is_a_cycle(tmp_path: Path) -> None:
    """The settings file's reader, were it to ask the rule registry again (loading every rule, which
    reads workspace facts, which read the settings file), would close a cycle in the core."""
    package = copy_of_the_package(tmp_path)
    plant(package / "core" / "workspace" / "config.py", "from ..checking.rules import all_rules  # planted")
    report = broken(tmp_path)
    assert verdict(report, "No import cycles between the sibling modules and packages of any package") == "BROKEN"
    assert "No cycles are allowed in rag_lsp.core." in report
    assert "No cycles are allowed in rag_lsp.server." not in report


def test_a_package_and_its_submodule_importing_each_other_is_a_module_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package whose __init__ imports a submodule that imports the package is reported as that cycle."""
    package = tmp_path / "planted_package"
    package.mkdir()
    (package / "__init__.py").write_text("from .child import make\n\nNAME = 'planted'\n", encoding="utf-8")
    (package / "child.py").write_text("def make():\n    from . import NAME\n    return NAME\n", encoding="utf-8")
    (package / "leaf.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    cycle = module_cycle("planted_package")
    assert cycle is not None
    assert set(cycle) == {"planted_package", "planted_package.child"}


def test_imports_made_only_for_annotations_are_a_module_cycle_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two modules whose only import back is under TYPE_CHECKING are a cycle all the same."""
    package = tmp_path / "annotated_package"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from .b import B\n\nclass A(B):\n    pass\n", encoding="utf-8")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .a import A\n\nclass B:\n    def me(self) -> 'A': ...\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    cycle = module_cycle("annotated_package")
    assert cycle is not None
    assert set(cycle) == {"annotated_package.a", "annotated_package.b"}


def test_the_cycle_collector_policy_is_the_shells_alone() -> None:
    """No core module imports `gc` (the helper's loop, which collects once after each share, aside): when the collector runs is rag_lsp/collector.py's to decide, called by the shells."""
    importing = []
    for path in sorted((REPO / "rag_lsp" / "core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
        names += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
        if "gc" in names:
            importing.append(path.relative_to(REPO).as_posix())
    assert importing == ["rag_lsp/core/checking/parallel.py"]
    users = [path.relative_to(REPO).as_posix() for path in sorted((REPO / "rag_lsp").rglob("*.py")) if "collector." in path.read_text(encoding="utf-8")]
    assert users == [
        "rag_lsp/cli/check.py",
        "rag_lsp/cli/run.py",
        "rag_lsp/server/base/document.py",
        "rag_lsp/server/checking/actions.py",
        "rag_lsp/server/checking/checker.py",
        "rag_lsp/server/running/run_worker.py",
    ]
