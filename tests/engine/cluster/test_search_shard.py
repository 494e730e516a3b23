"""A shard searcher without Ray: local copies of the shared generations, answers with the
router's vectors equal to a local search (one repository, and a group of them merged in the
shard and again by the router equal to local federation), and a newer generation swapped in."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from engine.cluster.search_copies import copy_current, node_home, shared_pointer
from engine.cluster.search_merge import router_merge
from engine.cluster.search_shard import ShardRequest, ShardSearcher, process_memory
from engine.index.home import Home
from engine.search.searcher import clean_query
from signals.vector.query_vector import embed_query
from tests.conftest import fake_plugins
from tests.engine.cluster.search_homes import (
    QUERIES,
    SOURCES,
    index,
    local_answer,
    ranking,
    shared_home,
)


def _request(shard: ShardSearcher, home: Path, repos: tuple[str, ...], text: str) -> ShardRequest:
    models = shard.load()
    vectors = tuple({embed_query(models[r], clean_query(text), home) for r in repos})
    return ShardRequest(repos, clean_query(text), 10, vectors)


def test_copies_are_published_on_the_node_disk(tmp_path: Path) -> None:
    home = shared_home(tmp_path, ["greeters"])
    local = node_home(str(tmp_path / "disk"))
    copy = copy_current(Home(home), local, "greeters")
    assert copy.path.parent == local.repo_dir("greeters")
    assert (copy.path / "chunks.sqlite").is_file()
    assert shared_pointer(Home(home), "greeters") == copy.generation
    again = copy_current(Home(home), local, "greeters")  # an actor restarted on this node
    assert again.path == copy.path
    assert local.get("greeters").root == Home(home).get("greeters").root


def test_answers_equal_a_local_search_and_no_model_is_loaded(tmp_path: Path) -> None:
    home = shared_home(tmp_path)
    repos = ("greeters", "parsers")
    shard = ShardSearcher(str(home), list(repos), fake_plugins, disk=str(tmp_path / "disk"))
    for text in QUERIES:
        for repo in repos:
            answer = shard.search(_request(shard, home, (repo,), text))
            assert set(answer.responses) == {repo} and not answer.failures
            expected = local_answer(home, [repo], text)
            got = router_merge([repo], answer.responses, [answer.results], 10, clean_query(text))
            assert ranking(got) == ranking(expected), (repo, text)
            assert got.warnings == expected.warnings
    assert shard.memory()["index_bytes"] > 0
    shard.close()


def test_two_compound_shards_merged_by_the_router_equal_local_federation(tmp_path: Path) -> None:
    home = shared_home(tmp_path)
    asked = list(SOURCES)  # greeters, parsers, shapes, storage: two groups, interleaved
    groups = [("greeters", "shapes"), ("parsers", "storage")]
    shards = [
        ShardSearcher(str(home), list(g), fake_plugins, disk=str(tmp_path / f"disk-{n}"))
        for n, g in enumerate(groups)
    ]
    for limit in (1, 3, 10):
        for text in QUERIES:
            answers = [
                s.search(replace(_request(s, home, g, text), limit=limit, federated=True))
                for s, g in zip(shards, groups, strict=True)
            ]
            assert all(len(a.results) <= limit for a in answers)
            headers = {r: h for a in answers for r, h in a.responses.items()}
            got = router_merge(asked, headers, [a.results for a in answers], limit, text)
            expected = local_answer(home, asked, text, limit)
            assert ranking(got) == ranking(expected), (limit, text)
            assert got.warnings == expected.warnings
            assert (got.low_confidence, got.query_kind) == (
                expected.low_confidence,
                expected.query_kind,
            )
            assert [r.signal for r in got.runs] == [r.signal for r in expected.runs]
    for shard in shards:
        shard.close()


def test_a_router_finding_a_running_shard_adds_the_repositories_it_needs(tmp_path: Path) -> None:
    home = shared_home(tmp_path, ["greeters", "parsers"])
    shard = ShardSearcher(str(home), ["greeters"], fake_plugins, disk=str(tmp_path / "disk"))
    assert set(shard.load()) == {"greeters"}
    assert set(shard.load(["parsers", "greeters"])) == {"greeters", "parsers"}
    shard.close()


def test_a_repository_it_does_not_hold_is_a_failure_not_an_error(tmp_path: Path) -> None:
    home = shared_home(tmp_path, ["greeters"])
    shard = ShardSearcher(str(home), ["greeters", "absent"], fake_plugins, disk=str(tmp_path))
    models = shard.load()
    assert set(models) == {"greeters"}
    answer = shard.search(ShardRequest(("greeters", "absent"), "greet", 5))
    assert "absent" in answer.failures and "no index for absent" in answer.failures["absent"]
    # No vector was sent: the vector signal refuses and the others still answer.
    assert answer.results and {r.repo for r in answer.results} == {"greeters"}
    assert any("brought no vector" in w for w in answer.responses["greeters"].warnings)


def test_a_newer_shared_generation_is_swapped_in(tmp_path: Path) -> None:
    home = shared_home(tmp_path, ["greeters"])
    shard = ShardSearcher(str(home), ["greeters"], fake_plugins, disk=str(tmp_path / "disk"))
    shard.load()
    before = shard.generations()["greeters"]
    root = Home(home).get("greeters").root
    (root / "welcome.py").write_text("def welcome_guest(name):\n    return 'welcome ' + name\n")
    index(home, root, "greeters")
    assert shared_pointer(Home(home), "greeters") != before
    assert shard.generations()["greeters"] == before  # until it looks
    shard.refresh(wait=True)
    assert shard.generations()["greeters"] == shared_pointer(Home(home), "greeters")
    answer = shard.search(_request(shard, home, ("greeters",), "welcome_guest"))
    assert answer.results[0].path == "welcome.py"
    shard.close()


def test_process_memory_reads_proc() -> None:
    memory = process_memory()
    assert memory["rss"] >= memory["uss"] > 0


def test_a_router_refuses_a_repository_not_in_the_shared_folder(tmp_path: Path) -> None:
    import pytest

    from engine.cluster.search_router import Router
    from engine.errors import RepoNotFound
    from tests.engine.cluster.search_homes import embedder

    home = shared_home(tmp_path, ["greeters"])
    with pytest.raises(RepoNotFound, match="no index for nope"):
        Router(home, fake_plugins, embedder(home), repos=["greeters", "nope"])


def test_a_large_repository_keeps_a_shard_of_its_own(tmp_path: Path) -> None:
    from engine.cluster.grouping import own_group
    from engine.cluster.search_registry import chunk_count
    from engine.cluster.search_router import Router
    from tests.engine.cluster.search_homes import embedder

    home = shared_home(tmp_path, extra=4)
    counts = {r: chunk_count(Home(home), r) for r in ("greeters", "storage", "extra-0")}
    assert counts["storage"] > counts["extra-0"] > 0
    threshold = counts["storage"] - 1
    router = Router(home, fake_plugins, embedder(home), groups=2, own_chunks=threshold)
    groups = router.groups()
    assert groups[own_group("storage")] == ("storage",)
    assert set(groups) - {g for g in groups if g.startswith("repo-")} <= {"g0", "g1"}
    big = {r for r in router.repos if chunk_count(Home(home), r) > threshold}
    assert {m[0] for g, m in groups.items() if g.startswith("repo-")} == big
    assert sorted(r for m in groups.values() for r in m) == sorted(router.repos)
