"""Cluster search on the simulated 3-node cluster: the router's answers equal local
federation's, a dead or late shard gives a partial answer with coverage, a removed node's
repositories move and keep answering, and a new node takes over only once it has loaded.
Shards are compound (a group of repositories per actor, a group per CPU: three here), so a
shard's fault names every asked repository of its group, and groups move whole."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cluster.search_registry import alive_nodes
from engine.cluster.search_router import Router
from engine.search.searcher import clean_query
from engine.types import SearchResponse
from tests.engine.cluster.conftest import SimulatedCluster
from tests.engine.cluster.search_homes import (
    QUERIES,
    SLEEP_S,
    SLEEPY,
    SLOW_REPO,
    SOURCES,
    connected,
    embedder,
    local_answer,
    ranking,
    shared_home,
    slow_plugins,
)

pytestmark = pytest.mark.slow


# These tests check which repositories answer (and which are missing while a new owner loads), not
# the deadline (its own tests set theirs): a shard that is merely slow (a CI machine under load 15
# answered after 500 ms) must not count as missing.
SLOW_MACHINE_MS = 10_000.0


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return shared_home(tmp_path, extra=8)


@pytest.fixture
def router(ray_cluster3: SimulatedCluster, home: Path) -> Iterator[Router]:
    connected(ray_cluster3)
    router = Router(home, slow_plugins, embedder(home), deadline_ms=SLOW_MACHINE_MS)
    router.start(wait_s=120)
    yield router
    router.close(stop_actors=True)


def _full(response: SearchResponse, asked: int) -> None:
    assert response.coverage is not None
    assert (response.coverage.answered, response.coverage.asked) == (asked, asked)
    assert response.coverage.missing == ()
    assert not any("partial answer" in w for w in response.warnings)


def test_router_answers_equal_local_federation(router: Router, home: Path) -> None:
    repos = list(SOURCES)
    assert len(set(router.placement().values())) >= 2  # spread over several nodes
    for text in QUERIES:
        federated = router.search(repos, text)
        _full(federated, len(repos))
        assert ranking(federated) == ranking(local_answer(home, repos, text)), text
        single = router.search(["parsers"], text)
        _full(single, 1)
        assert ranking(single) == ranking(local_answer(home, ["parsers"], text)), text


def _group_mates(router: Router, repo: str, asked: list[str]) -> tuple[str, ...]:
    """The asked repositories that share ``repo``'s shard (``repo`` included), asked order."""
    return tuple(r for r in asked if router.group_of(r) == router.group_of(repo))


def test_a_late_shard_does_not_fail_the_query(router: Router) -> None:
    asked = list(SOURCES)
    late = _group_mates(router, SLOW_REPO, asked)
    assert len(late) < len(asked)  # the fixture's names: others answer
    start = time.monotonic()
    response = router.search(asked, f"{SLEEPY} read a file", deadline_ms=400)
    elapsed = time.monotonic() - start
    assert elapsed < 1.5, elapsed  # the deadline, not the sleeping shard's 3 s
    assert response.coverage is not None
    assert response.coverage.missing == late
    assert (response.coverage.answered, response.coverage.asked) == (4 - len(late), 4)
    for repo in late:
        assert any(
            f"{repo} (its shard did not answer within 400 ms)" in w for w in response.warnings
        )
    assert response.results and all(r.repo not in late for r in response.results)


def test_a_shard_killed_mid_query_gives_a_partial_answer_then_recovers(router: Router) -> None:
    import ray

    repos = list(SOURCES)
    result: list[SearchResponse] = []
    query = threading.Thread(
        target=lambda: result.append(router.search(repos, f"{SLEEPY} cache", deadline_ms=10_000))
    )
    query.start()
    time.sleep(SLEEP_S / 3)  # the slow shard is inside its search now
    owner = router.placement()[SLOW_REPO]
    ray.kill(router.actors(SLOW_REPO)[owner], no_restart=True)
    query.join(timeout=30)
    (response,) = result
    assert response.coverage is not None
    assert response.coverage.missing == _group_mates(router, SLOW_REPO, repos)
    assert any("storage (its shard failed: " in w for w in response.warnings)
    # The router starts a new actor on the owner; until it has loaded, answers stay partial.
    deadline = time.monotonic() + 60
    while True:
        again = router.search(repos, "cache")
        if again.coverage is not None and again.coverage.full:
            break
        assert time.monotonic() < deadline, again.warnings
        time.sleep(0.2)
    assert any(r.repo == SLOW_REPO for r in again.results)


def _whole_groups(router: Router) -> None:
    """Every group's repositories are placed on one node, its group's."""
    placement, groups = router.placement(), router.groups()
    for group, node in router.group_placement().items():
        assert {placement[r] for r in groups[group]} == {node}, group


def test_removing_a_node_moves_its_groups_whole_and_adding_one_hands_over(
    router: Router, ray_cluster3: SimulatedCluster, home: Path, tmp_path: Path
) -> None:
    connected(ray_cluster3)
    repos = sorted(router.repos)
    groups = router.groups()
    _whole_groups(router)
    head = ray_cluster3.nodes[0].node_id
    counts: dict[str, int] = {}
    for node in router.placement().values():
        counts[node] = counts.get(node, 0) + 1
    victim_id = max((n for n in counts if n != head), key=lambda n: counts[n])
    victim = next(i for i, n in enumerate(ray_cluster3.nodes) if n.node_id == victim_id)
    moved = sorted(r for r, n in router.placement().items() if n == victim_id)
    assert moved
    ray_cluster3.remove_node(victim)
    deadline = time.monotonic() + 60
    while victim_id in alive_nodes():
        assert time.monotonic() < deadline
        time.sleep(0.2)
    router.rebalance()
    assert victim_id not in router.placement().values()
    assert router.groups() == groups  # the same groups, moved whole
    _whole_groups(router)
    # Queries keep answering (partially, while the new owners load), then fully again.
    partial = router.search(repos, "tool", deadline_ms=SLOW_MACHINE_MS)
    assert partial.coverage is not None
    assert set(partial.coverage.missing) <= set(moved)
    assert router.wait_ready(60)
    text = "tool_3"
    answer = router.search(repos, text, deadline_ms=SLOW_MACHINE_MS)
    _full(answer, len(repos))
    assert ranking(answer) == ranking(local_answer(home, repos, text))

    # A node joins: the repositories it now owns keep answering from their old actors until
    # its actors have loaded (the handover), then move.
    before = router.placement()
    ray_cluster3.add_node(tmp_path / "joined-disk")
    ray_cluster3.cluster.wait_for_nodes()
    router.rebalance()
    taken = sorted(r for r, n in router.placement().items() if before[r] != n)
    _whole_groups(router)
    assert set(taken) == {r for g in {router.group_of(r) for r in taken} for r in groups[g]}
    during = router.search(repos, clean_query("tool"), deadline_ms=SLOW_MACHINE_MS)
    _full(during, len(repos))
    assert router.wait_ready(60)
    for repo in taken:
        assert set(router.actors(repo)) == {router.placement()[repo]}  # the old one stopped
    _full(router.search(repos, "tool", deadline_ms=SLOW_MACHINE_MS), len(repos))


def _serving_pids(router: Router, repos: list[str]) -> dict[str, int]:
    """repository -> the process id of the actor answering for it."""
    import ray

    return {r: ray.get(router.actors(r)[router.placement()[r]].pid.remote()) for r in repos}


def test_many_repositories_are_served_by_fewer_actors_one_call_per_group(router: Router) -> None:
    repos = sorted(router.repos)
    groups = router.groups()
    assert len(groups) <= 3 < len(repos)  # a group per CPU of the three nodes
    assert sorted(r for members in groups.values() for r in members) == repos
    pids = _serving_pids(router, repos)
    assert len(set(pids.values())) == len(groups)
    for members in groups.values():
        assert len({pids[r] for r in members}) == 1
    answer = router.search(repos, "tool")
    _full(answer, len(repos))
    assert router.last_timing["shards"] == len(groups)


def test_a_group_actor_dying_names_all_its_repositories_then_recovers(
    router: Router, home: Path
) -> None:
    import ray

    repos = sorted(router.repos)
    group, members = max(router.groups().items(), key=lambda item: len(item[1]))
    assert len(members) >= 2
    actor = router.actors(members[0])[router.group_placement()[group]]
    ray.kill(actor, no_restart=True)
    deadline = time.monotonic() + 30
    while True:  # ray.kill returns before the process is gone
        try:
            ray.get(actor.pid.remote(), timeout=5)
        except Exception:
            break
        assert time.monotonic() < deadline
        time.sleep(0.1)
    response = router.search(repos, "tool")
    assert response.coverage is not None
    assert response.coverage.missing == members  # every one of them, in the asked order
    assert (response.coverage.answered, response.coverage.asked) == (
        len(repos) - len(members),
        len(repos),
    )
    (warning,) = [w for w in response.warnings if "partial answer" in w]
    for repo in members:
        assert f"{repo} (its shard failed: " in warning
    assert response.results and all(r.repo not in members for r in response.results)
    deadline = time.monotonic() + 60
    while True:  # a new actor for the whole group, on its owner
        again = router.search(repos, "tool_3")
        if again.coverage is not None and again.coverage.full:
            break
        assert time.monotonic() < deadline, again.warnings
        time.sleep(0.2)
    assert ranking(again) == ranking(local_answer(home, repos, "tool_3"))


def test_one_actor_per_repository_when_not_compound(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    connected(ray_cluster3)
    home = shared_home(tmp_path)
    repos = list(SOURCES)
    router = Router(home, slow_plugins, embedder(home), deadline_ms=SLOW_MACHINE_MS, compound=False)
    router.start(wait_s=120)
    try:
        assert len(router.groups()) == len(repos)
        assert len(set(_serving_pids(router, repos).values())) == len(repos)
        for text in QUERIES[:3]:
            answer = router.search(repos, text)
            _full(answer, len(repos))
            assert ranking(answer) == ranking(local_answer(home, repos, text)), text
    finally:
        router.close(stop_actors=True)


def test_memory_per_shard_actor(router: Router) -> None:
    import ray

    owner = router.placement()["greeters"]
    memory = ray.get(router.actors("greeters")[owner].memory.remote())
    mib = {k: round(v / 2**20, 1) for k, v in memory.items()}
    print(f"shard actor memory: {mib}")
    assert memory["index_bytes"] > 0
    assert 0 < memory["uss"] <= memory["rss"]


def test_a_newer_generation_in_the_shared_folder_is_answered_from_soon(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    connected(ray_cluster3)
    from engine.index.home import Home
    from tests.engine.cluster.search_homes import index

    home = shared_home(tmp_path, ["greeters", "parsers"])
    router = Router(home, slow_plugins, embedder(home), refresh_s=0.2, deadline_ms=SLOW_MACHINE_MS)
    router.start(wait_s=120)
    try:
        root = Home(home).get("greeters").root
        (root / "welcome.py").write_text("def welcome_guest(name):\n    return 'hi ' + name\n")
        index(home, root, "greeters")
        deadline = time.monotonic() + 60
        while True:
            response = router.search(["greeters", "parsers"], "welcome_guest")
            _full(response, 2)
            if response.results and response.results[0].path == "welcome.py":
                break
            assert time.monotonic() < deadline, "the new generation was never swapped in"
            time.sleep(0.2)
    finally:
        router.close(stop_actors=True)


def test_a_repository_without_a_published_index_is_named_not_waited_for(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    connected(ray_cluster3)
    from engine.index.home import Home

    home = shared_home(tmp_path, ["greeters"])
    Home(home).register("unbuilt", tmp_path / "unbuilt")  # registered, nothing published
    router = Router(home, slow_plugins, embedder(home), deadline_ms=SLOW_MACHINE_MS)
    start = time.monotonic()
    router.start(wait_s=120)
    try:
        assert time.monotonic() - start < 60
        response = router.search(["greeters", "unbuilt"], "greet")
        assert response.coverage is not None and response.coverage.missing == ("unbuilt",)
        assert any("unbuilt (unbuilt has no published generation" in w for w in response.warnings)
        assert response.results and response.results[0].repo == "greeters"
    finally:
        router.close(stop_actors=True)
