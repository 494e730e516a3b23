"""The version of the vector signal's folder layout and the settings an update must share.

A previous generation is reused (updated in place of re-embedding everything) only when all
of ``settings`` match what its meta recorded.
"""

from __future__ import annotations

from typing import Any

from signals.vector.documents import DOC_FORMAT

VECTOR_FORMAT = 1  # files of this signal's folder; bump to force every index to rebuild


def settings(model_id: str, max_parts: int, include_path: bool) -> dict[str, Any]:
    return {
        "format": VECTOR_FORMAT,
        "doc_format": DOC_FORMAT,
        "doc_path": include_path,
        "model_id": model_id,
        "max_parts": max_parts,
    }
