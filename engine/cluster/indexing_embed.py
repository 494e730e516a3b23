"""One round's embedding on the cluster: a Ray Data job over a warm pool of model actors.

Each row of the job is one batch exactly as the local builder would form it
(``EmbeddingSide.batches``), and an actor embeds a row with one ``embed_documents`` call: the
encoder's int8 activations are quantised per run, so other batches would give other bits.
One row per call (``batch_size=1``) keeps Ray Data from merging or splitting batches; a row is
64 texts, ~2-4 CPU-s of MiniLM, against Ray Data's ~30 ms per call.

Each actor holds one copy of the model. The model's files travel once through the object
store and are written to the node's disk (``ENGINE_NODE_DISK``, else the temp folder), so a
node needs neither the engine home nor the model installed; actors on one node share the
copy. Ray is imported inside the functions: nothing of the local path imports this module.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from engine.types import Chunk

NODE_DISK_ENV = "ENGINE_NODE_DISK"  # a node's own disk; the temp folder when unset
_MODELS_FOLDER = "engine-models"


class DocumentEmbedder(Protocol):
    """What an actor runs (the vector signal's ``Embedder``, as far as documents go)."""

    def embed_documents(self, texts: Sequence[str]) -> Any: ...


class EmbeddingSide(Protocol):
    """The vector signal's part in a cluster build, handed in by the caller.

    ``texts`` and ``key`` run on the workers and ``make_embedder`` in the actors, so they
    must pickle (module-level functions, partials of them, plain values); the rest runs on
    the coordinator, which alone opens the embedding cache.
    """

    @property
    def dim(self) -> int: ...

    @property
    def texts(self) -> Callable[[Sequence[Chunk]], list[str]]:
        """A build from empty's texts for a repository's chunks, in the order it embeds them."""
        ...

    @property
    def key(self) -> Callable[[str], bytes]:
        """The cache key of a text (its content hash)."""
        ...

    @property
    def model_folder(self) -> Path | None:
        """A folder of files every actor's node needs; None when the model needs none."""
        ...

    @property
    def make_embedder(self) -> Callable[..., DocumentEmbedder]:
        """``make_embedder(folder, threads=n)``: the model an actor runs."""
        ...

    def cached(self, keys: Iterable[bytes]) -> set[bytes]: ...

    def put(self, keys: Sequence[bytes], vectors: Any) -> None: ...

    def batches(self, keys: Sequence[bytes], texts: Mapping[bytes, str]) -> list[list[bytes]]:
        """``keys`` (not cached, in the local order) as the local builder batches them."""
        ...


@dataclass
class EmbedStats:
    """What the round's job did and where its time went (seconds are wall clock)."""

    batches: int = 0
    texts: int = 0
    actors: int = 0
    seconds: float = 0.0  # the whole job, from submitting it to its last row
    first_row_s: float = 0.0  # until the first row came back: the pool's start plus one batch
    pool_start_s: float = 0.0  # until the last actor had its model loaded
    model_s: float = 0.0  # the actors' time inside embed_documents, summed
    model_cpu_s: float = 0.0  # the CPU time of those calls (every encoder thread), summed
    # Each actor's time between its model being loaded and its last batch's end that was not
    # spent in embed_documents, summed: what Ray Data costs beyond the model.
    framework_s: float = 0.0
    per_actor: dict[str, float] = field(default_factory=dict)  # model seconds per actor

    @property
    def framework_share(self) -> float:
        return self.framework_s / self.model_s if self.model_s else 0.0


def node_disk() -> Path:
    """This node's own disk for scratch work: ``ENGINE_NODE_DISK``, else the temp folder."""
    configured = os.environ.get(NODE_DISK_ENV)
    path = Path(configured) if configured else Path(tempfile.gettempdir()) / "engine-node"
    path.mkdir(parents=True, exist_ok=True)
    return path


def model_files(folder: Path | None) -> dict[str, bytes] | None:
    """The files of a model folder (flat, as an ONNX export is), to ship to the actors."""
    if folder is None:
        return None
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _unpack_model(name: str, files: Mapping[str, bytes]) -> Path:
    """The model's folder on this node's disk, written once per node (whole or not at all:
    a folder is renamed into place after its last file is written)."""
    target = node_disk() / _MODELS_FOLDER / name
    if target.is_dir():
        return target
    partial = target.with_name(f".{name}.{uuid.uuid4().hex}")
    partial.mkdir(parents=True)
    for filename, data in files.items():
        (partial / filename).write_bytes(data)
    try:
        partial.rename(target)
    except OSError:  # another actor on this node got there first
        shutil.rmtree(partial, ignore_errors=True)
    return target


class EmbedActor:
    """A Ray Data callable class: one model copy, loaded when the actor starts."""

    def __init__(
        self,
        make_embedder: Callable[..., DocumentEmbedder],
        model: list[Any],  # [name, ObjectRef of the files] or [None, None]
        threads: int,
        dim: int,
    ) -> None:
        import ray

        started = time.time()
        name, ref = model
        folder = _unpack_model(name, ray.get(ref)) if name is not None else None
        self._embedder = make_embedder(folder, threads=threads)
        self._dim = dim
        self._id = uuid.uuid4().hex[:8]
        self._ready_at = time.time()
        self._started = started

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        vectors: list[bytes] = []
        seconds: list[float] = []
        cpu: list[float] = []
        ended: list[float] = []
        for texts in batch["texts"]:
            wall, process = time.perf_counter(), time.process_time()
            matrix = np.asarray(self._embedder.embed_documents(list(texts)), dtype=np.float32)
            seconds.append(time.perf_counter() - wall)
            cpu.append(time.process_time() - process)
            ended.append(time.time())
            vectors.append(matrix.tobytes())
        rows = len(vectors)
        return {
            "batch": batch["batch"],
            "vectors": np.array(vectors, dtype=object),
            "seconds": np.array(seconds),
            "cpu": np.array(cpu),
            "actor": np.array([self._id] * rows, dtype=object),
            "ready_at": np.array([self._ready_at] * rows),
            "ended_at": np.array(ended),
        }


def embed_on_cluster(
    batches: Sequence[Sequence[str]],
    side: EmbeddingSide,
    *,
    actors: int,
    cpus_per_actor: int = 1,
    done: Callable[[int, np.ndarray], None],
) -> EmbedStats:
    """Embed ``batches`` (each as one ``embed_documents`` call) with a pool of ``actors``;
    ``done(index, vectors)`` gets each batch's float32 ``[len(batch), dim]`` as it arrives."""
    if not batches:
        return EmbedStats(actors=0)
    actors = min(actors, len(batches))  # an actor with no batch would only load the model
    stats = EmbedStats(batches=len(batches), texts=sum(len(b) for b in batches), actors=actors)
    import ray

    # Ray Data warns about its own deprecated defaults on first use: nothing a user can act on.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _run_job(ray, batches, side, actors, cpus_per_actor, done, stats)
    return stats


def _run_job(
    ray: Any,
    batches: Sequence[Sequence[str]],
    side: EmbeddingSide,
    actors: int,
    cpus_per_actor: int,
    done: Callable[[int, np.ndarray], None],
    stats: EmbedStats,
) -> None:
    import ray.data

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    started = time.time()
    folder = side.model_folder
    files = model_files(folder)
    model = [folder.name, ray.put(files)] if folder is not None else [None, None]
    rows = [{"batch": i, "texts": list(texts)} for i, texts in enumerate(batches)]
    dataset = ray.data.from_items(rows, override_num_blocks=min(len(rows), actors * 4))
    embedded = dataset.map_batches(
        EmbedActor,
        fn_constructor_args=(side.make_embedder, model, cpus_per_actor, side.dim),
        batch_size=1,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=cpus_per_actor,
    )
    ready: dict[str, float] = {}
    last: dict[str, float] = {}
    for out in embedded.iter_batches(batch_size=None, batch_format="numpy"):
        if not stats.first_row_s:
            stats.first_row_s = time.time() - started
        for index, blob, seconds, cpu, actor, ready_at, ended_at in zip(
            out["batch"],
            out["vectors"],
            out["seconds"],
            out["cpu"],
            out["actor"],
            out["ready_at"],
            out["ended_at"],
            strict=True,
        ):
            vectors = np.frombuffer(blob, dtype=np.float32).reshape(-1, side.dim)
            done(int(index), vectors)
            stats.model_s += float(seconds)
            stats.model_cpu_s += float(cpu)
            stats.per_actor[str(actor)] = stats.per_actor.get(str(actor), 0.0) + float(seconds)
            ready[str(actor)] = float(ready_at)
            last[str(actor)] = max(last.get(str(actor), 0.0), float(ended_at))
    stats.seconds = time.time() - started
    stats.pool_start_s = max(ready.values()) - started if ready else 0.0
    stats.framework_s = sum(last[a] - ready[a] - stats.per_actor[a] for a in ready)
