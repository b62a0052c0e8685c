"""Did-you-mean among the files that share a folder or a name with a missing path."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz, process

from rag_lsp.core.workspace.pathindex import _NOT_ALNUM, PathIndex, _squashed

FOLDERS = ["services/auth/cache", "services/billing", "docs", "docs/guides/setup", "web/components/forms", "lib"]
WORDS = ["token", "store", "client", "retry", "policy", "ledger", "invoice", "router", "form", "guide"]


def tree(size: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    paths = {f"{rng.choice(FOLDERS)}/{'_'.join(rng.sample(WORDS, 2))}_{rng.randrange(500)}{rng.choice(['.py', '.md', '.ts'])}" for _ in range(size)}
    return sorted(paths)


def near_misses(path: str) -> list[str]:
    """The typos people make: a separator changed, a dot dropped, an `old/` folder, another
    extension, a letter dropped, a folder's case."""
    folder, _, name = path.rpartition("/")
    stem, _, extension = name.rpartition(".")
    return [
        f"{folder}/{name.replace('_', '-', 1)}",
        f"{folder}/{stem}{extension}",
        f"{folder}/old/{name}",
        f"{folder}/{stem}.{extension}x",
        f"{folder}/{stem[:2]}{stem[3:]}.{extension}",
        f"{folder.capitalize()}/{name}",
    ]


def full_scan(path: str, files: list[str]) -> str | None:
    best = process.extractOne(path, files, scorer=fuzz.ratio, score_cutoff=80)
    return best[0] if best is not None else None


def test_the_index_suggests_what_a_scan_of_every_file_suggests() -> None:
    """For each kind of near miss of real files, the closest file among the index's candidates is the
    closest file of the whole workspace, ties included."""
    files = tree(2000, seed=1)
    index = PathIndex(files)
    rng = random.Random(2)
    for path in rng.sample(files, 60):
        for miss in near_misses(path):
            assert index.closest(miss, 80) == full_scan(miss, files), miss


def test_of_files_equally_alike_the_one_listed_first_is_suggested() -> None:
    """Two files as alike to a missing path, one in its folder and one in the folder above (listed
    first, as a walk lists a folder's files before its subfolders'), suggest the one listed first."""
    files = ["docs/oldguide.md", "docs/old/gide.md"]
    assert fuzz.ratio("docs/old/guide.md", files[0]) == fuzz.ratio("docs/old/guide.md", files[1])
    assert PathIndex(files).closest("docs/old/guide.md", 80) == "docs/oldguide.md" == full_scan("docs/old/guide.md", files)
    assert PathIndex(files[::-1]).closest("docs/old/guide.md", 80) == "docs/old/gide.md"


def test_a_near_miss_is_compared_with_a_small_share_of_the_files() -> None:
    """Candidates are the files of the path's folder and those of its name, not the workspace."""
    files = tree(5000, seed=3) + [f"vendor/pkg{n}/module_{n}.py" for n in range(5000)]
    index = PathIndex(files)
    candidates = index.candidates("services/billing/ledger_store_12.pyi")
    assert 0 < len(candidates) < len(files) // 10
    assert all(path.startswith("services/") or path.rsplit("/", 1)[1].startswith("ledger_store_12") for path in candidates)


def test_a_path_with_nothing_near_gets_no_suggestion() -> None:
    """A path that shares no folder or name with a file, and is like none, is suggested nothing."""
    index = PathIndex(tree(500, seed=4))
    assert index.closest("zzz/qqq/nothing.txt", 80) is None


@settings(max_examples=500, deadline=None)
@given(name=st.text(st.sampled_from(list("aZ0_-. é\u00df\u0130\x00/")), max_size=10))
def test_a_name_reduces_alike_by_translation_and_by_search(name: str) -> None:
    """The translation that reduces ASCII names gives what the Unicode-aware search gives."""
    assert _squashed(name) == _NOT_ALNUM.sub("", name.lower())
