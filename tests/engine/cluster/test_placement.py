"""Rendezvous placement: stable, balanced, and a node change moves only what it must."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cluster.placement import moves, owner, place, ranked_nodes, weight

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
