"""The registry of shard actors: which actor serves which repository, placement, handover.

For every repository of the shared index home it keeps a shard searcher actor
(search_shard.py) on the node rendezvous hashing names (placement.py). It reads the alive
nodes at most every ``nodes_every_s`` (and at once after a shard failed). A repository whose
owner changed (a node joined or left) gets an actor on its new owner, which copies and opens
the index; until that actor's ``load`` has returned, the old one keeps answering, and only
then is it stopped. A repository whose node died has no answer until its new owner has
loaded it; one whose index cannot be opened (unpublished, damaged) is named with the reason.
Actors are named and detached, so they outlive one ``engine query --cluster`` process: the
next one finds them (on the owner, or on any node that still serves the repository) instead
of loading again.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.cluster.placement import place, ranked_nodes
from engine.cluster.search_shard import REFRESH_S, PluginsFactory
from engine.index.home import Home

NODES_EVERY_S = 2.0
NAMESPACE = "engine"
SHARD_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


@dataclass
class Slot:
    """One repository's actor on one node."""

    repo: str
    node: str
    actor: Any  # ray.actor.ActorHandle
    loading: Any | None  # the ObjectRef of load() until it returned
    ready: bool = False
    models: dict[str, Any] = field(default_factory=dict)  # the repository's vector model meta


def alive_nodes() -> list[str]:
    import ray

    return sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))


class ShardRegistry:
    def __init__(
        self,
        shared_home: Path,
        plugins: PluginsFactory,
        *,
        repos: Sequence[str] | None = None,
        nodes_every_s: float = NODES_EVERY_S,
        refresh_s: float = REFRESH_S,
        namespace: str = NAMESPACE,
    ) -> None:
        self.shared = Home(shared_home)
        self.repos = list(repos) if repos is not None else [e.slug for e in self.shared.list()]
        for repo in self.repos if repos is not None else ():
            self.shared.get(repo)  # RepoNotFound, with the fix, for a name not in the folder
        self._plugins = plugins
        self._nodes_every_s = nodes_every_s
        self._refresh_s = refresh_s
        self._namespace = namespace
        # Actor names carry the shared home's hash: two homes on one cluster never meet.
        self._tag = hashlib.blake2b(str(shared_home).encode(), digest_size=4).hexdigest()
        self._slots: dict[str, dict[str, Slot]] = {repo: {} for repo in self.repos}
        # repository -> why its last load failed (a missing or damaged index), until one works
        self._failed: dict[str, str] = {}
        self._placement: dict[str, str] = {}
        self._nodes_checked_at = float("-inf")
        self._lock = threading.RLock()

    def placement_due(self) -> bool:
        """Whether the alive nodes should be read again before the next query."""
        return time.monotonic() - self._nodes_checked_at >= self._nodes_every_s

    def failure(self, repo: str) -> str:
        """Why ``repo`` has no actor that answers ("" when it is only loading)."""
        with self._lock:
            return self._failed.get(repo, "")

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
        nodes = alive_nodes()
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
                            slots[node] = Slot(repo, node, found, found.load.remote())

    def _existing(self, repo: str, node: str) -> Any | None:
        import ray

        try:
            return ray.get_actor(self.actor_name(repo, node), namespace=self._namespace)
        except ValueError:
            return None

    def _spawn(self, repo: str, node: str) -> Slot:
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
        return Slot(repo, node, actor, actor.load.remote())

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
                    self.drop(slot)
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
                    self.drop(slot)
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

    def drop(self, slot: Slot) -> None:
        with self._lock:
            if self._slots[slot.repo].get(slot.node) is slot:
                self._slots[slot.repo].pop(slot.node)
            self._nodes_checked_at = float("-inf")  # place again on the next query
        self._kill(slot)

    @staticmethod
    def _kill(slot: Slot) -> None:
        import ray

        with contextlib.suppress(Exception):  # already gone
            ray.kill(slot.actor, no_restart=True)

    def serving(self, repo: str) -> Slot | None:
        """The actor that answers for ``repo`` now: its owner's once loaded, else one that
        served it before (a node keeps serving until the new owner has loaded)."""
        with self._lock:
            slots = self._slots.get(repo, {})
            owner = self._placement.get(repo, "")
            if owner in slots and slots[owner].ready:
                return slots[owner]
            ready = [s for s in slots.values() if s.ready]
            return ready[0] if ready else None

    def update_models(self, slot: Slot, models: dict[str, dict[str, Any]]) -> None:
        """What a shard's answer says its repository's vector model now is (a generation
        swapped in from another tier changes it)."""
        with self._lock:
            if slot.repo in models:
                slot.models = models[slot.repo]

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
