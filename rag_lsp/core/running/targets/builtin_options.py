"""The builtin target's options, as its config writes them: the corpora (globs,
or a documents file), the retrieval, the model, the chunking; the files of the
model they name, and what names the index they make in the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...workspace.chunking import Chunking, ChunkingError
from ...workspace.modelfiles import files_outside
from ...reading.paths import normalize_relative
from ...workspace.suitefacts import TargetInfo
from ...workspace.workspace import Workspace
from .base import TargetError

SEMANTIC = "semantic"
KEYWORD = "keyword"
HYBRID = "hybrid"
RETRIEVALS = (SEMANTIC, KEYWORD, HYBRID)


@dataclass(frozen=True)
class BuiltinOptions:
    corpora: dict[str, list[str]]
    retrieval: str = SEMANTIC
    model: str = "wordllama"
    chunking: Chunking = field(default_factory=Chunking)
    # Corpus name -> the documents file it is (see builtin.py's docstring); such
    # a corpus is also in ``corpora``, its one "glob" the file's path.
    documents: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_config(cls, info: TargetInfo) -> BuiltinOptions:
        """The options of a builtin target; TargetError saying what is wrong with them."""
        builtin = info.config.get("builtin")
        options = builtin if isinstance(builtin, dict) else {}
        where = f"target {info.id!r}"
        configured = options.get("corpora")
        documents: dict[str, str] = {}
        if configured is None:
            corpora = {"code": ["**"]}
        elif isinstance(configured, dict):
            corpora = {}
            for name, value in configured.items():
                if isinstance(name, str) and isinstance(value, list) and all(isinstance(g, str) for g in value):
                    corpora[name] = list(value)
                    continue
                file = documents_file(value)
                if not isinstance(name, str) or file is None:
                    raise TargetError(
                        f"{where}: `builtin.corpora` must map corpus names to lists of globs, or to "
                        "`{documents: FILE}` (a workspace JSON Lines file of documents)"
                    )
                if not file:
                    raise TargetError(
                        f"{where}: corpus {name!r}: the documents file {value['documents']!r} is outside the workspace, "
                        "and is never read: name a file relative to the workspace root"
                    )
                corpora[name] = [file]
                documents[name] = file
        else:
            raise TargetError(f"{where}: `builtin.corpora` must map corpus names to lists of globs")
        retrieval = options.get("retrieval", SEMANTIC)
        if retrieval not in RETRIEVALS:
            raise TargetError(f"{where}: `builtin.retrieval` must be semantic, keyword or hybrid, not {retrieval!r}")
        model = options.get("model", "wordllama")
        if not isinstance(model, str) or not model.strip():
            raise TargetError(f"{where}: `builtin.model` must be `wordllama` or the path of a model2vec model folder")
        try:
            chunking = Chunking.from_config(options.get("chunking"))
        except ChunkingError as error:
            raise TargetError(f"{where}: {error}") from None
        return cls(corpora, retrieval, model, chunking, documents)

    def cache_key(self, workspace: Workspace, model_identity: str) -> dict[str, Any]:
        """What names the index of a target with these options over ``workspace``
        in the cache (see :mod:`.index`)."""
        from ...search.index import VECTORS

        return {
            "root": workspace.root.as_posix(),
            "corpora": {
                name: {"documents": self.documents[name]} if name in self.documents else sorted(globs)
                for name, globs in sorted(self.corpora.items())
            },
            "chunking": self.chunking.as_config(),
            "model": model_identity,
            "vectors": VECTORS,
            "max_file_bytes": workspace.settings.max_file_bytes,
        }

    def model_files(self, workspace: Workspace) -> Any:
        """The files of the model the options name; ModelError when there are none."""
        from ...search import embedding

        name = self.model
        if name == embedding.WORDLLAMA:
            return embedding.wordllama_files()
        folder = _model_folder(workspace, name)
        files = embedding.model2vec_files(folder, name)
        linked = files_outside(folder, workspace.contains)
        if linked:
            raise embedding.ModelError(
                f"{name}/{linked[0]} is a link out of the workspace (the builtin target reads only workspace files)"
            )
        return files

    def model_stamp(self, workspace: Workspace) -> str:
        """What identifies the model's files as they are now (their paths, sizes and
        times), or why there are none: when it changes, the model is loaded again."""
        if self.retrieval == KEYWORD:
            return ""
        from ...search import embedding

        try:
            return self.model_files(workspace).identity
        except embedding.ModelError as error:
            return f"unavailable: {error.message}"
        except OSError as error:
            return f"unavailable: {error}"


def documents_file(value: Any) -> str | None:
    """The workspace-relative path a corpus written ``{documents: FILE}`` names
    ("" when it leaves the workspace); None when it is not written so."""
    if not isinstance(value, dict) or set(value) != {"documents"} or not isinstance(value["documents"], str):
        return None
    return normalize_relative(value["documents"]) or ""


def _model_folder(workspace: Workspace, name: str) -> Any:
    from ...search import embedding

    folder = workspace.absolute(name)
    if not workspace.contains(folder):
        raise embedding.ModelError(f"{name} is not a folder of the workspace (the builtin target reads only workspace files)")
    return folder
