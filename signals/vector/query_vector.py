"""Embed a query once for many indexes: the ``QueryVector`` a cluster's router sends.

The router holds one embedder per model (tier and precision included) in its own process and
embeds each query with every model the asked indexes were embedded with; the shards then
search with the vector (signals/vector/signal.py) and never load a model.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.types import QueryVector


def model_of(vector_meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """The model meta inside a vector signal's meta (what ``embed_query`` takes)."""
    model = vector_meta.get("model")
    return model if isinstance(model, Mapping) else {}


def embed_query(model: Mapping[str, Any], text: str, home: Path) -> QueryVector:
    """``text`` (already ``clean_query``-ed, as the searcher would) embedded by the model an
    index's meta names, loaded from ``home``'s models once per process (loader.py)."""
    import numpy as np

    from signals.vector.loader import load_query_embedder

    embedder = load_query_embedder(model, home)
    vector = np.asarray(embedder.embed_query(text), dtype="<f4")
    return QueryVector(str(model["model_id"]), vector.tobytes())
