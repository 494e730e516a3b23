"""The fast tier's embedder: a model2vec static model, the mean of its word pieces' rows.

No torch and no ONNX session: loading takes ~0.3 s and encoding runs at thousands of chunks
per second on one core (shared/STACK.md), so a new index gets its vectors in seconds. Its
vectors are not MiniLM's (another space, 256 dimensions), so the two never share an index
or a cache.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.errors import SignalUnavailable
from signals.vector.embedder import FloatMatrix, FloatVector, l2_normalise
from signals.vector.static_model import StaticManifest

# Word pieces read per document. The mean of a static model's rows does not suffer from
# long inputs as attention does; 512 is the distilled model's own setting.
DOCUMENT_PIECES = 512


class StaticEmbedder:
    def __init__(self, manifest: StaticManifest, *, document_pieces: int = DOCUMENT_PIECES):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from model2vec import StaticModel
        except ImportError as err:
            raise SignalUnavailable(
                f"the vector index's fast tier needs model2vec ({err}): pip install model2vec, "
                "or run `engine reindex SLUG --vectors full`"
            ) from err

        self._model: Any = StaticModel.from_pretrained(manifest.directory, force_download=False)
        self._manifest = manifest
        self._document_pieces = document_pieces
        self._dim = int(self._model.embedding.shape[1])
        self._lock = threading.Lock()  # the Rust tokenizer is not re-entrant across threads

    @property
    def model_id(self) -> str:
        return f"{self._manifest.key}-p{self._document_pieces}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._encode(list(texts), self._document_pieces)

    def embed_query(self, text: str) -> FloatVector:
        row: FloatVector = self._encode([text], self._document_pieces)[0]
        return row

    def _encode(self, texts: list[str], pieces: int) -> FloatMatrix:
        with self._lock:
            matrix = self._model.encode(
                texts, max_length=pieces, use_multiprocessing=False, batch_size=1024
            )
        return l2_normalise(np.asarray(matrix, dtype=np.float32))
