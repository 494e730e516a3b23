"""The embedder interface of the vector signal and its deterministic fake.

An embedder turns texts into L2-normalised float32 vectors, so that an inner product is a
cosine. ``model_id`` names everything that decides the vectors (weights, sequence length):
two embedders with the same ``model_id`` must give the same vectors, which is what lets the
ONNX and the sentence-transformers paths share one embedding cache.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]
FloatVector = npt.NDArray[np.float32]


class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Identifies the vectors this embedder produces; the embedding cache is keyed by it."""
        ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        """float32 ``[len(texts), dim]``, each row L2-normalised, in the order of ``texts``."""
        ...

    def embed_query(self, text: str) -> FloatVector:
        """float32 ``[dim]``, L2-normalised."""
        ...


def l2_normalise(matrix: FloatMatrix) -> FloatMatrix:
    """Rows scaled to unit length; all-zero rows stay zero instead of becoming NaN."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    normalised: FloatMatrix = (matrix / norms).astype(np.float32, copy=False)
    return normalised


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


class HashingEmbedder:
    """A deterministic bag-of-words embedder for tests: no model, no files, stable ids.

    Each lower-cased word (identifiers are split into their camelCase/snake_case parts) is
    hashed with CRC-32, which unlike ``hash()`` is the same in every process, into one of
    ``dim`` buckets. Texts that share words therefore get similar vectors.
    ``embedded_texts`` counts every text passed to ``embed_documents``, so tests can assert
    that a cache spared the work.
    """

    def __init__(self, dim: int = 64, *, model_id: str = "") -> None:
        self._dim = dim
        # Tests that pose as a real model folder pass that folder's identity key.
        self._model_id = model_id or f"hashing-bow-{dim}"
        self.embedded_texts = 0
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        self.calls += 1
        self.embedded_texts += len(texts)
        matrix = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            self._fill(matrix[row], text)
        return l2_normalise(matrix)

    def embed_query(self, text: str) -> FloatVector:
        matrix = np.zeros((1, self._dim), dtype=np.float32)
        self._fill(matrix[0], text)
        row: FloatVector = l2_normalise(matrix)[0]
        return row

    def _fill(self, row: FloatVector, text: str) -> None:
        words = [w.lower() for w in _WORD.findall(text)]
        if not words:
            # An empty text still gets a unit vector, as the interface promises.
            row[0] = 1.0
            return
        for word in words:
            row[zlib.crc32(word.encode("utf-8")) % self._dim] += 1.0
