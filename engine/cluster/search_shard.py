"""A shard searcher: the long-lived holder of some repositories' indexes on one node.

A Ray actor (the router makes it one with ``ray.remote``; this module does not import Ray)
that copies each repository's published generation from the shared path to its node's disk
(search_copies.py), opens it the way the CLI does (``open_index``) but without the embedding
model (``OpenOptions.query_vectors``: the router embeds each query once and sends the
vector), and answers a ``ShardRequest`` for some of its repositories: it searches them one
after another and merges them as local federation does (search_merge.py), so a compound
shard (grouping.py: one actor for a group of repositories) sends one list of ``limit``
results, which the router's merge turns into exactly the local federated answer.

Newer generations: at most every ``refresh_s`` a query reads each shared CURRENT (a few
bytes); a changed one is copied and opened on a background thread while the old generation
keeps answering, then swapped in. The old one is closed a grace period later (a search may
still be using it) and its local copy removed.
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.cluster.search_copies import copy_current, node_home, remove_copy, shared_pointer
from engine.cluster.search_merge import shard_merge
from engine.cluster.search_wire import (
    PackedResponse,
    PackedResult,
    pack_response,
    pack_results,
    unpack_response,
    unpack_results,
)
from engine.errors import EngineError
from engine.index.home import Home
from engine.index.opening import OpenIndex, open_index
from engine.search.ranking.options import DEFAULT_RANKING, RankingOptions
from engine.signal import OpenOptions, SignalPlugin
from engine.types import VECTOR, Filters, QueryVector, Result, SearchResponse

PluginsFactory = Callable[[], Mapping[str, SignalPlugin]]
"""``signals.registry.plugins`` (or a test's fake): a module-level function, which Ray
pickles by reference, so the actor builds the plugins in its own process."""

REFRESH_S = 2.0  # how often a query looks for a newer shared generation
RETIRE_GRACE_S = 10.0  # how long a swapped-out generation stays open for searches in flight


@dataclass(frozen=True, slots=True)
class ShardRequest:
    """One query for some of a shard's repositories; ``text`` is already ``clean_query``-ed
    and ``vectors`` were embedded from it."""

    repos: tuple[str, ...]
    text: str
    limit: int
    vectors: tuple[QueryVector, ...] = ()
    signals: tuple[str, ...] | None = None
    filters: Filters = field(default_factory=Filters)
    ranking: RankingOptions = DEFAULT_RANKING
    # Send each signal's ranked hits back, and each result's contributions and ranking
    # adjustments (for --explain). Without, a run keeps its signal, latency, error and tier
    # but no hits, and a result no explanation: ~150 hits per repository were most of what
    # the router unpickled (measured with cProfile: 16 shards, ~0.7 ms per answer), and a
    # result's explanation is five more dataclasses to pickle and unpickle.
    hits: bool = False
    # The query asks more than one repository (of this shard or others): low-confidence
    # answers are scaled as local federation scales them. False: one repository, as it is.
    federated: bool = False


def pack_request(request: ShardRequest) -> bytes:
    """The request pickled once, for every shard it goes to (Ray would pickle it per call)."""
    return pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)


@dataclass(frozen=True, slots=True)
class ShardAnswer:
    """As sent: answers and results as tuples (search_wire.py); ``headers`` and ``results``
    build them again."""

    # By repository, without results (they are in ``packed_results``); absent when it could
    # not answer.
    packed_responses: dict[str, PackedResponse]
    failures: dict[str, str]  # repository -> why it did not answer
    models: dict[str, dict[str, Any]]  # repository -> its vector model meta, as now open
    search_ms: float  # time spent inside the shard, for the router's overhead figure
    # The answering repositories' results merged as federation merges them, the best
    # ``limit`` (search_merge.shard_merge).
    packed_results: list[PackedResult] = field(default_factory=list)

    @property
    def responses(self) -> dict[str, SearchResponse]:
        return {repo: unpack_response(p) for repo, p in self.packed_responses.items()}

    @property
    def results(self) -> list[Result]:
        return unpack_results(self.packed_results)


@dataclass
class _Open:
    index: OpenIndex
    generation: str
    size_bytes: int


def vector_model(index: OpenIndex) -> dict[str, Any]:
    """The model meta of a generation's vector signal ({} when it has none ready)."""
    state = index.manifest.signal(VECTOR)
    model = state.meta.get("model") if state.ready else None
    return dict(model) if isinstance(model, Mapping) else {}


class ShardSearcher:
    """Serves ``repos`` from the shared index home ``shared_home`` on this node."""

    def __init__(
        self,
        shared_home: str,
        repos: Sequence[str],
        plugins: PluginsFactory,
        *,
        disk: str | None = None,
        refresh_s: float = REFRESH_S,
    ) -> None:
        # Nothing heavy here: the router creates the actor, then calls ``load`` and routes
        # queries to it only once that returned (the handover).
        self._shared = Home(Path(shared_home))
        self._repos = list(dict.fromkeys(repos))
        self._plugins_factory = plugins
        self._plugins: Mapping[str, SignalPlugin] | None = None
        self._disk = disk
        self._local: Home | None = None
        self._refresh_s = refresh_s
        self._open: dict[str, _Open] = {}
        self._failures: dict[str, str] = {}
        self._lock = threading.Lock()
        self._checked_at = 0.0
        self._loading: set[str] = set()
        self._retired: list[tuple[float, str, _Open]] = []

    # -- loading ---------------------------------------------------------------------------

    def load(self, repos: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
        """Serve ``repos`` too, then copy and open every repository; repository -> its vector
        model meta. A repository that cannot be opened is left out (``failures`` says why)
        and tried again on the next refresh. A router that finds this actor already running
        (named, detached) gives the repositories it needs of it: another router may have
        started it for fewer."""
        with self._lock:
            self._repos += [r for r in dict.fromkeys(repos) if r not in self._repos]
        if self._plugins is None:
            self._plugins = self._plugins_factory()
            self._local = node_home(self._disk)
        with self._lock:
            serving = list(self._repos)
        for slug in serving:  # again (a router adopting this actor): only what moved
            with self._lock:
                opened = self._open.get(slug)
            if opened is None or opened.generation != shared_pointer(self._shared, slug):
                self._load_one(slug)
        self._checked_at = time.monotonic()
        with self._lock:
            return {slug: vector_model(o.index) for slug, o in self._open.items()}

    def _load_one(self, slug: str) -> None:
        assert self._local is not None and self._plugins is not None
        try:
            copy = copy_current(self._shared, self._local, slug)
            index = open_index(
                self._local,
                slug,
                self._plugins,
                OpenOptions(home=self._local.root, query_vectors=True),
            )
        except EngineError as exc:
            with self._lock:
                if slug not in self._open:
                    self._failures[slug] = str(exc)
            return
        with self._lock:
            previous = self._open.get(slug)
            self._open[slug] = _Open(index, copy.generation, copy.size_bytes)
            self._failures.pop(slug, None)
            if previous is not None:
                self._retired.append((time.monotonic(), slug, previous))

    def refresh(self, *, wait: bool = False) -> None:
        """Start loading every repository whose shared CURRENT moved (or that failed), on a
        background thread; with ``wait``, load on this thread instead (tests)."""
        self._checked_at = time.monotonic()
        self._close_retired()
        with self._lock:
            stale = [
                slug
                for slug in self._repos
                if slug not in self._loading
                and (
                    slug not in self._open
                    or shared_pointer(self._shared, slug) != self._open[slug].generation
                )
            ]
            self._loading.update(stale)
        for slug in stale:
            if wait:
                self._load_and_release(slug)
            else:
                threading.Thread(target=self._load_and_release, args=(slug,), daemon=True).start()

    def _load_and_release(self, slug: str) -> None:
        try:
            self._load_one(slug)
        finally:
            with self._lock:
                self._loading.discard(slug)

    def _close_retired(self, *, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            due = [r for r in self._retired if now - r[0] >= RETIRE_GRACE_S]
            self._retired = [r for r in self._retired if now - r[0] < RETIRE_GRACE_S]
        for _, slug, retired in due:
            retired.index.close()
            if self._local is not None:
                remove_copy(self._local, slug, retired.generation)

    # -- answering -------------------------------------------------------------------------

    def search(
        self, request: ShardRequest | bytes, repos: Sequence[str] | None = None
    ) -> ShardAnswer:
        """``request``: as is, or ``pack_request``-ed (the router's one pickling for every
        shard: it and the shards are one trust domain, as Ray's own pickled calls are);
        ``repos``: which of its repositories to search here."""
        start = time.perf_counter()
        if isinstance(request, bytes):
            request = pickle.loads(request)
            assert isinstance(request, ShardRequest)
        if repos is not None:
            request = replace(request, repos=tuple(repos))
        if time.monotonic() - self._checked_at >= self._refresh_s:
            self.refresh()
        responses: dict[str, SearchResponse] = {}
        failures: dict[str, str] = {}
        models: dict[str, dict[str, Any]] = {}
        for slug in request.repos:  # one after another: a group shares one core
            with self._lock:
                opened = self._open.get(slug)
                failure = self._failures.get(slug, "")
            if opened is None:
                failures[slug] = failure or f"{slug} is not served by this shard"
                continue
            try:
                response = opened.index.searcher.search(
                    request.text,
                    limit=request.limit,
                    signals=request.signals,
                    filters=request.filters,
                    ranking=request.ranking,
                    vectors=request.vectors,
                )
            except EngineError as exc:
                failures[slug] = str(exc)
            else:
                if not request.hits:
                    runs = [replace(run, hits=[]) for run in response.runs]
                    results = [
                        replace(r, contributions=(), adjustments=()) for r in response.results
                    ]
                    response = replace(response, runs=runs, results=results)
                responses[slug] = response
            models[slug] = vector_model(opened.index)
        results, headers = shard_merge(responses, request.limit, federated=request.federated)
        packed = {repo: pack_response(header) for repo, header in headers.items()}
        elapsed_ms = (time.perf_counter() - start) * 1000
        return ShardAnswer(packed, failures, models, elapsed_ms, pack_results(results))

    # -- observing -------------------------------------------------------------------------

    def failures(self) -> dict[str, str]:
        """repository -> why it could not be opened (until it is)."""
        with self._lock:
            return dict(self._failures)

    def generations(self) -> dict[str, str]:
        """repository -> the generation it answers from now."""
        with self._lock:
            return {slug: o.generation for slug, o in self._open.items()}

    def memory(self) -> dict[str, int]:
        """This process's memory, and the size of the indexes it holds on disk, in bytes:
        ``rss`` (resident, shared libraries included), ``uss`` (pages only this process
        holds: what one more actor costs) and ``index_bytes``."""
        return {**process_memory(), "index_bytes": sum(o.size_bytes for o in self._open.values())}

    def node_disk(self) -> str:
        return str(self._local.root if self._local else "")

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        with self._lock:
            opened = [*self._open.values(), *(r[2] for r in self._retired)]
            self._open.clear()
            self._retired.clear()
        for o in opened:
            o.index.close()


def process_memory() -> dict[str, int]:
    """rss and uss of this process in bytes, from /proc (Linux; zeros elsewhere)."""
    values = {"rss": 0, "uss": 0}
    try:
        text = Path("/proc/self/smaps_rollup").read_text()
    except OSError:
        return values
    fields: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == "kB":
            fields[parts[0].rstrip(":")] = int(parts[1]) * 1024
    values["rss"] = fields.get("Rss", 0)
    values["uss"] = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return values
