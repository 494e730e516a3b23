"""Ray on this one machine: a local instance, and a simulated cluster of three nodes.

Both are session-scoped (a Ray start costs 10-28 s here) and only for tests marked slow.
Each simulated node gets its own "local disk": a folder named by ENGINE_NODE_DISK in that
node's worker environment, the way a real node would have its own disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Tests never touch the network: no usage statistics from the clusters they start.
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
ray = pytest.importorskip("ray", reason="the cluster extra is not installed")

NODE_DISK_ENV = "ENGINE_NODE_DISK"


@pytest.fixture(scope="session")
def ray_local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local Ray instance with two CPUs, no dashboard, its files in a temporary folder."""
    if ray.is_initialized():
        ray.shutdown()
    temp = tmp_path_factory.mktemp("ray-local")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _temp_dir=str(temp),
        log_to_driver=False,
        runtime_env={"env_vars": {NODE_DISK_ENV: str(temp / "disk")}},
    )
    yield ray
    ray.shutdown()


@dataclass
class SimulatedCluster:
    cluster: Any  # ray.cluster_utils.Cluster
    disks: list[Path]  # one "local disk" per node, in the order the nodes were added
    nodes: list[Any]  # ray's node handles, same order

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def add_node(self, disk: Path) -> Any:
        disk.mkdir(parents=True, exist_ok=True)
        node = self.cluster.add_node(num_cpus=1, env_vars={NODE_DISK_ENV: str(disk)})
        self.disks.append(disk)
        self.nodes.append(node)
        return node

    def remove_node(self, index: int) -> None:
        self.cluster.remove_node(self.nodes[index])


@pytest.fixture(scope="session")
def ray_cluster3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatedCluster]:
    """A head and two more nodes, one CPU each, each with its own ENGINE_NODE_DISK folder.

    The driver (the test process) is connected to it. Tests that remove a node should add one
    back (``add_node``) so that later tests still see three.
    """
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    root = tmp_path_factory.mktemp("ray-cluster3")
    head_disk = root / "node-0"
    head_disk.mkdir()
    previous = os.environ.get(NODE_DISK_ENV)
    cluster = Cluster(
        initialize_head=True,
        connect=False,
        head_node_args={
            "num_cpus": 1,
            "include_dashboard": False,
            "env_vars": {NODE_DISK_ENV: str(head_disk)},
        },
    )
    simulated = SimulatedCluster(cluster, [head_disk], [cluster.head_node])
    for n in (1, 2):
        simulated.add_node(root / f"node-{n}")
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    yield simulated
    ray.shutdown()
    cluster.shutdown()
    if previous is None:
        os.environ.pop(NODE_DISK_ENV, None)
    else:
        os.environ[NODE_DISK_ENV] = previous
