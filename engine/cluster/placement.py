"""Which node serves which repository: rendezvous (highest random weight) hashing.

Each (node, repository) pair gets a pseudo-random weight from a hash of both names; a
repository lives on the node with the highest weight. It is consistent hashing without a
ring: when a node joins, only the repositories it now wins move to it (about 1/N of them);
when a node leaves, only its own repositories move, each to its runner-up. Every router
computes the same placement from the same node list, with no state to share. Pure: no Ray.
"""

from __future__ import annotations

import hashlib
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
