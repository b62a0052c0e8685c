"""The builtin target's search engine: chunks, the keyword index, the static embedding
model, ranking and fusion, and the cached index. The checks never import it.
"""
