"""Compound shards: which repositories share one shard actor.

A query is one actor call per shard it asks, and the router pays Ray's cost of a call
(~0.5 ms to submit, ~0.4 ms to unpickle the answer, BENCHMARKS.md "Cluster search") one call
after another; a shard actor is also a Python process (~42 MiB for Ray's worker alone). So
small repositories share actors: each is hashed (rendezvous, placement.py's ``owner``) onto
one of ``count`` groups named ``g0``, ``g1``, ... (the router takes ``count`` from the
cluster's CPUs, so that every core has a group to search), and a repository with more than
``own_chunks`` chunks keeps a group of its own, ``repo-<slug>``: searching it is a core's
work already. Groups, not repositories, are then placed on nodes and handed over.

A repository's group depends only on its name and ``count``, never on which other
repositories a router was asked for, so routers over different lists (a one-shot ``engine
query --cluster a,b``, a server over every repository) meet in the same named actors; and
because the groups are rendezvous winners, a larger ``count`` only takes repositories away
from the existing groups, into the new ones. Pure: no Ray.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from engine.cluster.placement import owner

OWN_SHARD_CHUNKS = 20_000  # above this a repository is a shard of its own
OWN_PREFIX = "repo-"


def group_names(count: int) -> list[str]:
    return [f"g{k}" for k in range(max(1, count))]


def own_group(repo: str) -> str:
    """The group of a repository that keeps an actor of its own."""
    return f"{OWN_PREFIX}{repo}"


def group_of_repo(repo: str, count: int) -> str:
    """The shared group of a small repository among ``count``."""
    return owner(repo, group_names(count))


def compound_groups(
    repos: Iterable[str], count: int, *, own: Collection[str] = ()
) -> dict[str, tuple[str, ...]]:
    """group -> its repositories, in the order given; the repositories of ``own`` get a group
    each, the others share ``count`` groups (a group no repository hashed to is left out).
    ``count`` 0 gives every repository a group of its own (one actor per repository)."""
    names = group_names(count)
    groups: dict[str, list[str]] = {}
    for repo in dict.fromkeys(repos):
        group = own_group(repo) if count <= 0 or repo in own else owner(repo, names)
        groups.setdefault(group, []).append(repo)
    return {group: tuple(members) for group, members in groups.items()}
