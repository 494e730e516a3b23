"""The simulated cluster is what the cluster tests assume: three nodes, each its own disk."""

from __future__ import annotations

import os

import pytest

from tests.engine.cluster.conftest import NODE_DISK_ENV, SimulatedCluster

pytestmark = pytest.mark.slow


def test_three_nodes_each_with_its_own_disk(ray_cluster3: SimulatedCluster) -> None:
    import ray

    @ray.remote(num_cpus=1)
    def disk() -> str:
        return os.environ.get(NODE_DISK_ENV, "")

    alive = [node for node in ray.nodes() if node["Alive"]]
    assert len(alive) == 3
    strategy = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy
    seen = {
        ray.get(disk.options(scheduling_strategy=strategy(node["NodeID"], soft=False)).remote())
        for node in alive
    }
    assert seen == {str(path) for path in ray_cluster3.disks}
