"""The builtin target's index lasts (SPEC §2.5): cached in the user's cache folder,
read back by the next process, updated file by file, rebuilt when damaged."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import numpy
import pytest

from rag_lsp.core.running.targets import Cancelled, Request, open_target
from rag_lsp.core.search import embedding
from rag_lsp.core.workspace.chunking import Chunking
from rag_lsp.core.search.index import FORMAT, IndexBuilder
from rag_lsp.core.workspace.suitefacts import target_info
from rag_lsp.core.workspace.workspace import Workspace
from workspaces import AUDIT, DEPLOY, RATE_LIMITS, write_files

DOCS = {"docs/rate-limits.md": RATE_LIMITS, "docs/deploy.md": DEPLOY, "docs/audit.md": AUDIT}
QUESTION = "what stops one busy customer from starving everyone else"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("RAG_LSP_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the model embeds (chunks and queries), in order."""
    texts: list[str] = []
    for method in ("embed", "embed_chunks_soon"):
        original = getattr(embedding.StaticModel, method)

        def spy(self, batch, original=original):
            texts.extend(batch)
            return original(self, batch)

        monkeypatch.setattr(embedding.StaticModel, method, spy)
    return texts


def workspace(root: Path, files: dict[str, str] = DOCS) -> Workspace:
    write_files(root, files)
    return Workspace(root)


def target(space: Workspace):
    return open_target(target_info("vectors.query", {"builtin": {"corpora": {"docs": ["docs/**"]}}}), space, 5.0)


def ask(found, question: str = QUESTION) -> list[str]:
    ((_, answer),) = list(found.answer_many([Request("c", {"query": question})]))
    return [hit.path for hit in answer.hits]


def index_folder(cache: Path) -> Path:
    (folder,) = (cache / f"index-v{FORMAT}").iterdir()
    return folder


def age(space: Workspace, seconds: float = 60) -> None:
    """Date every file back, as files are that were not written in the last moments."""
    for path in space.root.rglob("*.md"):
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - int(seconds * 1e9)))


def test_the_index_is_cached_and_a_new_target_embeds_nothing(tmp_path: Path, cache: Path, embedded: list[str]) -> None:
    """The first build writes meta.json and its four arrays; a target opened afterwards (as by the next
    process) reads them and embeds no chunk again, answering as the first did."""
    space = workspace(tmp_path / "ws")
    age(space)
    first = target(space)
    first.prepare()
    assert len(embedded) == 3  # one chunk per file
    folder = index_folder(cache)
    assert sorted(path.name.split("-")[0] for path in folder.iterdir()) == ["chunks", "meta.json", "scales", "terms", "vectors"]
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert meta["key"]["chunking"] == {"unit": "lines", "size": 60, "overlap": 12} and meta["dim"] == 256
    assert [entry[0] for entry in meta["files"]] == ["docs/audit.md", "docs/deploy.md", "docs/rate-limits.md"]
    answer = ask(first)
    embedded.clear()
    second = target(space)
    second.prepare()
    assert embedded == []
    assert ask(second) == answer and answer[0] == "docs/rate-limits.md"


def test_an_index_of_no_chunk_is_cached_as_sound(tmp_path: Path, cache: Path, embedded: list[str]) -> None:
    """A corpus whose files hold only blank lines is an index of no chunk: the next target reads it from the
    cache as it is, without calling it damaged."""
    space = workspace(tmp_path / "ws", {"docs/blank.md": "\n\n  \n"})
    age(space)
    target(space).prepare()
    again = target(space)
    again.prepare()
    assert embedded == [] and not any("damaged" in note for note in again.take_notes())
    assert ask(again) == []


def test_indexes_of_older_cache_formats_are_removed_once_an_index_is_saved(tmp_path: Path, cache: Path) -> None:
    """A cache folder of an older format (float32 vectors, never read by this version) is removed when
    an index is saved; a folder of a newer format and other files of the cache are left alone."""
    older = cache / "index-v1" / "0123456789abcdef01234567"
    older.mkdir(parents=True)
    (older / "vectors-aaaa.npy").write_bytes(b"\x93NUMPY" + bytes(100))
    newer, other = cache / "index-v99", cache / "notes.txt"
    newer.mkdir()
    other.write_text("kept", encoding="utf-8")
    space = workspace(tmp_path / "ws")
    target(space).prepare()
    assert not (cache / "index-v1").exists()
    assert newer.is_dir() and other.read_text(encoding="utf-8") == "kept"
    assert (index_folder(cache) / "meta.json").is_file()


def test_only_new_and_changed_files_are_embedded_again(tmp_path: Path, cache: Path, embedded: list[str]) -> None:
    """After a file changes, one is added and one removed, the next build embeds the changed and the new
    file only, answers from their new text, and the cache holds one generation of arrays."""
    space = workspace(tmp_path / "ws")
    age(space)
    target(space).prepare()
    embedded.clear()
    (space.root / "docs/deploy.md").write_text("# Deploy\n\nBlue-green switch of the zeppelin fleet.\n", encoding="utf-8")
    (space.root / "docs/refunds.md").write_text("# Refunds\n\nMoney goes back to the card within five days.\n", encoding="utf-8")
    (space.root / "docs/audit.md").unlink()
    again = target(Workspace(space.root))  # as the next process sees the workspace
    again.prepare()
    assert sorted(embedded) == sorted(
        ["# Deploy\n\nBlue-green switch of the zeppelin fleet.", "# Refunds\n\nMoney goes back to the card within five days."]
    )
    assert ask(again, "zeppelin")[0] == "docs/deploy.md" and "docs/audit.md" not in ask(again, "audit log")
    folder = index_folder(cache)
    assert [len(list(folder.glob(f"{name}-*.npy"))) for name in ("chunks", "vectors", "scales", "terms")] == [1, 1, 1, 1]
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert [entry[0] for entry in meta["files"]] == ["docs/deploy.md", "docs/rate-limits.md", "docs/refunds.md"]


def damage(folder: Path, how: str) -> None:
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    vectors = folder / meta["arrays"]["vectors"]
    if how == "vectors-swapped":
        # A well-formed array of the right shape, whose rows are another file's: it would answer wrongly.
        array = numpy.load(vectors)
        numpy.save(vectors, numpy.ascontiguousarray(array[::-1]))
    elif how == "vectors-cut-short":
        vectors.write_bytes(vectors.read_bytes()[:200])
    elif how == "vectors-missing":
        vectors.unlink()
    elif how in ("codes-out-of-range", "scales-negative", "terms-out-of-range"):
        # Arrays of the right shape and type whose digests meta.json vouches for, holding values
        # a build never writes: a code past the range that keeps dot products exact, a negative
        # scale, a term past the model's tokens.
        name = {"codes-out-of-range": "vectors", "scales-negative": "scales", "terms-out-of-range": "terms"}[how]
        path = folder / meta["arrays"][name]
        array = numpy.load(path)
        array.flat[0] = {"vectors": -128, "scales": -1.0, "terms": 65000}[name]
        numpy.save(path, array)
        meta["digests"][name] = hashlib.sha256(path.read_bytes()).hexdigest()
        meta_path.write_text(json.dumps(meta), encoding="utf-8")
    elif how == "meta-garbage":
        meta_path.write_bytes(b"\x00not json{")
    elif how == "meta-other-key":
        meta["key"]["chunking"] = {"unit": "file"}
        meta_path.write_text(json.dumps(meta), encoding="utf-8")
    elif how == "terms-missing":
        # The index of a model without terms, read by one that gives them: its chunks cannot be reranked.
        del meta["arrays"]["terms"]
        meta_path.write_text(json.dumps(meta), encoding="utf-8")
    elif how == "meta-rows-lie":
        meta["files"][0][5] += 1
        meta["rows"] += 1
        meta_path.write_text(json.dumps(meta), encoding="utf-8")


@pytest.mark.parametrize(
    "how",
    [
        "vectors-swapped",
        "vectors-cut-short",
        "vectors-missing",
        "codes-out-of-range",
        "scales-negative",
        "terms-out-of-range",
        "terms-missing",
        "meta-garbage",
        "meta-other-key",
        "meta-rows-lie",
    ],
)
def test_a_damaged_cache_is_rebuilt_never_trusted(tmp_path: Path, cache: Path, embedded: list[str], how: str) -> None:
    """Whatever is wrong with the cached index, the next target embeds every chunk again, answers as a fresh
    build does, says once that it rebuilt the index, and writes a sound one back."""
    space = workspace(tmp_path / "ws")
    age(space)
    fresh = target(space)
    fresh.prepare()
    answer = ask(fresh)
    damage(index_folder(cache), how)
    embedded.clear()
    rebuilt = target(space)
    rebuilt.prepare()
    assert len(embedded) == 3
    assert ask(rebuilt) == answer
    (note,) = rebuilt.take_notes()
    assert "the index cache was damaged" in note and "is built again" in note
    embedded.clear()
    target(space).prepare()
    assert embedded == []  # what it wrote back is read as it is


def test_a_file_changed_in_the_moment_it_was_indexed_is_read_again(tmp_path: Path, cache: Path, embedded: list[str]) -> None:
    """A file whose size and modification time are those indexed, but which was modified as the index was
    built (a filesystem keeping whole seconds), is hashed again, and its new text indexed."""
    space = workspace(tmp_path / "ws")
    target(space).prepare()
    path = space.root / "docs/deploy.md"
    stat = path.stat()
    text = path.read_text(encoding="utf-8")
    changed = text.replace("readiness probe", "zeppelin moored")
    assert len(changed) == len(text)
    path.write_text(changed, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same size and time as indexed
    embedded.clear()
    again = target(space)
    again.prepare()
    assert embedded == [changed.rstrip("\n")]
    assert ask(again, "zeppelin moored")[0] == "docs/deploy.md"


def test_recent_files_found_unchanged_are_trusted_from_then_on(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written in the moments before the index was built are read again by the next target (they
    may have changed within the same tick of the clock); found unchanged, the cache records when, and
    the target after that reads none of them."""
    from rag_lsp.core.search.index import builder as index_builder

    space = workspace(tmp_path / "ws")  # written just now: too recent to trust by size and time
    target(space).prepare()
    read: list[str] = []
    original = index_builder.FileReader.read
    monkeypatch.setattr(index_builder.FileReader, "read", lambda self, relative: read.append(relative) or original(self, relative))
    # Later starts, ten seconds on.
    now = index_builder.time.time_ns()
    monkeypatch.setattr(index_builder.time, "time_ns", lambda: now + 10_000_000_000)
    target(space).prepare()
    assert sorted(read) == sorted(DOCS)
    read.clear()
    later = target(space)
    later.prepare()
    assert read == []
    assert ask(later)[0] == "docs/rate-limits.md"


def test_how_recent_a_file_may_be_and_be_trusted_follows_its_file_systems_granularity(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose time has a fraction of a second (a file system keeping times to the clock's tick)
    is trusted by its size and time once it is a tenth of a second older than the index; a time to the
    whole second (a file system that may keep them to two seconds) must be two seconds older."""
    from rag_lsp.core.search.index import builder as index_builder

    space = workspace(tmp_path / "ws")
    built = index_builder.time.time_ns()
    monkeypatch.setattr(index_builder.time, "time_ns", lambda: built)
    second = built // 1_000_000_000 * 1_000_000_000

    def fine(ns: int) -> int:
        return ns if ns % 1_000_000_000 else ns - 1

    times = {
        "docs/rate-limits.md": fine(built - 500_000_000),  # to the tick, half a second before: trusted
        "docs/deploy.md": second - 1_000_000_000,  # to the second, within two seconds: read again
        "docs/audit.md": fine(built - 50_000_000),  # to the tick, 50 ms before: read again
    }
    for relative, mtime in times.items():
        os.utime(space.root / relative, ns=(mtime, mtime))
    target(space).prepare()
    read: list[str] = []
    original = index_builder.FileReader.read
    monkeypatch.setattr(index_builder.FileReader, "read", lambda self, relative: read.append(relative) or original(self, relative))
    target(space).prepare()
    assert sorted(read) == ["docs/audit.md", "docs/deploy.md"]


def test_a_cancelled_build_stops_and_writes_nothing(tmp_path: Path, cache: Path) -> None:
    """Cancelling the run while the index is built stops the build (Cancelled) and leaves no cache behind."""
    space = workspace(tmp_path / "ws")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        target(space).prepare(cancel=cancel)
    assert not (cache / f"index-v{FORMAT}").exists() or not any((cache / f"index-v{FORMAT}").rglob("meta.json"))


def builder_of(root: Path, embed) -> IndexBuilder:
    """A builder of 10-line chunks that embeds with ``embed`` (no cache)."""
    return IndexBuilder(root, Chunking("lines", 10, 2), 1 << 20, embed=embed, dim=4)


def test_a_build_reports_its_progress_in_order_up_to_every_file(tmp_path: Path) -> None:
    """The files done are reported in increasing order, ending with every file; each chunk gets the
    vector of its own text."""
    files = {f"docs/{number:03}.md": f"# Note {number}\n" + "words\n" * (number % 30) for number in range(300)}
    write_files(tmp_path, files)

    def embed(texts: list[str]) -> numpy.ndarray:
        vectors = numpy.zeros((len(texts), 4), dtype=numpy.float32)
        vectors[:, 0] = [len(text) for text in texts]
        vectors[:, 1] = 10.0
        return vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)  # unit vectors, as a model's

    reported: list[tuple[int, int]] = []
    index = builder_of(tmp_path, embed).refresh(sorted(files), lambda done, total: reported.append((done, total))).index
    assert reported[-1] == (300, 300)
    assert [done for done, _ in reported] == sorted({done for done, _ in reported})
    assert index.size == sum(entry.rows for entry in index.files) > 300
    texts = {
        (entry.path, first): "\n".join(files[entry.path].splitlines()[first - 1 : last])
        for entry in index.files
        for first, last in index.lines[entry.first_row : entry.first_row + entry.rows].tolist()
    }
    decoded = index.vectors.decoded()
    assert numpy.allclose(decoded, embed(list(texts.values())), atol=0.01)


def test_an_embedding_that_fails_fails_the_build(tmp_path: Path) -> None:
    """An error raised while a batch is embedded is raised by the build, which keeps no index."""
    write_files(tmp_path, {f"docs/{number:03}.md": "line\n" * 40 for number in range(100)})
    calls = []

    def embed(texts: list[str]) -> numpy.ndarray:
        calls.append(len(texts))
        if sum(calls) > 200:  # a batch past the first 200 chunks
            raise RuntimeError("the model broke")
        return numpy.ones((len(texts), 4), dtype=numpy.float32)

    builder = builder_of(tmp_path, embed)
    with pytest.raises(RuntimeError, match="the model broke"):
        builder.refresh(sorted(f"docs/{number:03}.md" for number in range(100)))
    assert builder.index is None


@pytest.mark.parametrize("size", [0, 1, 99, 100, 101, 250])
@pytest.mark.parametrize("grew", [False, True])
def test_a_corpus_file_is_read_whole_up_to_the_limit_and_refused_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, grew: bool
) -> None:
    """A file of at most max_bytes is read whole (also when it grew after its size was looked at); a
    larger one is refused (no text to index)."""
    from rag_lsp.core.search.index import builder as index_builder

    (tmp_path / "note.txt").write_bytes(b"x" * size)
    if grew:  # its size looked at while it was shorter
        monkeypatch.setattr(index_builder.os, "fstat", lambda fd: os.stat_result((0, 0, 0, 0, 0, 0, size // 2, 0, 0, 0)))
    data, text = index_builder.FileReader(tmp_path, 100).read("note.txt")
    if size <= 100:
        assert data == b"x" * size and text == "x" * size
    else:
        assert text == "" and len(data) == 101
