"""Relevance datasets written by other tools, read into a dataset and a suite of
this project (what ``rag-lsp import`` writes).

Two sources:

* a **BEIR folder**: ``corpus.jsonl`` (``_id``, ``title``, ``text``),
  ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (a header line,
  then ``query-id<TAB>corpus-id<TAB>score``);
* **TREC qrels** (``qid 0 docid rel``, whitespace separated) with a queries file,
  TSV (``qid<TAB>text``) or JSON Lines (``_id``, ``text``), and optionally a
  corpus of documents as in a BEIR folder.

Each judged query is one rag case: ``id`` is the query id, ``input.query`` its
text, ``expect.relevant`` the documents judged relevant (grade > 0), in the order
the judgments list them, and ``expect.grades`` their grades when any is not 1
(a value listed without a grade has grade 1). What cannot be kept is counted and
said, with the first few ids or lines (:class:`Skip`): queries without
judgments, judgments without a query, queries judged with nothing relevant,
rows that cannot be read. Nothing here writes a file; :func:`plan` says what
the files are to hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson
import yaml

BEIR = "beir"
TREC = "trec"
# The first ids or lines a skip shows.
SHOWN = 5
# Where the files go, under the workspace root.
EVALS = ".punica/evals"
CORPORA = ".punica/corpora"
TARGETS = ".punica/targets.yaml"
DEFAULT_K = 10


class ImportProblem(ValueError):
    """A source that cannot be imported; the message says why and what to do."""


@dataclass
class Skip:
    """What was left out for one reason (said of many, and of one): how many,
    and the first few."""

    reason: str
    reason_of_one: str
    count: int = 0
    shown: list[str] = field(default_factory=list)

    def add(self, what: str, count: int = 1) -> None:
        self.count += count
        if len(self.shown) < SHOWN:
            self.shown.append(what)

    def said(self) -> str:
        """How many were left out, and why: ``3 rows of q.jsonl that cannot be read``."""
        return f"{self.count:,} {self.reason_of_one if self.count == 1 else self.reason}"


@dataclass
class Imported:
    """A source read: its cases (rows of a dataset), its documents (lines of a
    documents file, when it has a corpus) and what was left out."""

    source: str  # BEIR or TREC
    described: str  # the source as the report names it
    cases: list[dict[str, Any]] = field(default_factory=list)
    documents: list[bytes] | None = None
    skips: list[Skip] = field(default_factory=list)
    # What was kept but will not behave as the source may expect.
    notes: list[str] = field(default_factory=list)

    def skipped(self) -> list[Skip]:
        return [skip for skip in self.skips if skip.count]


# ---------------------------------------------------------------- reading


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based number, text) of each line of a text file; ImportProblem when it cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImportProblem(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ImportProblem(f"{path}: a folder, not a file") from None
    except OSError as error:
        raise ImportProblem(f"{path}: cannot be read: {error.strerror or error}") from None
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    for number, line in enumerate(text.split("\n"), 1):
        yield number, line.rstrip("\r")


def _identifier(value: Any) -> str | None:
    """An id as written in JSON: a string that is not blank, or an integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def _shown_line(path: Path, number: int, line: str) -> str:
    text = line if len(line) <= 60 else line[:59] + "…"
    return f"{path.name}:{number}: {text!r}"


def read_queries(path: Path, imported: Imported) -> dict[str, str]:
    """Query id -> text, from JSON Lines (``_id``, ``text``) or TSV (``id<TAB>text``),
    told apart by the first line that holds something."""
    unreadable = _skip(imported, f"rows of {path.name} that cannot be read", f"row of {path.name} that cannot be read")
    repeated = _skip(imported, f"queries of {path.name} given twice (the first kept)", f"query of {path.name} given twice (the first kept)")
    blank = _skip(imported, "queries with no text", "query with no text")
    queries: dict[str, str] = {}
    as_json: bool | None = None
    for number, line in _lines(path):
        if not line.strip():
            continue
        if as_json is None:
            as_json = line.lstrip().startswith("{")
        if as_json:
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                row = None
            identifier = _identifier(row.get("_id")) if isinstance(row, dict) else None
            text = row.get("text") if isinstance(row, dict) else None
            if identifier is None or not isinstance(text, str):
                unreadable.add(_shown_line(path, number, line))
                continue
        else:
            identifier, tab, text = line.partition("\t")
            if not tab or not identifier.strip():
                unreadable.add(_shown_line(path, number, line))
                continue
            identifier = identifier.strip()
        if identifier in queries:
            repeated.add(identifier)
            continue
        if not text.strip():
            blank.add(identifier)
            continue
        queries[identifier] = text.strip()
    if as_json is None:
        raise ImportProblem(f"{path}: holds no query")
    return queries


def read_qrels(path: Path, imported: Imported, trec: bool) -> dict[str, dict[str, int]]:
    """Query id -> document id -> grade, in the order the file gives them. TREC:
    ``qid iteration docid rel``; BEIR: a header line, then ``qid<TAB>docid<TAB>score``."""
    unreadable = _skip(imported, f"judgments of {path.name} that cannot be read", f"judgment of {path.name} that cannot be read")
    repeated = _skip(imported, f"judgments of {path.name} given twice (the last kept)", f"judgment of {path.name} given twice (the last kept)")
    qrels: dict[str, dict[str, int]] = {}
    width = 4 if trec else 3
    seen_any = False
    for number, line in _lines(path):
        if not line.strip():
            continue
        fields = line.split() if trec else [part.strip() for part in line.split("\t")]
        if not trec and not seen_any:
            seen_any = True
            if len(fields) == 3 and _grade(fields[2]) is None:
                continue  # the header: query-id corpus-id score
        seen_any = True
        grade = _grade(fields[-1]) if len(fields) == width else None
        if grade is None or not fields[0] or not fields[-2]:
            unreadable.add(_shown_line(path, number, line))
            continue
        query, document = fields[0], fields[-2]
        judged = qrels.setdefault(query, {})
        if document in judged:
            repeated.add(f"{query} {document}")
        judged[document] = grade
    if not seen_any:
        raise ImportProblem(f"{path}: holds no judgment")
    return qrels


def _grade(text: str) -> int | None:
    """A relevance grade: an integer (``2``, ``-1``, ``1.0``); None otherwise."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def read_corpus(path: Path, imported: Imported) -> set[str]:
    """The documents of a corpus (``_id``, ``title``, ``text``), as the lines of
    a documents file (only those three keys); their ids."""
    unreadable = _skip(imported, f"documents of {path.name} that cannot be read", f"document of {path.name} that cannot be read")
    repeated = _skip(imported, f"documents of {path.name} given twice (the first kept)", f"document of {path.name} given twice (the first kept)")
    empty = _skip(imported, f"documents of {path.name} with no text", f"document of {path.name} with no text")
    documents: list[bytes] = []
    ids: set[str] = set()
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            row = None
        identifier = _identifier(row.get("_id")) if isinstance(row, dict) else None
        if identifier is None:
            unreadable.add(_shown_line(path, number, line))
            continue
        title, text = row.get("title"), row.get("text")
        title = title if isinstance(title, str) else ""
        text = text if isinstance(text, str) else ""
        if identifier in ids:
            repeated.add(identifier)
            continue
        if not title.strip() and not text.strip():
            empty.add(identifier)
            continue
        ids.add(identifier)
        documents.append(orjson.dumps({"_id": identifier, "title": title, "text": text}))
    imported.documents = documents
    if not documents:
        raise ImportProblem(f"{path}: holds no document (one {{\"_id\", \"title\", \"text\"}} object per line)")
    return ids


def _skip(imported: Imported, reason: str, reason_of_one: str) -> Skip:
    skip = Skip(reason, reason_of_one)
    imported.skips.append(skip)
    return skip


def read_beir(folder: Path, split: str) -> Imported:
    """A BEIR folder's split as cases, and its corpus as documents."""
    if not folder.is_dir():
        raise ImportProblem(f"{folder}: not a folder")
    missing = [name for name in ("corpus.jsonl", "queries.jsonl") if not (folder / name).is_file()]
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        splits = sorted(path.stem for path in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
        there = f" (its splits: {', '.join(splits)}; choose one with --split)" if splits else ""
        missing.append(f"qrels/{split}.tsv{there}")
    if missing:
        raise ImportProblem(
            f"{folder} is not a BEIR folder: it has no {', no '.join(missing)} "
            "(a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv)"
        )
    imported = Imported(BEIR, f"BEIR folder {folder} (split {split})")
    ids = read_corpus(folder / "corpus.jsonl", imported)
    queries = read_queries(folder / "queries.jsonl", imported)
    qrels = read_qrels(qrels_path, imported, trec=False)
    _cases(imported, queries, qrels, qrels_path.name, ids, other_splits=True)
    return imported


def read_trec(qrels_path: Path, queries_path: Path, corpus: Path | None) -> Imported:
    """TREC qrels and their queries as cases (and a corpus as documents, when given)."""
    if qrels_path.is_dir():
        raise ImportProblem(f"{qrels_path}: a folder; TREC qrels are a file (a BEIR folder is imported without --queries)")
    imported = Imported(TREC, f"TREC qrels {qrels_path} with queries {queries_path}")
    ids = read_corpus(corpus, imported) if corpus is not None else None
    queries = read_queries(queries_path, imported)
    qrels = read_qrels(qrels_path, imported, trec=True)
    _cases(imported, queries, qrels, qrels_path.name, ids, other_splits=False)
    return imported


def _cases(
    imported: Imported,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    qrels_name: str,
    documents: set[str] | None,
    other_splits: bool,
) -> None:
    without = _skip(
        imported,
        f"queries without judgments in {qrels_name}" + (" (most often, queries of the other splits)" if other_splits else ""),
        f"query without judgments in {qrels_name}" + (" (most often, a query of another split)" if other_splits else ""),
    )
    orphans = _skip(
        imported, f"judged queries of {qrels_name} that are not in the queries file", f"judged query of {qrels_name} that is not in the queries file"
    )
    every_grade = "(every grade ≤ 0; a case needs a relevant document)"
    nothing = _skip(imported, f"queries judged with nothing relevant {every_grade}", f"query judged with nothing relevant {every_grade}")
    unknown = 0
    first_unknown: list[str] = []
    for identifier, text in queries.items():
        judged = qrels.get(identifier)
        if judged is None:
            without.add(identifier)
            continue
        relevant = {document: grade for document, grade in judged.items() if grade > 0}
        if not relevant:
            nothing.add(identifier)
            continue
        expect: dict[str, Any] = {"relevant": list(relevant)}
        if any(grade != 1 for grade in relevant.values()):
            expect["grades"] = relevant
        imported.cases.append({"id": identifier, "input": {"query": text}, "expect": expect})
        if documents is not None:
            for document in relevant:
                if document not in documents:
                    unknown += 1
                    if len(first_unknown) < SHOWN:
                        first_unknown.append(f"{identifier}: {document}")
    for identifier, judged in qrels.items():
        if identifier not in queries:
            orphans.add(identifier, 1)
    if unknown:
        imported.notes.append(
            f"{unknown:,} relevant {'judgment names' if unknown == 1 else 'judgments name'} a document the corpus does not hold "
            f"(kept: {'it counts' if unknown == 1 else 'they count'} as missed, as {'it' if unknown == 1 else 'they'} would in "
            f"trec_eval): {', '.join(first_unknown)}"
        )
    if not imported.cases:
        said = "; ".join(skip.said() for skip in imported.skipped())
        raise ImportProblem(f"nothing to import from the {imported.described}: no query is judged relevant to a document ({said})")


# ---------------------------------------------------------------- what is written


_NAME = re.compile(r"[^a-z0-9._-]+")


def default_name(path: Path) -> str:
    """A name for the imported files from a source's path: ``datasets/SciFact/`` -> ``scifact``."""
    stem = path.name if path.is_dir() else path.stem
    name = _NAME.sub("-", stem.lower()).strip("-.")
    return name or "imported"


def check_name(name: str) -> str:
    if not name or _NAME.search(name) or name.startswith("."):
        raise ImportProblem(f"--name {name!r}: use lower-case letters, digits, '.', '_' and '-' (it names files and a suite)")
    return name


@dataclass
class Plan:
    """The files an import writes, by workspace-relative path, and the targets
    config as it is to be (None: left as it is)."""

    files: dict[str, bytes]
    suite_id: str
    target_id: str
    targets_text: str | None = None
    target_added: bool = False


def plan(imported: Imported, name: str, root: Path, target: str | None = None, k: int = DEFAULT_K) -> Plan:
    """What an import of ``imported`` under ``name`` writes in the workspace at
    ``root``: the documents file (with a corpus), the dataset, the suite, and the
    target that searches the documents, added to the targets config. ``target``:
    the target the suite names instead, when there are no documents."""
    dataset = f"{EVALS}/{name}.jsonl"
    suite = f"{EVALS}/{name}.suite.yaml"
    files: dict[str, bytes] = {}
    corpus = None
    if imported.documents is not None:
        corpus = f"{CORPORA}/{name}.jsonl"
        files[corpus] = b"\n".join(imported.documents) + b"\n"
    files[dataset] = b"".join(orjson.dumps(case) + b"\n" for case in imported.cases)
    target_id = target or f"{name}.search"
    files[suite] = _suite_text(imported, name, target_id, dataset, corpus, k).encode("utf-8")
    result = Plan(files, name, target_id)
    if corpus is not None and target is None:
        result.targets_text, result.target_added = _targets_text(root / TARGETS, target_id, name, corpus)
    return result


def _suite_text(imported: Imported, name: str, target_id: str, dataset: str, corpus: str | None, k: int) -> str:
    searched = (
        f"# The builtin target {target_id} (.punica/targets.yaml) searches its {len(imported.documents or ()):,} documents\n"
        f"# ({corpus}) by meaning; a hit's id is a document's _id.\n"
        if corpus is not None
        else f"# Target {target_id} answers its cases: its hits' `id` must be the documents' ids.\n"
    )
    return (
        f"# Imported by `rag-lsp import` from the {imported.described}:\n"
        f"# {len(imported.cases):,} cases, each a query and the documents judged relevant to it.\n"
        f"{searched}"
        f"#\n#   rag-lsp run --suite {name}\n"
        "#\n# Add thresholds (e.g. rag.recall: 0.6) once a first run shows where the search stands.\n"
        "suites:\n"
        f"  - id: {_yaml_scalar(name)}\n"
        f"    target: {{kind: capability, id: {_yaml_scalar(target_id)}}}\n"
        f"    dataset: {_yaml_scalar(dataset)}\n"
        "    engines: [rag]\n"
        "    options:\n"
        f"      rag: {{match: id, k: {k}}}   # expected values are documents' ids; the first {k} hits count\n"
        "    thresholds:\n"
        "      rag.mode.semantic: 1\n"
    )


def _yaml_scalar(text: str) -> str:
    """``text`` as a YAML plain scalar when it reads back as itself, else quoted."""
    try:
        if yaml.safe_load(text) == text and ":" not in text and "#" not in text:
            return text
    except yaml.YAMLError:
        pass
    return orjson.dumps(text).decode("utf-8")


def target_config(name: str, corpus: str) -> dict[str, Any]:
    return {"builtin": {"corpora": {name: {"documents": corpus}}}}


def _target_lines(target_id: str, name: str, corpus: str, indent: str) -> list[str]:
    inner = indent * 2
    return [
        f"{indent}# Imported by `rag-lsp import`: the builtin search by meaning over the documents of {corpus}.",
        f"{indent}{_yaml_scalar(target_id)}:",
        f"{inner}builtin:",
        f"{inner}{indent}corpora:",
        f"{inner}{indent}{indent}{_yaml_scalar(name)}: {{documents: {_yaml_scalar(corpus)}}}",
    ]


def _targets_text(path: Path, target_id: str, name: str, corpus: str) -> tuple[str | None, bool]:
    """The targets config with the target added: (its new text, True); (None,
    False) when it already holds that very target. ImportProblem when it holds
    another target of that id, or cannot be edited safely."""
    wanted = target_config(name, corpus)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        header = [
            "# How the suites in this workspace reach their retrieval targets (see `rag-lsp check --explain RAG111`).",
            "targets:",
        ]
        return "\n".join([*header, *_target_lines(target_id, name, corpus, "  ")]) + "\n", True
    except (OSError, UnicodeDecodeError) as error:
        raise ImportProblem(f"{TARGETS} cannot be read: {error}") from None
    snippet = "\n".join(["targets:", *_target_lines(target_id, name, corpus, "  ")])
    try:
        data = yaml.safe_load(text) if len(text) < 1_000_000 else None
    except yaml.YAMLError:
        data = None
    if not isinstance(data, dict) and data is not None:
        data = None
    if data is None and text.strip() and not all(line.lstrip().startswith("#") or not line.strip() for line in text.splitlines()):
        raise ImportProblem(f"{TARGETS} cannot be read as YAML: fix it (`rag-lsp check` says how), or add by hand:\n{snippet}")
    data = data or {}
    targets = data.get("targets")
    if isinstance(targets, dict) and target_id in targets:
        if targets[target_id] == wanted:
            return None, False
        raise ImportProblem(
            f"{TARGETS} already configures a target {target_id!r}, as something else: import under another "
            "--name, or remove that target first"
        )
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "targets" not in data:
        new = [*lines, *snippet.split("\n")]
    elif isinstance(targets, dict) or targets is None:
        at = next((number for number, line in enumerate(lines) if re.match(r"targets\s*:\s*(#.*)?$", line)), None)
        if at is None:
            # `targets: {}` or a flow mapping: the one line becomes a block.
            at = next((number for number, line in enumerate(lines) if re.match(r"targets\s*:\s*\{\s*\}\s*(#.*)?$", line)), None)
            if at is None or targets:
                raise ImportProblem(f"{TARGETS} writes `targets:` in a way this cannot extend: add by hand:\n{snippet}")
            lines[at] = "targets:"
        end = len(lines)
        indent = None
        for number in range(at + 1, len(lines)):
            line = lines[number]
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line[0].isspace():
                end = number
                break
            if indent is None:
                indent = line[: len(line) - len(line.lstrip())]
        # Past the block's last line that holds something (its comments and blank lines stay below it).
        while end > at + 1 and (not lines[end - 1].strip() or not lines[end - 1][:1].isspace()):
            end -= 1
        indent = indent or "  "
        if "\t" in indent:
            raise ImportProblem(f"{TARGETS} indents with tabs: add by hand:\n{snippet}")
        new = [*lines[:end], *_target_lines(target_id, name, corpus, indent), *lines[end:]]
    else:
        raise ImportProblem(f"{TARGETS}: `targets` is not a mapping: fix it (`rag-lsp check` says how), or add by hand:\n{snippet}")
    result = "\n".join(new) + "\n"
    try:
        check = yaml.safe_load(result)
    except yaml.YAMLError:
        check = None
    if not isinstance(check, dict) or not isinstance(check.get("targets"), dict) or check["targets"].get(target_id) != wanted:
        raise ImportProblem(f"{TARGETS} could not be extended safely: add by hand:\n{snippet}")
    return result, True
