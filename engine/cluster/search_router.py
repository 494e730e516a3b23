"""The router of cluster search: embed once, fan out to shard actors, merge within a deadline.

The router lives in the process that answers (``engine query --cluster``, ``engine serve
--cluster``). For every repository of the shared index home it keeps a shard searcher actor
(search_shard.py) on the node rendezvous hashing names (placement.py). A query:

1. is cleaned as the searcher cleans it, and embedded once per model the asked
   repositories' vector indexes were built with (``embed``: one local embedder per tier and
   precision, loaded once per process), so no shard holds a model;
2. goes to the shard serving each asked repository, all at once;
3. waits until its deadline (default 500 ms from the start of the query): a shard that is
   late, dead or still loading does not fail the query; its repositories are named in a
   warning and the answer's ``coverage`` counts the shards that answered out of those asked;
4. is merged with ``engine.search.federation.merge``, the local federation's scoring, in the
   order the repositories were asked: the same answer a local ``engine query a,b`` gives.

Placement and handover: the router reads the alive nodes at most every ``nodes_every_s`` (and
at once after a shard failed). A repository whose owner changed (a node joined or left) gets an
actor on its new owner, which copies and opens the index; until that actor's ``load`` has
returned, the old one keeps answering, and only then is it stopped. A repository whose node
died has no answer until its new owner has loaded it. Actors are named and detached, so they
outlive one ``engine query --cluster`` process: the next one finds them (on the owner, or on
any node that still serves the repository) instead of loading again.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.cluster.placement import place, ranked_nodes
from engine.cluster.search_shard import REFRESH_S, PluginsFactory, ShardAnswer, ShardRequest
from engine.errors import UsageError
from engine.index.home import Home
from engine.search.federation import merge
from engine.search.ranking.options import DEFAULT_RANKING, RankingOptions
from engine.search.searcher import clean_query
from engine.types import Coverage, Filters, QueryVector, SearchResponse

DEFAULT_DEADLINE_MS = 500.0
NODES_EVERY_S = 2.0
NAMESPACE = "engine"
SHARD_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}

QueryEmbedder = Callable[[Mapping[str, Any], str], QueryVector]
"""embed(model meta, cleaned text) -> the query's vector from that model
(signals/vector/query_vector.py's ``embed_query`` with the home bound)."""


@dataclass
class _Slot:
    """One repository's actor on one node."""

    repo: str
    node: str
    actor: Any  # ray.actor.ActorHandle
    loading: Any | None  # the ObjectRef of load() until it returned
    ready: bool = False
    models: dict[str, Any] = field(default_factory=dict)  # the repository's vector model meta


def _node_ids() -> list[str]:
    import ray

    return sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))


class Router:
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
    ) -> None:
        self.shared = Home(shared_home)
        self.repos = list(repos) if repos is not None else [e.slug for e in self.shared.list()]
        self.deadline_ms = deadline_ms
        self._plugins = plugins
        self._embed = embed
        self._nodes_every_s = nodes_every_s
        self._refresh_s = refresh_s
        self._namespace = namespace
        # Actor names carry the shared home's hash: two homes on one cluster never meet.
        self._tag = hashlib.blake2b(str(shared_home).encode(), digest_size=4).hexdigest()
        for repo in self.repos if repos is not None else ():
            self.shared.get(repo)  # RepoNotFound, with the fix, for a name not in the folder
        self._slots: dict[str, dict[str, _Slot]] = {repo: {} for repo in self.repos}
        # repository -> why its last load failed (a missing or damaged index), until one works
        self._failed: dict[str, str] = {}
        self._placement: dict[str, str] = {}
        self._nodes_checked_at = float("-inf")
        self._lock = threading.RLock()
        # Where the last query's time went, in ms (embed, wait, slowest_shard, total): for
        # the benchmark (eval/bench/cluster_search.py) and --explain-like diagnostics.
        self.last_timing: dict[str, float] = {}

    # -- placement and handover ----------------------------------------------------------

    def start(self, *, wait_s: float = 120.0, owners: bool = True) -> None:
        """Place every repository, adopt the actors already serving it, and wait (at most
        ``wait_s``) until each has one that answers: on its owner, or with ``owners=False``
        anywhere (a one-shot query need not wait for a handover to finish)."""
        self.rebalance(adopt=True)
        self.wait_ready(wait_s, owners=owners)

    def actor_name(self, repo: str, node: str) -> str:
        return f"engine-shard-{self._tag}-{repo}-{node[:16]}"

    def rebalance(self, *, adopt: bool = False) -> None:
        """Read the alive nodes, place the repositories, start actors on new owners and drop
        those on dead nodes. ``adopt``: also take over actors a previous router left on
        nodes that are not the owner (they serve until the owner has loaded)."""
        nodes = _node_ids()
        with self._lock:
            self._nodes_checked_at = time.monotonic()
            self._placement = place(self.repos, nodes)
            alive = set(nodes)
            for repo, owner in self._placement.items():
                slots = self._slots[repo]
                for node in [n for n in slots if n not in alive]:
                    slots.pop(node)  # its node is gone and its actor with it
                if owner not in slots:
                    slots[owner] = self._spawn(repo, owner)
                if adopt:
                    for node in ranked_nodes(repo, nodes)[1:]:
                        found = self._existing(repo, node)
                        if found is not None and node not in slots:
                            slots[node] = _Slot(repo, node, found, found.load.remote())

    def _existing(self, repo: str, node: str) -> Any | None:
        import ray

        try:
            return ray.get_actor(self.actor_name(repo, node), namespace=self._namespace)
        except ValueError:
            return None

    def _spawn(self, repo: str, node: str) -> _Slot:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from engine.cluster.search_shard import ShardSearcher

        actor: Any = (
            ray.remote(ShardSearcher)
            .options(
                name=self.actor_name(repo, node),
                namespace=self._namespace,
                get_if_exists=True,
                lifetime="detached",
                # Searching is light and mostly waits on the router; CPUs are for indexing.
                num_cpus=0,
                max_concurrency=4,
                max_restarts=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                # One BLAS/OpenMP thread per actor: many actors share a node's cores, and a
                # search's vector work is one small product (cli/commands/query.py's
                # one_shot has the measurement of idle BLAS pools).
                runtime_env={"env_vars": SHARD_THREADS},
            )
            .remote(str(self.shared.root), [repo], self._plugins, refresh_s=self._refresh_s)
        )
        return _Slot(repo, node, actor, actor.load.remote())

    def poll(self) -> None:
        """Take in every finished load; once a repository's owner has loaded, stop the
        actors that served it elsewhere (the handover)."""
        import ray

        with self._lock:
            loading = {
                s.loading: s for slots in self._slots.values() for s in slots.values() if s.loading
            }
        if loading:
            done, _ = ray.wait(list(loading), num_returns=len(loading), timeout=0)
            for ref in done:
                slot = loading[ref]
                try:
                    models = ray.get(ref)
                except Exception:  # the actor died while loading: rebalance starts another
                    self._drop(slot)
                    continue
                with self._lock:
                    slot.loading = None
                    slot.ready = slot.repo in models
                    slot.models = dict(models.get(slot.repo, {}))
                if slot.ready:
                    with self._lock:
                        self._failed.pop(slot.repo, None)
                else:  # it could not open the index: said in answers, tried on rebalance
                    try:
                        why = ray.get(slot.actor.failures.remote(), timeout=10).get(slot.repo, "")
                    except Exception:
                        why = ""
                    with self._lock:
                        self._failed[slot.repo] = why or "its shard could not open it"
                    self._drop(slot)
        with self._lock:
            retired = []
            for repo, owner in self._placement.items():
                slots = self._slots[repo]
                if owner in slots and slots[owner].ready:
                    retired += [slots.pop(n) for n in [n for n in slots if n != owner]]
        for slot in retired:
            self._kill(slot)

    def wait_ready(self, timeout_s: float, *, owners: bool = True) -> bool:
        """Poll until every repository has a ready actor on its owner (``owners=False``: on
        any node); False on timeout."""
        end = time.monotonic() + timeout_s
        while True:
            self.poll()
            with self._lock:
                done = all(
                    repo in self._failed  # waiting would not help: its answer will say why
                    or (
                        owner in self._slots[repo] and self._slots[repo][owner].ready
                        if owners
                        else any(s.ready for s in self._slots[repo].values())
                    )
                    for repo, owner in self._placement.items()
                )
            if done or time.monotonic() >= end:
                return done
            time.sleep(0.05)

    def _drop(self, slot: _Slot) -> None:
        with self._lock:
            if self._slots[slot.repo].get(slot.node) is slot:
                self._slots[slot.repo].pop(slot.node)
            self._nodes_checked_at = float("-inf")  # place again on the next query
        self._kill(slot)

    @staticmethod
    def _kill(slot: _Slot) -> None:
        import ray

        with contextlib.suppress(Exception):  # already gone
            ray.kill(slot.actor, no_restart=True)

    def serving(self, repo: str) -> _Slot | None:
        """The actor that answers for ``repo`` now: its owner's once loaded, else one that
        served it before (a node keeps serving until the new owner has loaded)."""
        with self._lock:
            slots = self._slots.get(repo, {})
            owner = self._placement.get(repo, "")
            if owner in slots and slots[owner].ready:
                return slots[owner]
            ready = [s for s in slots.values() if s.ready]
            return ready[0] if ready else None

    def placement(self) -> dict[str, str]:
        with self._lock:
            return dict(self._placement)

    def actors(self, repo: str) -> dict[str, Any]:
        """node -> actor handle of every actor that holds ``repo`` (tests, benchmarks)."""
        with self._lock:
            return {node: slot.actor for node, slot in self._slots.get(repo, {}).items()}

    def close(self, *, stop_actors: bool = False) -> None:
        """Forget the actors; ``stop_actors`` also stops them (they are detached and would
        otherwise keep serving the next router)."""
        with self._lock:
            slots = [s for by_node in self._slots.values() for s in by_node.values()]
            self._slots = {repo: {} for repo in self.repos}
        if stop_actors:
            for slot in slots:
                self._kill(slot)

    # -- answering ------------------------------------------------------------------------

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
        unknown = [r for r in asked if r not in self._slots]
        if unknown:
            raise UsageError(
                f"not in the cluster's index home {self.shared.root}: {', '.join(unknown)}"
            )
        if limit < 1:
            raise UsageError("limit must be at least 1")
        clean = clean_query(text)
        if not clean.strip():
            raise UsageError("the query is empty — say what code you are looking for")
        if time.monotonic() - self._nodes_checked_at >= self._nodes_every_s:
            self.rebalance()
        self.poll()
        missing: dict[str, str] = {}
        groups: dict[int, tuple[_Slot, list[str]]] = {}
        unserved = 0  # repositories with no actor ready: each counts as a shard asked
        for repo in asked:
            slot = self.serving(repo)
            if slot is None:
                with self._lock:
                    missing[repo] = self._failed.get(repo, "its shard is still loading")
                unserved += 1
            else:
                groups.setdefault(id(slot.actor), (slot, []))[1].append(repo)
        embed_start = time.monotonic()
        vectors = self._vectors(clean, [s for s, _ in groups.values()])
        embed_ms = (time.monotonic() - embed_start) * 1000
        request = ShardRequest(
            tuple(r for _, rs in groups.values() for r in rs),
            clean,
            limit,
            vectors,
            tuple(signals) if signals is not None else None,
            filters or Filters(),
            ranking or DEFAULT_RANKING,
            hits,
        )
        pending = self._dispatch(request, groups.values())
        wait_start = time.monotonic()
        answers, slowest_ms = self._gather(pending, start + deadline_s, deadline_s, missing)
        wait_ms = (time.monotonic() - wait_start) * 1000
        responses = [answers[r] for r in asked if r in answers]
        for repo in asked:
            if repo not in answers and repo not in missing:
                missing[repo] = "its shard did not answer"
        shards_asked = len(groups) + unserved
        shards_answered = sum(1 for _, rs in groups.values() if all(r in answers for r in rs))
        if len(asked) == 1 and responses:
            merged = responses[0]  # as a local query of one repository: no federation scaling
        else:
            merged = merge(responses, limit) if responses else SearchResponse(clean, [], [])
        coverage = Coverage(shards_answered, shards_asked, tuple(r for r in asked if r in missing))
        warnings = list(merged.warnings)
        if missing:
            warnings.append(
                f"partial answer: {shards_answered} of {shards_asked} shards answered; not "
                "searched: " + "; ".join(f"{r} ({why})" for r, why in missing.items() if r)
            )
        self.last_timing = {
            "embed_ms": embed_ms,
            "wait_ms": wait_ms,
            "slowest_shard_ms": slowest_ms,
            "total_ms": (time.monotonic() - start) * 1000,
        }
        return replace(merged, query=clean, warnings=warnings, coverage=coverage)

    @staticmethod
    def _dispatch(
        request: ShardRequest, groups: Iterable[tuple[_Slot, list[str]]]
    ) -> dict[Any, tuple[_Slot, list[str]]]:
        """One call per shard, the request passed by value: Ray inlines a small argument in
        the call, where ``ray.put`` once for every shard went through the object store and
        cost a single-repository query ~5 ms more (p50 8-10 ms over local against 3). What
        remains is Ray's own cost of an actor call, ~0.5 ms each here (cProfile, 16 shards):
        the reason for compound shards (eval/bench/compound_shards.py)."""
        return {slot.actor.search.remote(request, rs): (slot, rs) for slot, rs in groups}

    def _vectors(self, clean: str, slots: Sequence[_Slot]) -> tuple[QueryVector, ...]:
        models: dict[str, Mapping[str, Any]] = {}
        for slot in slots:
            if slot.models:
                models.setdefault(str(slot.models.get("model_id", "")), slot.models)
        return tuple(self._embed(model, clean) for model in models.values())

    def _gather(
        self,
        pending: Mapping[Any, tuple[_Slot, list[str]]],
        end: float,
        deadline_s: float,
        missing: dict[str, str],
    ) -> tuple[dict[str, SearchResponse], float]:
        """The answers by repository, and the slowest answering shard's own search time."""
        import ray

        answers: dict[str, SearchResponse] = {}
        slowest_ms = 0.0
        if not pending:
            return answers, slowest_ms
        timeout = max(0.0, end - time.monotonic())
        done, late = ray.wait(list(pending), num_returns=len(pending), timeout=timeout)
        for ref in done:
            slot, repos = pending[ref]
            try:
                answer: ShardAnswer = ray.get(ref)
            except Exception as exc:  # the actor died (or its process did): place again
                self._drop(slot)
                for repo in repos:
                    missing[repo] = f"its shard failed: {type(exc).__name__}"
                continue
            answers.update(answer.responses)
            slowest_ms = max(slowest_ms, answer.search_ms)
            for repo, why in answer.failures.items():
                missing[repo] = why
            with self._lock:
                if slot.repo in answer.models:
                    slot.models = answer.models[slot.repo]
        for ref in late:
            for repo in pending[ref][1]:
                missing[repo] = f"its shard did not answer within {deadline_s * 1000:.0f} ms"
            with contextlib.suppress(Exception):  # best effort: its answer is ignored anyway
                ray.cancel(ref)
        return answers, slowest_ms
