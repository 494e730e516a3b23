"""The registry of shard actors: which actor serves which repositories, placement, handover.

The repositories of the shared index home are grouped (grouping.py: compound shards, one
actor for many small repositories, ``count`` groups from the cluster's CPUs unless given; a
repository above ``own_chunks`` chunks, or every one with ``compound=False``, keeps an actor
of its own), and each group gets a shard searcher actor (search_shard.py) on the node
placement names (placement.py's ``place_bounded``: rendezvous, each node capped at its share
of the groups by CPUs). The groups are fixed for the registry's life; it reads the alive
nodes at most every ``nodes_every_s`` (and at once after a shard failed). A group whose owner
changed (a node joined or left) moves whole: it gets an actor on its new owner, which copies
and opens every index of the group; until that actor's ``load`` has returned, the old one
keeps answering, and only then is it stopped. A group whose node died has no answer until
its new owner has loaded it. A repository whose index cannot be opened (unpublished, damaged)
does not hold its group back: the group's actor answers for the others, names it with the
reason, and opens it once it can. Actors are named (by group) and detached, so they outlive
one ``engine query --cluster`` process: the next one finds them (on the owner, or on any node
that still serves the group) instead of loading again.
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

from engine.cluster.grouping import OWN_SHARD_CHUNKS, compound_groups
from engine.cluster.placement import place_bounded
from engine.cluster.search_shard import REFRESH_S, PluginsFactory
from engine.errors import EngineError
from engine.index.generations import current_generation
from engine.index.home import Home
from engine.index.manifest import read_manifest

NODES_EVERY_S = 2.0
NAMESPACE = "engine"
SHARD_ENV = {
    # One BLAS/OpenMP thread per actor: many actors share a node's cores, and a search's
    # vector work is one small product (cli/commands/query.py's one_shot has the measurement
    # of idle BLAS pools).
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    # Two malloc arenas, not glibc's eight per core: an actor's threads (Ray's, its four
    # concurrent searches, background loads) each took an arena of their own, and a shard
    # actor's USS fell by 1.2-1.9 MiB with this (its searches are short and rarely overlap).
    "MALLOC_ARENA_MAX": "2",
}


@dataclass
class Slot:
    """One group's actor on one node."""

    group: str
    repos: tuple[str, ...]  # the group's repositories, in the registry's order
    node: str
    actor: Any  # ray.actor.ActorHandle
    loading: Any | None  # the ObjectRef of load() until it returned
    ready: bool = False
    # repository -> its vector model meta, for the repositories the actor has open
    models: dict[str, dict[str, Any]] = field(default_factory=dict)


def alive_nodes() -> list[str]:
    return sorted(node_cpus())


def node_cpus() -> dict[str, float]:
    """Every alive node -> its CPUs."""
    import ray

    return {
        n["NodeID"]: float(n.get("Resources", {}).get("CPU", 0.0))
        for n in ray.nodes()
        if n.get("Alive")
    }


def chunk_count(home: Home, repo: str) -> int:
    """The chunks of ``repo``'s published generation in ``home`` (0 when none can be read:
    its shard will say why it cannot open it)."""
    try:
        generation = current_generation(home.repo_dir(repo))
        return read_manifest(generation).chunks if generation is not None else 0
    except EngineError:
        return 0


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
        compound: bool = True,
        groups: int | None = None,
        own_chunks: int = OWN_SHARD_CHUNKS,
    ) -> None:
        """``compound``: small repositories share actors, ``groups`` of them (None: the
        cluster's CPUs when the registry first places them), and a repository above
        ``own_chunks`` chunks keeps its own; False: one actor per repository."""
        self.shared = Home(shared_home)
        self.repos = list(repos) if repos is not None else [e.slug for e in self.shared.list()]
        for repo in self.repos if repos is not None else ():
            self.shared.get(repo)  # RepoNotFound, with the fix, for a name not in the folder
        self._group_count = groups if compound else 0
        self._own = (
            {r for r in self.repos if chunk_count(self.shared, r) > own_chunks}
            if compound
            else set(self.repos)
        )
        # group -> its repositories, and repository -> its group; fixed once formed (on the
        # first placement, which knows the cluster's CPUs)
        self._groups: dict[str, tuple[str, ...]] = {}
        self._group_of: dict[str, str] = {}
        self._slots: dict[str, dict[str, Slot]] = {}  # group -> node -> its actor there
        if self._group_count is not None:
            self._form_groups(self._group_count)
        self._plugins = plugins
        self._nodes_every_s = nodes_every_s
        self._refresh_s = refresh_s
        self._namespace = namespace
        # Actor names carry the shared home's hash: two homes on one cluster never meet.
        self._tag = hashlib.blake2b(str(shared_home).encode(), digest_size=4).hexdigest()
        # repository -> why its shard could not open it (a missing or damaged index), until
        # it answers
        self._failed: dict[str, str] = {}
        self._placement: dict[str, str] = {}  # group -> its owner node
        self._nodes_checked_at = float("-inf")
        self._lock = threading.RLock()

    def _form_groups(self, count: int) -> None:
        self._groups = compound_groups(self.repos, count, own=self._own)
        self._group_of = {repo: g for g, members in self._groups.items() for repo in members}
        self._slots = {group: {} for group in self._groups}

    def placement_due(self) -> bool:
        """Whether the alive nodes should be read again before the next query."""
        return time.monotonic() - self._nodes_checked_at >= self._nodes_every_s

    def failure(self, repo: str) -> str:
        """Why ``repo`` has no actor that answers ("" when it is only loading)."""
        with self._lock:
            return self._failed.get(repo, "")

    def start(self, *, wait_s: float = 120.0, owners: bool = True) -> None:
        """Place every group, adopt the actors already serving it, and wait (at most
        ``wait_s``) until each has one that answers: on its owner, or with ``owners=False``
        anywhere (a one-shot query need not wait for a handover to finish)."""
        self.rebalance(adopt=True)
        self.wait_ready(wait_s, owners=owners)

    def actor_name(self, group: str, node: str) -> str:
        return f"engine-shard-{self._tag}-{group}-{node[:16]}"

    def rebalance(self, *, adopt: bool = False) -> None:
        """Read the alive nodes, place the groups, start actors on new owners and drop those
        on dead nodes. ``adopt``: also take over actors a previous router left on nodes that
        are not the owner (they serve until the owner has loaded)."""
        cpus = node_cpus()
        with self._lock:
            self._nodes_checked_at = time.monotonic()
            if self._group_count is None and not self._groups:
                self._form_groups(max(1, round(sum(cpus.values()))))  # a group per core
            self._placement = place_bounded(self._groups, cpus)
            for group, owner in self._placement.items():
                slots = self._slots[group]
                for node in [n for n in slots if n not in cpus]:
                    slots.pop(node)  # its node is gone and its actor with it
                if owner not in slots:
                    slots[owner] = self._spawn(group, owner)
                if adopt:
                    for node in sorted(cpus):
                        if node in slots:
                            continue
                        found = self._existing(group, node)
                        if found is not None:
                            members = self._groups[group]
                            loading = found.load.remote(list(members))
                            slots[node] = Slot(group, members, node, found, loading)

    def _existing(self, group: str, node: str) -> Any | None:
        import ray

        try:
            return ray.get_actor(self.actor_name(group, node), namespace=self._namespace)
        except ValueError:
            return None

    def _spawn(self, group: str, node: str) -> Slot:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from engine.cluster.search_shard import ShardSearcher

        members = self._groups[group]
        actor: Any = (
            ray.remote(ShardSearcher)
            .options(
                name=self.actor_name(group, node),
                namespace=self._namespace,
                get_if_exists=True,
                lifetime="detached",
                # Searching is light and mostly waits on the router; CPUs are for indexing.
                num_cpus=0,
                max_concurrency=4,
                max_restarts=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                runtime_env={"env_vars": SHARD_ENV},
            )
            .remote(str(self.shared.root), list(members), self._plugins, refresh_s=self._refresh_s)
        )
        # An actor of that name already running (get_if_exists) may serve fewer: load says.
        return Slot(group, members, node, actor, actor.load.remote(list(members)))

    def poll(self) -> None:
        """Take in every finished load; once a group's owner has loaded, stop the actors that
        served it elsewhere (the handover)."""
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
                unopened = [r for r in slot.repos if r not in models]
                why: dict[str, str] = {}
                if unopened:  # said in answers; the actor tries again on its refreshes
                    try:
                        why = ray.get(slot.actor.failures.remote(), timeout=10)
                    except Exception:
                        why = {}
                with self._lock:
                    slot.loading = None
                    slot.ready = True
                    slot.models = {r: dict(models[r]) for r in slot.repos if r in models}
                    for repo in slot.repos:
                        if repo in models:
                            self._failed.pop(repo, None)
                        else:
                            self._failed[repo] = why.get(repo) or "its shard could not open it"
        with self._lock:
            retired = []
            for group, owner in self._placement.items():
                slots = self._slots[group]
                if owner in slots and slots[owner].ready:
                    retired += [slots.pop(n) for n in [n for n in slots if n != owner]]
        for slot in retired:
            self._kill(slot)

    def wait_ready(self, timeout_s: float, *, owners: bool = True) -> bool:
        """Poll until every group has a ready actor on its owner (``owners=False``: on any
        node); False on timeout."""
        end = time.monotonic() + timeout_s
        while True:
            self.poll()
            with self._lock:
                done = all(
                    owner in self._slots[group] and self._slots[group][owner].ready
                    if owners
                    else any(s.ready for s in self._slots[group].values())
                    for group, owner in self._placement.items()
                )
            if done or time.monotonic() >= end:
                return done
            time.sleep(0.05)

    def drop(self, slot: Slot) -> None:
        with self._lock:
            if self._slots.get(slot.group, {}).get(slot.node) is slot:
                self._slots[slot.group].pop(slot.node)
            self._nodes_checked_at = float("-inf")  # place again on the next query
        self._kill(slot)

    @staticmethod
    def _kill(slot: Slot) -> None:
        import ray

        with contextlib.suppress(Exception):  # already gone
            ray.kill(slot.actor, no_restart=True)

    def serving(self, repo: str) -> Slot | None:
        """The actor that answers for ``repo`` now: its group's owner's once loaded, else
        one that served the group before (a node keeps serving until the new owner has
        loaded)."""
        with self._lock:
            group = self._group_of.get(repo, "")
            slots = self._slots.get(group, {})
            owner = self._placement.get(group, "")
            if owner in slots and slots[owner].ready:
                return slots[owner]
            ready = [s for s in slots.values() if s.ready]
            return ready[0] if ready else None

    def update_models(self, slot: Slot, models: dict[str, dict[str, Any]]) -> None:
        """What a shard's answer says its repositories' vector models now are (a generation
        swapped in from another tier changes one; a repository it could not open before
        answers now)."""
        with self._lock:
            for repo in slot.repos:
                if repo in models:
                    slot.models[repo] = models[repo]
                    self._failed.pop(repo, None)

    def placement(self) -> dict[str, str]:
        """repository -> the node its group is placed on."""
        with self._lock:
            return {
                r: self._placement[g] for r, g in self._group_of.items() if g in self._placement
            }

    def groups(self) -> dict[str, tuple[str, ...]]:
        """group -> its repositories ({} until the first placement)."""
        with self._lock:
            return dict(self._groups)

    def group_of(self, repo: str) -> str:
        with self._lock:
            return self._group_of.get(repo, "")

    def group_placement(self) -> dict[str, str]:
        """group -> its owner node."""
        with self._lock:
            return dict(self._placement)

    def actors(self, repo: str) -> dict[str, Any]:
        """node -> actor handle of every actor that holds ``repo``'s group (tests,
        benchmarks)."""
        with self._lock:
            slots = self._slots.get(self._group_of.get(repo, ""), {})
            return {node: slot.actor for node, slot in slots.items()}

    def close(self, *, stop_actors: bool = False) -> None:
        """Forget the actors; ``stop_actors`` also stops them (they are detached and would
        otherwise keep serving the next router)."""
        with self._lock:
            slots = [s for by_node in self._slots.values() for s in by_node.values()]
            self._slots = {group: {} for group in self._groups}
        if stop_actors:
            for slot in slots:
                self._kill(slot)
