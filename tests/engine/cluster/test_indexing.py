"""A cluster-built index is the local one: same chunk store rows, same vector files, same
manifest apart from timestamps, same rankings alone and federated (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.index.generations import current_generation
from tests.engine.cluster.conftest import SimulatedCluster
from tests.engine.cluster.indexing_helpers import (
    QUERIES,
    build_cluster,
    build_local,
    local_copy,
    make_repos,
    manifest_json,
    published,
    rankings,
    rows,
    vector_files,
)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("repos_per_round", [None, 2], ids=["one-round", "two-rounds"])
def test_cluster_index_equals_local_index(
    ray_cluster3: SimulatedCluster, tmp_path: Path, repos_per_round: int | None
) -> None:
    repos = make_repos(tmp_path / "repos")
    build_local(tmp_path / "local", repos)
    report = build_cluster(
        tmp_path / "coordinator", tmp_path / "store", repos, repos_per_round=repos_per_round
    )

    assert not report.failed, report.failed
    assert report.rounds == (1 if repos_per_round is None else 2)
    # The shared retry() is embedded once for the three repositories.
    assert report.embedded < sum(r.texts for r in report.repos)
    assert [r.embedded for r in report.repos][1:] == [r.texts - 1 for r in report.repos[1:]]
    node_home = local_copy(tmp_path / "store", tmp_path / "search-node")
    slugs = [spec.slug for spec in repos]
    for slug in slugs:
        local, cluster = published(tmp_path / "local", slug), published(node_home, slug)
        assert rows(cluster) == rows(local), slug
        assert vector_files(cluster) == vector_files(local), slug
        assert manifest_json(cluster) == manifest_json(local), slug
    for query in QUERIES:
        for slug in slugs:
            assert rankings(node_home, [slug], query) == rankings(tmp_path / "local", [slug], query)
        assert rankings(node_home, slugs, query) == rankings(tmp_path / "local", slugs, query)
    assert not (tmp_path / "store" / "staging").exists() or not any(
        (tmp_path / "store" / "staging").iterdir()
    )


def test_a_rerun_publishes_the_same_index_again(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    repos = make_repos(tmp_path / "repos")
    store = tmp_path / "store"
    first = build_cluster(tmp_path / "coordinator", store, repos)
    before = {
        s.slug: (rows(published(store, s.slug)), vector_files(published(store, s.slug)))
        for s in repos
    }
    second = build_cluster(tmp_path / "coordinator", store, repos)

    assert second.embedded == 0 and second.cached == first.texts
    for spec in repos:
        generation = current_generation(store / "repos" / spec.slug)
        assert generation is not None and generation.name == "gen-000002"
        assert (rows(generation), vector_files(generation)) == before[spec.slug]
