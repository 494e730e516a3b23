"""One repository's fast phase on a worker node, and the embedding requests it returns.

The worker runs the local ``Indexer`` unchanged (walk, read, chunk, the lexical and symbol
signals) into a fresh home on its node's own disk, with every slow signal deferred: its
builder stops the slow phase the way an interrupt does (``BuildAborted``), which leaves the
fast generation published with the slow signals "pending". That generation is copied whole
into the shared store's staging folder, and the worker returns what the vector builder would
embed for a build from empty: every text, once, in its order, with its content hash. The
worker never embeds and never opens the embedding cache; the coordinator does both.
"""

from __future__ import annotations

import functools
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.cluster.indexing_embed import node_disk
from engine.cluster.indexing_store import SharedStore
from engine.errors import BuildAborted, EngineError, SignalUnavailable
from engine.index.generations import current_generation
from engine.index.home import Home
from engine.index.manifest import read_manifest
from engine.index.store import STORE_FILE, ChunkStore
from engine.indexing.indexer import Indexer
from engine.signal import (
    BuildJob,
    BuildReport,
    IndexOptions,
    OpenOptions,
    Signal,
    SignalBuilder,
    SignalPlugin,
)
from engine.types import Chunk


class SlowPhaseDeferred(BuildAborted):
    """Raised by a deferred slow signal's build: the coordinator builds it after embedding."""


class DeferredBuilder:
    """A slow signal's place in the worker's fast phase: "pending", built elsewhere."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def slow(self) -> bool:
        return True

    def build(self, job: BuildJob) -> BuildReport:
        raise SlowPhaseDeferred(f"{self._name}: built by the cluster's coordinator")


def _deferred_builder(name: str, options: IndexOptions) -> SignalBuilder:
    del options
    return DeferredBuilder(name)


def _not_opened(directory: Path, meta: Mapping[str, Any], options: OpenOptions) -> Signal:
    raise SignalUnavailable(f"{directory}: a worker's fast phase never opens a signal")


def fast_plugins(
    plugins: Mapping[str, SignalPlugin], slow: Sequence[str]
) -> dict[str, SignalPlugin]:
    """``plugins`` for a worker: each slow signal deferred. Only module-level functions and
    their partials, so that they pickle by reference (a caller's closures stay home)."""
    return {
        name: (
            SignalPlugin(
                name=name,
                make_builder=functools.partial(_deferred_builder, name),
                open=_not_opened,
            )
            if name in slow
            else plugin
        )
        for name, plugin in plugins.items()
    }


@dataclass
class FastPhase:
    """What a worker did for one repository; ``error`` says why it did not (then nothing
    was staged)."""

    slug: str
    root: str
    node: str = ""
    staged: str = ""  # the fast generation's folder in the shared store's staging area
    keys: list[bytes] = field(default_factory=list)  # unique texts' hashes, in embed order
    texts: list[str] = field(default_factory=list)  # the texts of ``keys``
    files: int = 0
    chunks: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""


def run_fast_phase(
    slug: str,
    root: str,
    plugins: Mapping[str, SignalPlugin],
    options: IndexOptions,
    texts_for: Callable[[Sequence[Chunk]], list[str]],
    key_of: Callable[[str], bytes],
    store_root: str,
    run_id: str,
) -> FastPhase:
    """The body of the per-repository Ray task (plain Python: tests call it directly).

    ``options.home`` is replaced by the node's scratch home: caches and models there are the
    fast signals' own business (the symbol signal's SCIP runs), never the embedding cache.
    """
    started = time.perf_counter()
    result = FastPhase(slug=slug, root=root, node=socket.gethostname())
    scratch = Path(tempfile.mkdtemp(prefix=f"index-{slug}-", dir=node_disk()))
    try:
        home = Home(scratch / "home")
        indexer = Indexer(home, plugins, replace(options, home=home.root))
        try:
            indexer.index(slug, Path(root), full=True)
        except SlowPhaseDeferred:
            pass  # the fast generation is published; the coordinator builds the rest
        except EngineError as exc:  # a missing folder, a file given for a folder
            result.error = str(exc)
            return result
        generation = current_generation(home.repo_dir(slug))
        if generation is None:
            result.error = f"{slug}: the fast phase published nothing"
            return result
        store = ChunkStore.open_readonly(generation / STORE_FILE)
        try:
            chunks = list(store.iter_chunks())
            result.files = store.file_count()
        finally:
            store.close()
        result.chunks = len(chunks)
        unique: dict[bytes, str] = {}
        for text in texts_for(chunks):
            unique.setdefault(key_of(text), text)
        result.keys, result.texts = list(unique), list(unique.values())
        result.problems = list(read_manifest(generation).problems)
        result.staged = str(SharedStore(Path(store_root)).stage(run_id, slug, generation))
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        result.seconds = time.perf_counter() - started
