"""The vector signal at query time: embed the query, search FAISS, best part per chunk.

A query may carry its vector already (``Query.vectors``, one per embedder, made by a
cluster's router): the signal then uses the one made by its index's model (the meta's
``model_id``, which names tier and precision too) and embeds nothing. Opened for such queries
only (``OpenOptions.query_vectors``) it holds no model at all, and a query without a vector
for its model is refused with the reason; opened as usual, it embeds the text instead.

Scores are cosines in [-1, 1]. When the query has filters, candidates are filtered here
(with the generation's chunk table) and the search widens until ``limit`` survive or the
index is exhausted, so a narrow filter still gets a full list; the searcher filters again.
An approximate (``ivf``) index is exhausted sooner: only the lists a query probes hold
candidates (about 1/16 of the index at 1M vectors), so a very narrow filter may find fewer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from engine.errors import SignalUnavailable
from engine.signal import OpenOptions
from engine.types import VECTOR, Filters, Hit, Query, QueryVector
from signals.vector.chunk_table import ChunkTable
from signals.vector.embedder import Embedder, FloatVector
from signals.vector.faiss_index import VectorStore, chunk_ids_of
from signals.vector.files import unreadable
from signals.vector.loader import load_query_embedder, mismatch_warning
from signals.vector.meta import check_meta
from signals.vector.remote_spec import RemoteEmbedderError

# Candidates fetched per wanted hit: parts of one chunk collapse into one hit, and filters
# drop some. Flat search cost does not depend on k, nor does ivf's (it scans the same lists:
# 6.8 ms for k=10 and for k=40 at 1M vectors).
OVERFETCH = 4


class VectorSignal:
    """``warning`` may be given as a function: it is called once, on first read, because
    identifying the configured model can mean hashing its weights (once per home)."""

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder | None,
        directory: Path,
        warning: str | Callable[[], str] = "",
        *,
        tier: str = "full",
        model_id: str = "",
    ) -> None:
        self._tier = tier  # "fast" (the static model) or "full" (MiniLM): tiers.py
        self._store = store
        # None: opened for queries that bring their vectors (OpenOptions.query_vectors).
        self._embedder = embedder
        # The model that embedded the index: only a query vector made by it is used.
        self._model_id = model_id or (embedder.model_id if embedder is not None else "")
        self._directory = directory
        self._warning = warning
        self._table: ChunkTable | None = None
        self._lock = threading.Lock()
        self._failure = ""  # why the last query could not be embedded (a remote endpoint down)

    @property
    def name(self) -> str:
        return VECTOR

    @property
    def tier(self) -> str:
        return self._tier

    @property
    def model_id(self) -> str:
        """The embedder a query vector must come from (``QueryVector.embedder``)."""
        return self._model_id

    @property
    def warning(self) -> str:
        with self._lock:
            if callable(self._warning):
                self._warning = self._warning()
            return "; ".join(w for w in (self._warning, self._failure) if w)

    def search(self, query: Query, limit: int) -> list[Hit]:
        if limit <= 0 or not query.text.strip() or self._store.vector_count == 0:
            return []
        given = query.vector_for(self._model_id)
        try:
            vector = self._query_vector(query, given)
        except RemoteEmbedderError as err:
            # The index's embedder is remote and did not answer: this answer goes without the
            # vector signal, and says why, instead of failing.
            with self._lock:
                self._failure = f"vector signal left out of this answer: {err}"
            return []
        with self._lock:
            self._failure = ""
        filtered = _has_filters(query.filters)
        k = limit * OVERFETCH
        while True:
            ids, scores = self._store.search(vector, k)
            hits = _best_per_chunk(ids, scores)
            if filtered and hits:
                table = self._chunk_table()
                allowed = table.allowed([h.chunk_id or 0 for h in hits], query.filters)
                hits = [h for h, ok in zip(hits, allowed, strict=True) if ok]
            # Fewer than k back: an approximate index has no more candidates in the lists it
            # probes, and a wider k would only search them again.
            if len(hits) >= limit or k >= self._store.vector_count or len(ids) < k:
                return hits[:limit]
            k *= OVERFETCH

    def _query_vector(self, query: Query, given: QueryVector | None) -> FloatVector:
        if given is not None:
            import numpy as np

            if given.dim != self._store.dim:
                raise SignalUnavailable(
                    f"the query vector from {given.embedder} has {given.dim} dimensions but "
                    f"the index holds {self._store.dim}"
                )
            vector: FloatVector = np.frombuffer(given.data, dtype="<f4").astype(np.float32)
            return vector
        if self._embedder is None:
            brought = ", ".join(v.embedder for v in query.vectors) or "none"
            raise SignalUnavailable(
                f"this shard holds no embedding model and the query brought no vector from "
                f"{self._model_id}, the model the index was embedded with (it brought: "
                f"{brought}); the router must embed with that model"
            )
        return self._embedder.embed_query(query.text)

    def _chunk_table(self) -> ChunkTable:
        with self._lock:
            if self._table is None:
                self._table = ChunkTable.load(self._directory)
            return self._table


def _has_filters(filters: Filters) -> bool:
    return bool(filters.languages or filters.path_globs or filters.kinds)


def _best_per_chunk(ids: Any, scores: Any) -> list[Hit]:
    # FAISS returns best first, so a chunk's first occurrence is its best part.
    seen: set[int] = set()
    hits: list[Hit] = []
    for chunk_id, score in zip(chunk_ids_of(ids).tolist(), scores.tolist(), strict=True):
        if chunk_id not in seen:
            seen.add(chunk_id)
            hits.append(Hit(chunk_id=chunk_id, score=float(score)))
    return hits


def open_vector_signal(
    directory: Path, meta: Mapping[str, Any], options: OpenOptions, *, threads: int = 1
) -> VectorSignal:
    """Open a generation's vector folder; SignalUnavailable says what to do when it cannot."""
    check_meta(meta)
    model = meta["model"]
    if options.query_vectors:
        return _open_without_model(directory, meta)
    # The model session opens on another thread while this one imports FAISS and reads the
    # index: onnxruntime builds the session without holding the GIL, and a cold query
    # process spends most of its time in exactly these two steps.
    with ThreadPoolExecutor(1, thread_name_prefix="model") as pool:
        loading = pool.submit(
            load_query_embedder, model, options.home, threads=threads, prepack=not options.one_shot
        )
        try:
            store = VectorStore.load(directory)
        except (OSError, RuntimeError, ValueError) as err:
            raise unreadable(directory, err) from err
        embedder = loading.result()
    if store.dim != embedder.dim:
        raise SignalUnavailable(
            f"the vector index holds {store.dim}-dimensional vectors but its model gives "
            f"{embedder.dim}; run `engine index` again"
        )
    return VectorSignal(
        store,
        embedder,
        directory,
        partial(mismatch_warning, model, options.model, options.home),
        tier=str(meta.get("tier", "full")),
        model_id=str(model["model_id"]),
    )


def _open_without_model(directory: Path, meta: Mapping[str, Any]) -> VectorSignal:
    """For queries that bring their vectors: the index alone, no model loaded."""
    model = meta["model"]
    try:
        store = VectorStore.load(directory)
    except (OSError, RuntimeError, ValueError) as err:
        raise unreadable(directory, err) from err
    if store.dim != int(model.get("dim", store.dim)):
        raise SignalUnavailable(
            f"the vector index holds {store.dim}-dimensional vectors but its model gives "
            f"{model.get('dim')}; run `engine index` again"
        )
    return VectorSignal(
        store, None, directory, tier=str(meta.get("tier", "full")), model_id=str(model["model_id"])
    )
