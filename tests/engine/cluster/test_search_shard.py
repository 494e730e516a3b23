"""A shard searcher without Ray: local copies of the shared generations, answers with the
router's vectors equal to a local search, and a newer generation swapped in."""

from __future__ import annotations

from pathlib import Path

from engine.cluster.search_copies import copy_current, node_home, shared_pointer
from engine.cluster.search_shard import ShardRequest, ShardSearcher, process_memory
from engine.index.home import Home
from engine.search.searcher import clean_query
from signals.vector.query_vector import embed_query
from tests.conftest import fake_plugins
from tests.engine.cluster.search_homes import QUERIES, index, local_answer, ranking, shared_home


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
        answer = shard.search(_request(shard, home, repos, text))
        assert set(answer.responses) == set(repos) and not answer.failures
        for repo in repos:
            expected = local_answer(home, [repo], text)
            assert ranking(answer.responses[repo]) == ranking(expected), (repo, text)
            assert answer.responses[repo].warnings == expected.warnings
    assert shard.memory()["index_bytes"] > 0
    shard.close()


def test_a_repository_it_does_not_hold_is_a_failure_not_an_error(tmp_path: Path) -> None:
    home = shared_home(tmp_path, ["greeters"])
    shard = ShardSearcher(str(home), ["greeters", "absent"], fake_plugins, disk=str(tmp_path))
    models = shard.load()
    assert set(models) == {"greeters"}
    answer = shard.search(ShardRequest(("greeters", "absent"), "greet", 5))
    assert "absent" in answer.failures and "no index for absent" in answer.failures["absent"]
    # No vector was sent: the vector signal refuses and the others still answer.
    greeters = answer.responses["greeters"]
    assert greeters.results
    assert any("brought no vector" in w for w in greeters.warnings)


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
    assert answer.responses["greeters"].results[0].path == "welcome.py"
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
