"""Compound shards: small repositories share a few groups, a large one keeps its own, and a
repository's group depends on its name and the group count alone."""

from __future__ import annotations

from engine.cluster.grouping import compound_groups, group_of_repo, own_group

REPOS = [f"repo-{i}" for i in range(300)]


def test_repositories_share_count_groups_and_a_large_one_has_its_own() -> None:
    groups = compound_groups(REPOS, 8, own={"repo-7"})
    assert groups[own_group("repo-7")] == ("repo-7",)
    shared = {g: m for g, m in groups.items() if g != own_group("repo-7")}
    assert set(shared) == {f"g{k}" for k in range(8)}
    assert sorted(r for m in shared.values() for r in m) == sorted(set(REPOS) - {"repo-7"})
    assert all(20 <= len(m) <= 60 for m in shared.values())  # about 300 / 8
    for members in groups.values():  # each group keeps the order it was given
        assert list(members) == [r for r in REPOS if r in members]


def test_a_group_depends_only_on_the_repository_and_the_count() -> None:
    every = compound_groups(REPOS, 8)
    some = compound_groups(REPOS[::7], 8)
    for group, members in some.items():
        assert set(members) <= set(every[group])
    assert all(group_of_repo(r, 8) in every and r in every[group_of_repo(r, 8)] for r in REPOS)


def test_more_groups_only_take_repositories_into_the_new_ones() -> None:
    before = {r: group_of_repo(r, 8) for r in REPOS}
    after = {r: group_of_repo(r, 9) for r in REPOS}
    moved = {r for r in REPOS if before[r] != after[r]}
    assert moved and {after[r] for r in moved} == {"g8"}


def test_no_sharing_is_one_group_per_repository() -> None:
    assert compound_groups(["b", "a"], 0) == {own_group("b"): ("b",), own_group("a"): ("a",)}
    assert compound_groups([], 4) == {}
