"""``engine query --cluster`` and ``engine serve --cluster``: search through a Ray cluster.

Imported only when ``--cluster`` is given, so local commands never import Ray. The wiring
the cluster's router needs from the signals (the registry's plugins, which the shard actors
build in their own processes, and the vector signal's query embedder, which runs here) is
made here, the composition root, and handed to engine.cluster.search_router.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import UsageError
from engine.index.home import Home
from engine.search.ranking.options import RankingOptions
from engine.types import Filters, SearchResponse

if TYPE_CHECKING:
    from engine.cluster.search_router import Router

# A first query waits for the shards to copy and open their indexes; later ones find them
# loaded (the actors are detached and outlive this process).
START_WAIT_S = 120.0


def shared_store(store: Path | None, home: Home) -> Path:
    """The shared index home the shards copy from: ``--cluster-store``, else $ENGINE_HOME."""
    root = (store or home.root).resolve()
    if not (root / "repos").is_dir():
        raise UsageError(
            f"{root} holds no indexes (no repos/ folder): give --cluster-store, the shared "
            "folder `engine index --cluster` published to"
        )
    return root


def open_router(
    address: str, store: Path, repos: Sequence[str] | None, deadline_ms: float
) -> Router:
    """A started router over ``repos`` of ``store`` (every repository when None)."""
    from engine.cluster.connect import connect

    connect(address)  # probes the head first: an unreachable one is one sentence
    from engine.cluster.search_router import Router
    from signals import registry
    from signals.vector.query_vector import embed_query

    # registry.plugins is a module-level function: Ray pickles it by reference and each
    # shard actor calls it in its own process.
    router = Router(
        store,
        registry.plugins,
        partial(embed_query, home=store),
        repos=repos,
        deadline_ms=deadline_ms,
    )
    router.start(wait_s=START_WAIT_S, owners=False)
    return router


def query_on_cluster(
    address: str,
    store: Path,
    slugs: Sequence[str],
    text: str,
    *,
    limit: int,
    signals: Sequence[str] | None,
    filters: Filters,
    ranking: RankingOptions,
    deadline_ms: float,
    explain: bool = False,
) -> SearchResponse:
    router = open_router(address, store, slugs, deadline_ms)
    try:
        return router.search(
            slugs,
            text,
            limit=limit,
            signals=signals,
            filters=filters,
            ranking=ranking,
            hits=explain,  # --explain counts each signal's hits
        )
    finally:
        router.close()  # the actors keep serving the next query


class ClusterSearcher:
    """semanticSearch's ``ClusterSearch`` for ``engine serve --cluster``: one router for the
    server's life, started on the first search (the MCP handshake must not wait for it)."""

    def __init__(self, address: str, store: Path, deadline_ms: float) -> None:
        self._address, self._store, self._deadline_ms = address, store, deadline_ms
        self._router: Router | None = None
        self._lock = threading.Lock()

    def __call__(
        self, repos: Sequence[str], text: str, limit: int, filters: Filters
    ) -> SearchResponse:
        with self._lock:
            if self._router is None:
                self._router = open_router(self._address, self._store, None, self._deadline_ms)
            router = self._router
        return router.search(repos, text, limit=limit, filters=filters)

    def close(self) -> None:
        """Stop this server's shard actors (they are detached and would keep serving)."""
        with self._lock:
            router, self._router = self._router, None
        if router is not None:
            router.close(stop_actors=True)


def cluster_search(address: str, store: Path, deadline_ms: float) -> ClusterSearcher:
    return ClusterSearcher(address, store, deadline_ms)
