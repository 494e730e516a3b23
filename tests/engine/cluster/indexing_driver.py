"""A cluster build's coordinator in its own process, for the tests that kill it.

    python -m tests.engine.cluster.indexing_driver ADDRESS REPOS STORE HOME STAGE

It prints ``AT <stage> <done>`` for every progress call and flushes, and embeds slowly
(``SlowHashingEmbedder``), so that the test can SIGKILL it in the middle of the embedding
job or between two repositories' publishing. ``STAGE`` ``publishing`` makes it wait after
the first repository is published (the test kills it there).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from signals.vector.embedder import FloatMatrix, HashingEmbedder

EMBED_DELAY_S = 0.4  # per batch: a round of a few batches lasts a few seconds


class SlowHashingEmbedder(HashingEmbedder):
    """The registry's fake (same model id, same vectors), slower."""

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        time.sleep(EMBED_DELAY_S)
        return super().embed_documents(texts)


def main(address: str, repos: Path, store: Path, home: Path, stage: str) -> None:
    from tests.conftest import install_fake_registry

    install_fake_registry()
    import ray

    from engine.cluster.indexing import index_on_cluster
    from engine.cluster.indexing_repos import read_repo_list
    from engine.signal import IndexOptions
    from signals import registry
    from signals.vector.cluster_embedding import ClusterVectorEmbedding
    from tests.fakes import fake_loader

    ray.init(address=address, log_to_driver=False)

    def progress(name: str, done: int, total: int) -> None:
        print(f"AT {name} {done}", flush=True)
        if stage == "publishing" and name == "publishing" and done == 1:
            time.sleep(120)  # killed here

    options = IndexOptions(home=home)
    side = ClusterVectorEmbedding(options, load_model=fake_loader(SlowHashingEmbedder(64)))
    with side:
        index_on_cluster(
            read_repo_list(repos), store, registry.plugins(), options, side, progress=progress
        )
    print("DONE", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5])


def broken_embedder(folder: Path | None, *, threads: int) -> HashingEmbedder:
    """An actor's model that cannot load (a node missing a library, a damaged export)."""
    raise RuntimeError("onnxruntime is not installed on this node")
