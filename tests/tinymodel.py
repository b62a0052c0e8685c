"""A tiny model2vec static model, written by the tests themselves.

Eight words in two groups: vehicle words point along one axis, fruit words along
another, so "automobile" is near a text about cars and far from one about
bananas, while sharing no word with it. The safetensors file is written with
numpy (a little-endian length, a JSON header, the raw float32 table) and the
tokenizer with ``tokenizers`` (a word-level vocabulary, lower-cased, split on
whitespace and punctuation).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy

WORDS = {
    "[UNK]": (0.0, 0.0, 0.0, 0.0),
    "car": (1.0, 0.1, 0.0, 0.0),
    "automobile": (1.0, 0.0, 0.1, 0.0),
    "vehicle": (0.9, 0.0, 0.0, 0.1),
    "wheel": (0.8, 0.2, 0.0, 0.0),
    "banana": (0.0, 1.0, 0.0, 0.1),
    "fruit": (0.1, 0.9, 0.0, 0.0),
    "apple": (0.0, 1.0, 0.1, 0.0),
}


def write_safetensors(path: Path, tensors: dict[str, numpy.ndarray]) -> None:
    header: dict = {}
    blobs = []
    offset = 0
    for name, array in tensors.items():
        data = numpy.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    path.write_bytes(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def write_model(folder: Path, words: dict[str, tuple[float, ...]] = WORDS) -> Path:
    """A model2vec model folder: config.json, model.safetensors (``embeddings``), tokenizer.json."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {word: index for index, word in enumerate(words)}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    table = numpy.array(list(words.values()), dtype=numpy.float32)
    write_safetensors(folder / "model.safetensors", {"embeddings": table})
    (folder / "config.json").write_text(json.dumps({"model_type": "model2vec", "normalize": True}), encoding="utf-8")
    return folder
