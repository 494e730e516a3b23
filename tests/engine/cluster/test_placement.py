"""Rendezvous placement: stable, balanced, and a node change moves only what it must."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cluster.placement import moves, owner, place, place_bounded, ranked_nodes, weight

REPOS = [f"repo-{i}" for i in range(600)]
NODES = ["node-a", "node-b", "node-c"]

names = st.text(alphabet="abcdefghij0123456789-", min_size=1, max_size=12)


def test_weights_are_the_same_in_every_process() -> None:
    # A fixed value: hash() would differ per process (PYTHONHASHSEED); blake2b does not.
    assert weight("node-a", "repo-0") == weight("node-a", "repo-0")
    assert weight("node-a", "repo-0") != weight("node-b", "repo-0")
    assert place(["click"], NODES) == place(["click"], list(reversed(NODES)))


def test_repositories_spread_evenly() -> None:
    counts = dict.fromkeys(NODES, 0)
    for node in place(REPOS, NODES).values():
        counts[node] += 1
    assert all(150 <= n <= 250 for n in counts.values()), counts


def test_removing_a_node_moves_only_its_repositories_to_their_runner_up() -> None:
    before = place(REPOS, NODES)
    after = place(REPOS, NODES[:2])
    moved = moves(before, after)
    assert set(moved) == {r for r, n in before.items() if n == "node-c"}
    for repo, (old, new) in moved.items():
        assert old == "node-c"
        assert new == ranked_nodes(repo, NODES)[1]


def test_adding_a_node_moves_about_a_share_of_repositories_and_only_to_it() -> None:
    before = place(REPOS, NODES)
    after = place(REPOS, [*NODES, "node-d"])
    moved = moves(before, after)
    assert {new for _, new in moved.values()} == {"node-d"}
    assert 100 <= len(moved) <= 200  # about 600 / 4


def test_no_node_no_placement() -> None:
    assert place(REPOS, []) == {}
    with pytest.raises(ValueError, match="no node"):
        owner("click", [])


def test_a_new_repository_moves_from_nowhere() -> None:
    assert moves({}, {"click": "node-a"}) == {"click": ("", "node-a")}


@given(st.lists(names, min_size=1, max_size=30), st.sets(names, min_size=2, max_size=6))
def test_owner_is_the_first_ranked_and_survives_removing_any_other(
    repos: list[str], nodes: set[str]
) -> None:
    for repo in repos:
        first = owner(repo, nodes)
        assert first == ranked_nodes(repo, nodes)[0]
        for gone in nodes - {first}:
            assert owner(repo, nodes - {gone}) == first


GROUPS = [f"g{i}" for i in range(48)]


def test_bounded_placement_gives_each_node_its_share_by_cpus() -> None:
    cpus = {"node-a": 1.0, "node-b": 2.0, "node-c": 1.0}
    placed = place_bounded(GROUPS, cpus)
    assert set(placed) == set(GROUPS)
    counts = {node: list(placed.values()).count(node) for node in cpus}
    assert counts == {"node-a": 12, "node-b": 24, "node-c": 12}
    assert place_bounded(GROUPS, dict(reversed(cpus.items()))) == placed
    # Three groups on three one-CPU nodes: one each (rendezvous alone often doubles up).
    assert sorted(place_bounded(["g0", "g1", "g2"], dict.fromkeys(NODES, 1.0)).values()) == NODES


def test_bounded_placement_of_a_node_without_cpus() -> None:
    assert set(place_bounded(GROUPS, {"head": 0.0, "node-a": 2.0}).values()) == {"node-a"}
    assert set(place_bounded(GROUPS, {"head": 0.0, "node-a": 0.0}).values()) == {"head", "node-a"}
    assert place_bounded(GROUPS, {}) == {}


@given(
    st.sets(names, min_size=1, max_size=40),
    st.dictionaries(names, st.integers(0, 8), min_size=2, max_size=6),
)
def test_bounded_placement_respects_every_cap_and_a_removed_node_keeps_nothing(
    groups: set[str], cpus: dict[str, int]
) -> None:
    placed = place_bounded(groups, cpus)
    assert set(placed) == groups and set(placed.values()) <= set(cpus)
    total = sum(cpus.values())
    for node, cores in cpus.items():
        held = sum(1 for n in placed.values() if n == node)
        if total:
            assert held <= -(-len(groups) * cores // total)
    gone = max(cpus, key=lambda n: (cpus[n], n))
    after = place_bounded(groups, {n: c for n, c in cpus.items() if n != gone})
    assert gone not in after.values() and set(after) == groups
