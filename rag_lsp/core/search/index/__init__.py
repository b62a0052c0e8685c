"""The builtin target's index: the chunks of the corpus files and their vectors,
kept in memory and in the user's cache folder between processes.

What an index holds is in :mod:`.chunks`; :mod:`.builder` keeps one up to date,
file by file, and :mod:`.cache` keeps it between processes. The vector of a
chunk is put in the context of its file by :mod:`.context`, and a corpus given
as a JSON Lines file of documents is read by :mod:`.documents`.
"""

from .builder import BuildCancelled, IndexBuilder, Outcome
from .cache import FORMAT, CacheDirError, IndexCache
from .chunks import ChunkIndex, FileEntry
from .context import VECTORS, contextual, path_words

__all__ = [
    "FORMAT",
    "VECTORS",
    "BuildCancelled",
    "CacheDirError",
    "ChunkIndex",
    "FileEntry",
    "IndexBuilder",
    "IndexCache",
    "Outcome",
    "contextual",
    "path_words",
]
