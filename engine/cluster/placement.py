"""Which node serves which repository: rendezvous (highest random weight) hashing.

Each (node, repository) pair gets a pseudo-random weight from a hash of both names; a
repository lives on the node with the highest weight. It is consistent hashing without a
ring: when a node joins, only the repositories it now wins move to it (about 1/N of them);
when a node leaves, only its own repositories move, each to its runner-up. Every router
computes the same placement from the same node list, with no state to share.

Compound shards (grouping.py) place a few groups, not thousands of repositories, and with
few items pure rendezvous is lumpy (three groups on three nodes share one node two times in
three): ``place_bounded`` caps each node at its share of the items, in proportion to its
CPUs, so that every core has a group to search. Pure: no Ray.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping


def weight(node: str, repo: str) -> int:
    """The pair's weight: 64 bits of blake2b, the same in every process and on every machine
    (unlike ``hash()``, which is salted per process)."""
    digest = hashlib.blake2b(f"{node}\0{repo}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def ranked_nodes(repo: str, nodes: Iterable[str]) -> list[str]:
    """Every node, best owner of ``repo`` first (ties, practically impossible, by name)."""
    return sorted(set(nodes), key=lambda node: (-weight(node, repo), node))


def owner(repo: str, nodes: Iterable[str]) -> str:
    """The node that serves ``repo``; ValueError when there is no node."""
    ranked = ranked_nodes(repo, nodes)
    if not ranked:
        raise ValueError("no node to place a repository on")
    return ranked[0]


def place(repos: Iterable[str], nodes: Iterable[str]) -> dict[str, str]:
    """repository -> node for every repository; {} when there is no node."""
    alive = sorted(set(nodes))
    if not alive:
        return {}
    return {repo: owner(repo, alive) for repo in repos}


def moves(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """repository -> (old node, new node) for every repository whose owner changed; a
    repository new in ``after`` moves from ""."""
    return {
        repo: (before.get(repo, ""), node)
        for repo, node in after.items()
        if before.get(repo, "") != node
    }


def place_bounded(items: Iterable[str], capacity: Mapping[str, float]) -> dict[str, str]:
    """item -> node, each on its best-ranked node that still has room; {} when there is no
    node. ``capacity`` maps every alive node to its weight (its CPUs): a node holds at most
    ceil(items x its weight / all weights), so placement follows the cores, and a node of
    weight 0 holds nothing unless every node weighs 0. Items are taken in name order, so every
    router computes the same placement; a node joining takes the items that rank it first (up
    to its share), a node leaving gives its items to their next-ranked nodes with room, and
    the caps moving with the node count may shift a few more."""
    nodes = sorted(capacity)
    if not nodes:
        return {}
    weights = {node: max(0.0, float(capacity[node])) for node in nodes}
    if sum(weights.values()) <= 0:
        weights = dict.fromkeys(nodes, 1.0)
    total = sum(weights.values())
    ordered = sorted(set(items))
    room = {node: math.ceil(len(ordered) * weights[node] / total - 1e-9) for node in nodes}
    placed = {}
    for item in ordered:  # the caps add up to at least len(ordered): every item finds room
        node = next(n for n in ranked_nodes(item, nodes) if room[n] > 0)
        room[node] -= 1
        placed[item] = node
    return placed
