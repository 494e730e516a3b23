"""The version of the vector signal's folder layout and the settings an update must share.

A previous generation is reused (updated in place of re-embedding everything) only when all
of ``settings`` match what its meta recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from engine.errors import SignalUnavailable
from signals.vector.documents import DOC_FORMAT

VECTOR_FORMAT = 1  # files of this signal's folder; bump to force every index to rebuild


PRECISIONS: Final = ("fp32", "mixed", "int8")


@dataclass(frozen=True, slots=True)
class EmbedSettings:
    """How documents are embedded: the model's precision and the word pieces read per text.

    Both change the vectors, so both are recorded in the index and key the embedding cache.
    """

    precision: str  # one of PRECISIONS
    document_tokens: int  # at most the model's own sequence limit


def settings(
    model_id: str, max_parts: int, include_path: bool, document_tokens: int
) -> dict[str, Any]:
    return {
        "format": VECTOR_FORMAT,
        "doc_format": DOC_FORMAT,
        "doc_path": include_path,
        "model_id": model_id,
        "max_parts": max_parts,
        "document_tokens": document_tokens,
    }


def check_meta(meta: Mapping[str, Any]) -> None:
    """Raises SignalUnavailable unless ``meta`` is what this engine's builder records."""
    if meta.get("format") != VECTOR_FORMAT or not isinstance(meta.get("model"), Mapping):
        raise SignalUnavailable(
            "the vector index was written by another version of engine; run `engine index` again"
        )
