"""``rag-lsp import``: a relevance dataset written by another tool, as a dataset
and a suite of this workspace.

    rag-lsp import BEIR_FOLDER [--split test] [--name NAME] [--k 10] [--into DIR] [--force]
    rag-lsp import QRELS --queries FILE [--corpus FILE | --target ID] [--name NAME] [--k 10] [--into DIR] [--force]

A folder is a BEIR folder (``corpus.jsonl``, ``queries.jsonl``,
``qrels/<split>.tsv``); a file is TREC qrels (``qid 0 docid rel``), whose queries
``--queries`` gives (TSV ``qid<TAB>text``, or JSON Lines ``_id``/``text``). With a
corpus (a BEIR folder's, or ``--corpus``) it writes, under the workspace root
(``--into``, default: the workspace of the current folder):

* ``.punica/corpora/NAME.jsonl``: the documents (``_id``, ``title``, ``text``);
* ``.punica/evals/NAME.jsonl``: a rag case per judged query;
* ``.punica/evals/NAME.suite.yaml``: suite NAME, ``match: id``, over target
  ``NAME.search``;
* target ``NAME.search`` in ``.punica/targets.yaml``: the builtin search over
  the documents (the file is made, or the target added to it);

so ``rag-lsp run --suite NAME`` runs it with no further configuration. Without a
corpus, ``--target ID`` names the target the suite asks. It says what it skipped
and why. It never replaces a file without ``--force``. Exit 0 when written, 2
when nothing was (a source that cannot be read, a file in the way, bad usage).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .exits import EXIT_OK, UsageError


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "import",
        help="turn a BEIR folder or TREC qrels into a dataset and a suite of this workspace",
        description="Turn a relevance dataset written by another tool into a dataset (.jsonl) and a suite "
        "(.suite.yaml) under .punica/evals, with the documents the builtin target searches: a BEIR folder "
        "(corpus.jsonl, queries.jsonl, qrels/<split>.tsv), or TREC qrels (`qid 0 docid rel`) with --queries. "
        "Documents judged relevant (grade > 0) become `expect.relevant`, their grades `expect.grades`. "
        "Says what it skipped and why; never replaces a file without --force.",
    )
    parser.add_argument("source", metavar="SOURCE", help="a BEIR folder, or a TREC qrels file (with --queries)")
    parser.add_argument("--split", default="test", help="the BEIR split to import: qrels/SPLIT.tsv (default: test)")
    parser.add_argument(
        "--queries", metavar="FILE", help="TREC: the queries, as TSV (qid<TAB>text) or JSON Lines (_id, text)"
    )
    parser.add_argument(
        "--corpus",
        metavar="FILE",
        help="TREC: the documents, JSON Lines of _id, title, text (a BEIR corpus.jsonl); the builtin target searches them",
    )
    parser.add_argument(
        "--target",
        metavar="ID",
        help="TREC without --corpus: the target the suite asks (its hits' `id` must be the document ids)",
    )
    parser.add_argument("--name", help="names the files, the suite and the corpus (default: from SOURCE)")
    parser.add_argument("--k", type=int, default=10, help="the suite's k: the first k hits count (default: 10)")
    parser.add_argument(
        "--into", metavar="DIR", help="the workspace to write into (default: the workspace of the current folder)"
    )
    parser.add_argument("--force", action="store_true", help="replace files that already exist")
    parser.set_defaults(handler=run_import)


def run_import(arguments: argparse.Namespace) -> int:
    from ..core.running import importing
    from ..core.workspace.roots import find_root

    source = Path(arguments.source)
    if not os.path.exists(source):
        raise UsageError(f"{source}: no such file or folder")
    if arguments.k < 1:
        raise UsageError(f"--k must be at least 1, not {arguments.k}")
    beir = source.is_dir()
    if beir:
        for flag in ("queries", "corpus", "target"):
            if getattr(arguments, flag) is not None:
                raise UsageError(f"--{flag} is for TREC qrels; {source} is a folder, read as a BEIR folder")
    else:
        if arguments.queries is None:
            raise UsageError(
                f"{source} is a file, read as TREC qrels: give its queries with --queries FILE "
                "(TSV qid<TAB>text, or JSON Lines _id/text); a BEIR dataset is imported by its folder"
            )
        if arguments.corpus is None and arguments.target is None:
            raise UsageError(
                "give --corpus FILE (the documents, JSON Lines of _id, title, text, which the builtin target then "
                "searches), or --target ID (the target that answers the cases, by document ids)"
            )
        if arguments.corpus is not None and arguments.target is not None:
            raise UsageError("give --corpus or --target, not both: with --corpus the builtin target searches the documents")
    try:
        name = importing.check_name(arguments.name) if arguments.name is not None else importing.default_name(source.resolve())
        if beir:
            imported = importing.read_beir(source, arguments.split)
        else:
            corpus = Path(arguments.corpus) if arguments.corpus is not None else None
            imported = importing.read_trec(source, Path(arguments.queries), corpus)
        root = Path(arguments.into).resolve() if arguments.into else find_root(Path.cwd())
        if arguments.into and not root.is_dir():
            raise UsageError(f"--into {arguments.into}: not a folder")
        plan = importing.plan(imported, name, root, target=arguments.target, k=arguments.k)
    except importing.ImportProblem as problem:
        raise UsageError(str(problem)) from None
    _refuse_what_is_in_the_way(root, plan, arguments.force)
    _write(root, plan)
    _report(imported, plan, root)
    return EXIT_OK


def _refuse_what_is_in_the_way(root: Path, plan, force: bool) -> None:
    """UsageError when a file the import writes exists (without --force), or a
    suite of another file has its suite's id."""
    existing = [relative for relative in plan.files if os.path.lexists(root / relative)]
    if existing and not force:
        raise UsageError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''} in {root}: nothing was written; "
            "give --force to replace them, or --name to import under another name"
        )
    for relative in existing:
        if (root / relative).is_dir():
            raise UsageError(f"{relative} is a folder in {root}: nothing was written")
    from ..core.workspace.workspace import Workspace

    workspace = Workspace.configured(root)
    own = next(relative for relative in plan.files if relative.endswith(".suite.yaml"))
    clash = [suite.file for suite in workspace.suites() if suite.id == plan.suite_id and suite.file != own]
    if clash:
        raise UsageError(
            f"suite {plan.suite_id!r} already exists in {clash[0]}: nothing was written; import under another --name"
        )


def _write(root: Path, plan) -> None:
    written = dict(plan.files)
    if plan.targets_text is not None:
        from ..core.running.importing import TARGETS

        written[TARGETS] = plan.targets_text.encode("utf-8")
    for relative, data in written.items():
        path = root / relative
        temporary = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(data)
            os.replace(temporary, path)
        except OSError as error:
            try:
                temporary.unlink()
            except OSError:
                pass
            raise UsageError(f"{path}: cannot write: {error.strerror or error}") from None


def _report(imported, plan, root: Path) -> None:
    from ..core.reading.wording import counted
    from ..core.running.importing import TARGETS

    out = sys.stdout
    print(f"imported the {imported.described} into {root}", file=out)
    for relative, data in plan.files.items():
        if relative.endswith(".suite.yaml"):
            what = f"suite {plan.suite_id} (match: id, target {plan.target_id})"
        elif relative.startswith(".punica/corpora/"):
            what = counted(len(imported.documents or ()), "document")
        else:
            relevant = sum(len(case["expect"]["relevant"]) for case in imported.cases)
            graded = sum(1 for case in imported.cases if "grades" in case["expect"])
            what = f"{counted(len(imported.cases), 'case')}, {counted(relevant, 'relevant document')}" + (
                f" ({counted(graded, 'case')} graded)" if graded else ""
            )
        print(f"  wrote {relative}: {what}", file=out)
    if plan.target_added:
        print(f"  added target {plan.target_id} to {TARGETS}: the builtin search over the documents", file=out)
    elif plan.targets_text is None and imported.documents is not None and plan.target_id.endswith(".search"):
        print(f"  {TARGETS} already has target {plan.target_id}", file=out)
    skipped = imported.skipped()
    if skipped:
        print("skipped:", file=out)
        for skip in skipped:
            more = ", …" if skip.count > len(skip.shown) else ""
            print(f"  {skip.said()}: {', '.join(skip.shown)}{more}", file=out)
    for note in imported.notes:
        print(f"note: {note}", file=out)
    print(f"next: rag-lsp run --suite {plan.suite_id}", file=out)
