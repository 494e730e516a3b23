"""The coordinator's slow phase for one repository: the local one, on a copy of the fast
generation a worker staged.

What ``Indexer._slow_phase`` does after a build from empty, step for step: the new
generation links every file of the fast one but the slow signals' folders and the manifest,
each slow builder gets a job holding every chunk in id order (no previous generation), and
the manifest is the fast one with the slow signals' states put in. The vector builder finds
every text in the embedding cache (the round's job put them there), so it embeds nothing,
and its FAISS index and chunk table are the ones a local build writes. A slow signal that
fails fails the repository: a cluster build publishes complete indexes only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from engine.errors import EngineError
from engine.index.generations import MANIFEST, link_tree
from engine.index.health import store_stamp
from engine.index.manifest import Manifest, SignalState, read_manifest, write_manifest
from engine.index.store import STORE_FILE, ChunkStore
from engine.indexing.job_sources import StoreDefinitions, StoreSource
from engine.signal import BuildJob, SignalBuilder


class SlowSignalFailed(EngineError):
    """A slow signal could not be built on the coordinator; nothing was published."""


def finish_generation(fast: Path, generation: Path, builders: Sequence[SignalBuilder]) -> Manifest:
    """Build ``builders`` (the slow ones) into ``generation`` (created, empty) from the fast
    generation ``fast``, both on this machine's disk; write and return its manifest."""
    names = {b.name for b in builders}
    for child in fast.iterdir():
        if child.name in names or child.name == MANIFEST:
            continue
        if child.is_dir():
            link_tree(child, generation / child.name)
        else:
            os.link(child, generation / child.name)
    manifest = read_manifest(fast)
    store = ChunkStore.open_readonly(generation / STORE_FILE)
    try:
        chunks = list(store.iter_chunks())
        paths = sorted(store.files())
        states: dict[str, SignalState] = {}
        for builder in builders:
            directory = generation / builder.name
            directory.mkdir()
            job = BuildJob(
                repo_root=Path(manifest.root),
                directory=directory,
                previous_dir=None,
                previous_meta={},
                added=chunks,
                removed_ids=(),
                removed_paths=(),
                definitions=StoreDefinitions(store),
                changed_paths=paths,
                source=StoreSource(store, chunks),
            )
            started = time.perf_counter()
            built = builder.build(job)
            seconds = time.perf_counter() - started
            if not built.ready:
                raise SlowSignalFailed(f"{manifest.repo}: {builder.name} signal: {built.message}")
            states[builder.name] = SignalState(
                ready=True,
                synced=True,
                message=built.message,
                meta=built.meta,
                seconds=round(seconds, 3),
            )
    finally:
        store.close()
    finished = replace(
        manifest,
        signals={**manifest.signals, **states},
        store_stamp=store_stamp(generation / STORE_FILE),
    )
    write_manifest(generation, finished)
    return finished
