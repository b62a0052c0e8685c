"""The static embedding models of the builtin target's semantic search.

A static model is a table of one vector per token and a tokenizer: a text's
vector is the mean of its tokens' vectors, scaled to length 1, so cosine
similarity is a dot product. No GPU, no PyTorch, a few milliseconds a query.

* ``model: wordllama`` (the default) is WordLlama's ``l2_supercat`` model (256
  dimensions, 16 MB), whose two files rag-lsp ships in ``rag_lsp/model``, its
  token vectors weighted by rarity when loaded
  (:func:`.loading._weigh_by_rarity`). Its full 256 dimensions are used for
  texts' vectors: truncated to 128 or 64 (it was trained to allow that), it
  finds the right file among the first three for fewer paraphrased questions
  (``benchmarks/chunking.py``); matching a query's tokens one by one
  (:meth:`StaticModel.matching`) uses the first 128. The ``wordllama`` package
  is not used: its files are all rag-lsp reads, and it brings a download stack
  (pydantic, requests) that a model read offline never needs.
* ``model: <folder>`` is a model2vec static model in a folder of the workspace:
  ``config.json``, ``model.safetensors`` holding an ``embeddings`` tensor, and
  ``tokenizer.json``.

Texts become token ids in :mod:`.tokens`, and vectors (and each chunk's terms)
in :mod:`.model`; a query's tokens are matched with chunks' terms one by one in
:mod:`.matching`; a model's files are found and read in :mod:`.files`, and
loaded once per process in :mod:`.loading`.
"""

from ...workspace.modelfiles import WORDLLAMA
from .files import ModelError, ModelFiles, model2vec_files, read_tensor, wordllama_files
from .loading import load
from .matching import QueryTerms, TokenMatches
from .model import MATCH_DIMENSIONS, SMALL_INDEX, TERMS_PER_CHUNK, ChunkMatches, StaticModel
from .tokens import TokenIds, TokenLists

__all__ = [
    "MATCH_DIMENSIONS",
    "SMALL_INDEX",
    "TERMS_PER_CHUNK",
    "WORDLLAMA",
    "ChunkMatches",
    "ModelError",
    "ModelFiles",
    "QueryTerms",
    "StaticModel",
    "TokenIds",
    "TokenLists",
    "TokenMatches",
    "load",
    "model2vec_files",
    "read_tensor",
    "wordllama_files",
]
