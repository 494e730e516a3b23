"""The reference embedder: sentence-transformers on torch, used to export and verify ONNX.

Importing sentence-transformers costs ~4.5 s and it encodes ~25 chunks/s here, so the index
and query paths run the ONNX export instead (see onnx_embedder.py); this module stays the
ground truth those vectors are checked against, and it is only ever imported at index time.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from signals.vector.embedder import FloatMatrix, FloatVector, l2_normalise

# Set before transformers / huggingface_hub are imported: they read them once, at import.
_OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TQDM_DISABLE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
}


def force_offline() -> None:
    """Make sure nothing in this process ever tries to download weights or draw progress bars."""
    os.environ.update(_OFFLINE_ENV)


def load_sentence_transformer(path: str, *, eager_attention: bool = False) -> Any:
    """``eager_attention`` selects transformers' plain attention instead of torch SDPA: the
    graph it traces is one onnxruntime fuses into its Attention kernel (1.5x faster here)."""
    force_offline()
    kwargs: dict[str, Any] = {"attn_implementation": "eager"} if eager_attention else {}
    with warnings.catch_warnings():
        # ST warns about renamed methods and the missing 2_Normalize folder; none of it is
        # actionable for a user of the engine.
        warnings.simplefilter("ignore")
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(path, device="cpu", local_files_only=True, model_kwargs=kwargs)


class SentenceTransformerEmbedder:
    """Embeds with sentence-transformers itself; same ``model_id`` as the ONNX export."""

    def __init__(
        self, path: str, model_id: str, *, batch_size: int = 16, eager_attention: bool = False
    ) -> None:
        self._model = load_sentence_transformer(path, eager_attention=eager_attention)
        self._model_id = model_id
        self._batch_size = batch_size
        probe = self._encode(["dimension probe"])
        self._dim = int(probe.shape[1])

    @property
    def model(self) -> Any:
        """The SentenceTransformer object, for the ONNX exporter."""
        return self._model

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._encode(list(texts))

    def embed_query(self, text: str) -> FloatVector:
        row: FloatVector = self._encode([text])[0]
        return row

    def _encode(self, texts: list[str]) -> FloatMatrix:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            vectors = self._model.encode(
                texts,
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return l2_normalise(np.asarray(vectors, dtype=np.float32))
