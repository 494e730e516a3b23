"""``engine query --cluster``: the CLI through the router, on the simulated cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from tests.engine.cluster.conftest import SimulatedCluster
from tests.engine.cluster.search_homes import SOURCES, connected, local_answer, shared_home

pytestmark = pytest.mark.slow


def _query(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["query", *args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.output)
    return data


def test_query_cluster_answers_like_a_local_query_and_says_its_coverage(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    connected(ray_cluster3)
    import ray

    from engine.cluster.search_registry import NAMESPACE

    home = shared_home(tmp_path)
    repos = ",".join(SOURCES)
    store = ("--cluster", ray_cluster3.address, "--cluster-store", str(home))
    # The first query meets shards that have just loaded (cold searchers), a compound one
    # searching two repositories in turn: at load 7 it once came back with none of the four
    # within the default 500 ms, and this test checks coverage and ranking, not the deadline.
    first = _query(*store, repos, "greet a person by name", "--deadline-ms", "10000")
    assert first["coverage"] == {"answered": 4, "asked": 4, "missing": []}
    expected = local_answer(home, list(SOURCES), "greet a person by name")
    got = first["results"]
    assert isinstance(got, list)
    assert [(r["repo"], r["filePath"], r["score"]) for r in got] == [
        (r.repo, r.path, r.score) for r in expected.results
    ]
    # The shard actors outlive the command: a second one finds them loaded.
    again = _query(*store, "--all", "parse_request", "--deadline-ms", "2000")
    assert again["coverage"] == {"answered": 4, "asked": 4, "missing": []}
    results = again["results"]
    assert isinstance(results, list) and results[0]["symbolName"] == "parse_request"
    for actor in ray.util.list_named_actors(all_namespaces=True):
        if actor["namespace"] == NAMESPACE and actor["name"].startswith("engine-shard-"):
            ray.kill(ray.get_actor(actor["name"], namespace=NAMESPACE))


def test_query_cluster_refuses_a_folder_without_indexes(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    connected(ray_cluster3)
    result = CliRunner().invoke(
        main,
        ["query", "--cluster", ray_cluster3.address, "--cluster-store", str(tmp_path), "a", "x"],
    )
    assert result.exit_code == 1
    assert "holds no indexes" in result.output


def test_serve_cluster_search_answers_through_one_router(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    connected(ray_cluster3)
    from cli.commands.query_cluster import cluster_search
    from engine.types import Filters

    home = shared_home(tmp_path, ["greeters", "parsers"])
    search = cluster_search(ray_cluster3.address, home, 2000)
    try:
        first = search(["greeters", "parsers"], "parse_request", 5, Filters())
        assert first.coverage is not None and first.coverage.full
        assert first.results[0].symbol_name == "parse_request"
        again = search(["greeters"], "greet", 5, Filters(languages=("python",)))
        assert again.coverage is not None and again.coverage.full
        assert again.results[0].repo == "greeters"
    finally:
        search.close()
