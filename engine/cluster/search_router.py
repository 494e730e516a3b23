"""The router of cluster search: embed once, fan out to shard actors, merge within a deadline.

The router lives in the process that answers (``engine query --cluster``, ``engine serve
--cluster``) and keeps the shard actors through its registry (search_registry.py: placement
and handover). A query:

1. is cleaned as the searcher cleans it, and embedded once per model the asked
   repositories' vector indexes were built with (``embed``: one local embedder per tier and
   precision, loaded once per process), so no shard holds a model;
2. goes to the shards serving the asked repositories, all at once: one call per shard, so
   one per group of repositories with compound shards (grouping.py), whatever their number;
3. waits until its deadline (default 500 ms from the start of the query): a shard that is
   late, dead or still loading does not fail the query; its repositories (every asked one of
   its group) are named in a warning, and the answer's ``coverage`` counts the repositories
   that answered out of those asked (what the user asked for, however they were grouped);
4. is merged as the local federation merges (each shard merged its own repositories with
   ``engine.search.federation.merge``; search_merge.py has why merging those lists gives the
   same answer), in the order the repositories were asked: the same answer a local ``engine
   query a,b`` gives.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.cluster.grouping import OWN_SHARD_CHUNKS
from engine.cluster.search_merge import router_merge
from engine.cluster.search_registry import NAMESPACE, NODES_EVERY_S, ShardRegistry, Slot
from engine.cluster.search_shard import (
    REFRESH_S,
    PluginsFactory,
    ShardAnswer,
    ShardRequest,
    pack_request,
)
from engine.errors import UsageError
from engine.search.ranking.options import DEFAULT_RANKING, RankingOptions
from engine.search.searcher import clean_query
from engine.types import Coverage, Filters, QueryVector, Result, SearchResponse

DEFAULT_DEADLINE_MS = 500.0

QueryEmbedder = Callable[[Mapping[str, Any], str], QueryVector]
"""embed(model meta, cleaned text) -> the query's vector from that model
(signals/vector/query_vector.py's ``embed_query`` with the home bound)."""


class Router(ShardRegistry):
    """The shard registry, and answering through it."""

    def __init__(
        self,
        shared_home: Path,
        plugins: PluginsFactory,
        embed: QueryEmbedder,
        *,
        repos: Sequence[str] | None = None,
        deadline_ms: float = DEFAULT_DEADLINE_MS,
        nodes_every_s: float = NODES_EVERY_S,
        refresh_s: float = REFRESH_S,
        namespace: str = NAMESPACE,
        compound: bool = True,
        groups: int | None = None,
        own_chunks: int = OWN_SHARD_CHUNKS,
    ) -> None:
        super().__init__(
            shared_home,
            plugins,
            repos=repos,
            nodes_every_s=nodes_every_s,
            refresh_s=refresh_s,
            namespace=namespace,
            compound=compound,
            groups=groups,
            own_chunks=own_chunks,
        )
        self.deadline_ms = deadline_ms
        self._embed = embed
        # Where the last query's time went, in ms (embed, wait, slowest_shard, total): for
        # the benchmark (eval/bench/cluster_search.py).
        self.last_timing: dict[str, float] = {}

    def search(
        self,
        repos: Sequence[str],
        text: str,
        *,
        limit: int = 10,
        signals: Sequence[str] | None = None,
        filters: Filters | None = None,
        ranking: RankingOptions | None = None,
        deadline_ms: float | None = None,
        hits: bool = False,
    ) -> SearchResponse:
        """``hits``: keep each signal's ranked hits in the answer's runs (for --explain);
        without, runs carry latency, error and tier only, which is cheaper to send."""
        start = time.monotonic()
        deadline_s = (self.deadline_ms if deadline_ms is None else deadline_ms) / 1000
        asked = list(dict.fromkeys(repos))
        unknown = [r for r in asked if r not in self.repos]
        if unknown:
            raise UsageError(
                f"not in the cluster's index home {self.shared.root}: {', '.join(unknown)}"
            )
        if limit < 1:
            raise UsageError("limit must be at least 1")
        clean = clean_query(text)
        if not clean.strip():
            raise UsageError("the query is empty — say what code you are looking for")
        if self.placement_due():
            self.rebalance()
        self.poll()
        missing: dict[str, str] = {}
        shards: dict[int, tuple[Slot, list[str]]] = {}
        for repo in asked:
            slot = self.serving(repo)
            if slot is None:
                missing[repo] = self.failure(repo) or "its shard is still loading"
            else:
                shards.setdefault(id(slot.actor), (slot, []))[1].append(repo)
        embed_start = time.monotonic()
        vectors = self._vectors(clean, shards.values())
        embed_ms = (time.monotonic() - embed_start) * 1000
        request = ShardRequest(
            tuple(r for _, rs in shards.values() for r in rs),
            clean,
            limit,
            vectors,
            tuple(signals) if signals is not None else None,
            filters or Filters(),
            ranking or DEFAULT_RANKING,
            hits,
            federated=len(asked) > 1,
        )
        pending = self._dispatch(request, shards.values())
        wait_start = time.monotonic()
        headers, results, slowest_ms = self._gather(
            pending, start + deadline_s, deadline_s, missing
        )
        wait_ms = (time.monotonic() - wait_start) * 1000
        for repo in asked:
            if repo not in headers and repo not in missing:
                missing[repo] = "its shard did not answer"
        merged = router_merge(asked, headers, results, limit, clean)
        answered = sum(1 for r in asked if r in headers)
        coverage = Coverage(answered, len(asked), tuple(r for r in asked if r in missing))
        warnings = list(merged.warnings)
        if missing:
            warnings.append(
                f"partial answer: {answered} of {len(asked)} repositories answered; not "
                "searched: " + "; ".join(f"{r} ({why})" for r, why in missing.items() if r)
            )
        self.last_timing = {
            "embed_ms": embed_ms,
            "wait_ms": wait_ms,
            "slowest_shard_ms": slowest_ms,
            "total_ms": (time.monotonic() - start) * 1000,
            "shards": float(len(shards)),
        }
        return replace(merged, query=clean, warnings=warnings, coverage=coverage)

    @staticmethod
    def _dispatch(
        request: ShardRequest, groups: Iterable[tuple[Slot, list[str]]]
    ) -> dict[Any, tuple[Slot, list[str]]]:
        """One call per shard, the request passed by value, pickled once for all: Ray
        inlines a small argument in the call, where ``ray.put`` once for every shard went
        through the object store and cost a single-repository query ~5 ms more (p50 8-10 ms
        over local against 3). What remains is Ray's own cost of an actor call, ~0.5 ms each
        here (cProfile, 16 shards): the reason for compound shards (grouping.py), which make
        it one call per group."""
        payload = pack_request(request)
        return {slot.actor.search.remote(payload, rs): (slot, rs) for slot, rs in groups}

    def _vectors(
        self, clean: str, shards: Iterable[tuple[Slot, list[str]]]
    ) -> tuple[QueryVector, ...]:
        """The query embedded once per model the asked repositories' indexes were built with."""
        models: dict[str, Mapping[str, Any]] = {}
        for slot, repos in shards:
            for repo in repos:
                model = slot.models.get(repo)
                if model:
                    models.setdefault(str(model.get("model_id", "")), model)
        return tuple(self._embed(model, clean) for model in models.values())

    def _gather(
        self,
        pending: Mapping[Any, tuple[Slot, list[str]]],
        end: float,
        deadline_s: float,
        missing: dict[str, str],
    ) -> tuple[dict[str, SearchResponse], list[list[Result]], float]:
        """The answering repositories' answers (without results), each answering shard's
        merged results, and the slowest answering shard's own search time."""
        import ray

        headers: dict[str, SearchResponse] = {}
        results: list[list[Result]] = []
        slowest_ms = 0.0
        if not pending:
            return headers, results, slowest_ms
        timeout = max(0.0, end - time.monotonic())
        done, late = ray.wait(list(pending), num_returns=len(pending), timeout=timeout)
        try:  # one call for every answer; only when one failed, one call per answer
            fetched: dict[Any, Any] = dict(zip(done, ray.get(done), strict=True))
        except Exception:
            fetched = {}
        for ref in done:
            slot, repos = pending[ref]
            try:
                answer: ShardAnswer = fetched[ref] if ref in fetched else ray.get(ref)
            except Exception as exc:  # the actor died (or its process did): place again
                self.drop(slot)
                for repo in repos:
                    missing[repo] = f"its shard failed: {type(exc).__name__}"
                continue
            headers.update(answer.responses)
            results.append(answer.results)
            slowest_ms = max(slowest_ms, answer.search_ms)
            for repo, why in answer.failures.items():
                missing[repo] = why
            self.update_models(slot, answer.models)
        for ref in late:
            for repo in pending[ref][1]:
                missing[repo] = f"its shard did not answer within {deadline_s * 1000:.0f} ms"
            with contextlib.suppress(Exception):  # best effort: its answer is ignored anyway
                ray.cancel(ref)
        return headers, results, slowest_ms
