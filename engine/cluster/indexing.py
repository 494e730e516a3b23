"""Index many repositories on a Ray cluster: fast phases on the workers, one embedding job
per round, the slow phase and publishing on the coordinator.

A round, for its repositories in list order:

1. one Ray task per repository runs the local fast phase on a worker's own disk, stages the
   generation in the shared store and returns its embedding requests (indexing_worker.py);
2. the coordinator drops texts already cached or already asked for by an earlier repository
   of the list, and batches each repository's new texts as the local builder would: in list
   order, this is exactly what indexing the repositories one after another on one machine,
   into one home, embeds (the same texts, in the same batches, so the same vectors);
3. one Ray Data job embeds every batch with a warm actor pool (indexing_embed.py), each batch
   going into the coordinator's embedding cache as it arrives;
4. per repository, the local slow phase runs on a copy of the staged generation, every text
   a cache hit (indexing_finish.py), and the generation is published into the shared store,
   ``CURRENT`` last (indexing_store.py).

A repository whose task fails (a missing folder; a node lost more often than Ray retries)
is reported and left as it was; the others are published. A build is a full build of every
repository: the embedding cache, not an incremental update, is what makes a rerun cheap.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.cluster.indexing_embed import EmbeddingSide, EmbedStats, embed_on_cluster
from engine.cluster.indexing_finish import finish_generation
from engine.cluster.indexing_repos import RepoSpec
from engine.cluster.indexing_store import SharedStore, copy_tree
from engine.cluster.indexing_worker import FastPhase, fast_plugins, run_fast_phase
from engine.errors import EngineError
from engine.signal import IndexOptions, ProgressFn, SignalPlugin, no_progress

DEFAULT_ACTORS = 2


@dataclass
class RepoResult:
    slug: str
    root: str
    generation: str = ""  # published in the store; "" when the repository failed
    node: str = ""  # the worker host that chunked it
    files: int = 0
    chunks: int = 0
    texts: int = 0  # unique texts it asked to embed
    embedded: int = 0  # of those, embedded in this run on its behalf (not cached, not shared)
    problems: int = 0
    error: str = ""


@dataclass
class ClusterIndexReport:
    store: str
    repos: list[RepoResult] = field(default_factory=list)
    rounds: int = 0
    texts: int = 0  # unique texts over every repository of the run
    cached: int = 0  # of those, found in the embedding cache
    embedded: int = 0
    embedding: list[EmbedStats] = field(default_factory=list)  # one per round
    stage_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> list[RepoResult]:
        return [r for r in self.repos if r.error]


def _timed(report: ClusterIndexReport, stage: str, started: float) -> None:
    report.stage_seconds[stage] = report.stage_seconds.get(stage, 0.0) + (
        time.perf_counter() - started
    )


def index_on_cluster(
    repos: Sequence[RepoSpec],
    store_root: Path,
    plugins: Mapping[str, SignalPlugin],
    options: IndexOptions,
    side: EmbeddingSide,
    *,
    actors: int = DEFAULT_ACTORS,
    repos_per_round: int | None = None,
    progress: ProgressFn = no_progress,
) -> ClusterIndexReport:
    """Index ``repos`` on the connected Ray cluster into ``store_root`` (see the module
    docstring). ``options.home`` is the coordinator's home: its embedding cache and models."""
    import ray

    store = SharedStore(store_root)
    report = ClusterIndexReport(store=str(store_root))
    size = repos_per_round or max(len(repos), 1)
    with store.coordinator():
        run_id = uuid.uuid4().hex[:12]
        builders = {n: p.make_builder(options) for n, p in plugins.items()}
        slow = [b for b in builders.values() if b.slow]
        worker_plugins = fast_plugins(plugins, [b.name for b in slow])
        task = ray.remote(num_cpus=1, max_retries=3, retry_exceptions=False)(run_fast_phase)
        local = Path(tempfile.mkdtemp(prefix="engine-cluster-"))
        try:
            for start in range(0, len(repos), size):
                group = repos[start : start + size]
                report.rounds += 1
                started = time.perf_counter()
                progress("fast phase", start, len(repos))
                refs = [
                    task.remote(
                        spec.slug,
                        str(spec.root),
                        worker_plugins,
                        options,
                        side.texts,
                        side.key,
                        str(store_root),
                        run_id,
                    )
                    for spec in group
                ]
                phases = [_result_of(ray, ref, spec) for ref, spec in zip(refs, group, strict=True)]
                _timed(report, "fast phase", started)
                progress("fast phase", start + len(group), len(repos))
                results = [_repo_result(p) for p in phases]
                report.repos += results
                started = time.perf_counter()
                progress("embedding", 0, 0)
                try:
                    batches, stats = _embed_round(phases, results, side, actors, report)
                except ray.exceptions.RayError as exc:
                    # Nothing of the round is published; what was embedded is cached.
                    raise EmbeddingFailed(
                        f"the embedding job failed ({_first_line(exc)}); nothing of this "
                        "round was published, and what was embedded is cached for the next run"
                    ) from None
                report.embedding.append(stats)
                _timed(report, "embedding", started)
                progress("embedding", batches, batches)
                started = time.perf_counter()
                for done, (phase, result) in enumerate(zip(phases, results, strict=True), 1):
                    if not result.error:
                        try:
                            result.generation = _finish(phase, store, slow, local)
                        except EngineError as exc:
                            result.error = str(exc)
                    progress("publishing", start + done, len(repos))
                _timed(report, "slow phase + publish", started)
        finally:
            shutil.rmtree(local, ignore_errors=True)
            shutil.rmtree(store.staging(run_id), ignore_errors=True)
    return report


class EmbeddingFailed(EngineError):
    """The round's Ray Data job failed (every actor lost, a model that cannot load)."""


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RAISED = re.compile(r"^(\w+(?:Error|Exception)): (.+)$", re.MULTILINE)


def _first_line(exc: BaseException) -> str:
    """One line for a Ray error: its type, and the error a remote traceback ended with (an
    actor's ``RuntimeError: ...``) rather than Ray's framing of it."""
    text = _ANSI.sub("", str(exc)).strip()
    raised = [m for m in _RAISED.finditer(text) if m.group(1) != type(exc).__name__]
    if raised:
        return f"{type(exc).__name__}: {raised[-1].group(1)}: {raised[-1].group(2).strip()}"
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _result_of(ray: Any, ref: Any, spec: RepoSpec) -> FastPhase:
    """The task's result, or one whose ``error`` says why there is none."""
    try:
        phase: FastPhase = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if exc.cause is not None else exc
        return FastPhase(spec.slug, str(spec.root), error=f"{type(cause).__name__}: {cause}")
    except ray.exceptions.RayError as exc:  # a node or worker lost more often than retried
        return FastPhase(
            spec.slug, str(spec.root), error=f"its worker was lost ({_first_line(exc)})"
        )
    return phase


def _repo_result(phase: FastPhase) -> RepoResult:
    return RepoResult(
        slug=phase.slug,
        root=phase.root,
        node=phase.node,
        files=phase.files,
        chunks=phase.chunks,
        texts=len(phase.keys),
        problems=len(phase.problems),
        error=phase.error,
    )


def _embed_round(
    phases: Sequence[FastPhase],
    results: Sequence[RepoResult],
    side: EmbeddingSide,
    actors: int,
    report: ClusterIndexReport,
) -> tuple[int, EmbedStats]:
    """Plan the round's batches (list order, cache and earlier repositories first) and embed
    them; each batch is in the cache when its row arrives."""
    every = [key for phase in phases if not phase.error for key in phase.keys]
    cached = side.cached(every)
    scheduled: set[bytes] = set()
    keys_of: list[list[bytes]] = []
    texts_of: list[list[str]] = []
    for phase, result in zip(phases, results, strict=True):
        if phase.error:
            continue
        text = dict(zip(phase.keys, phase.texts, strict=True))
        new = [k for k in phase.keys if k not in cached and k not in scheduled]
        scheduled.update(new)
        result.embedded = len(new)
        for batch in side.batches(new, text):
            keys_of.append(batch)
            texts_of.append([text[k] for k in batch])
    report.texts += len(set(every))
    report.cached += len(cached)
    report.embedded += len(scheduled)

    def done(index: int, vectors: np.ndarray) -> None:
        side.put(keys_of[index], vectors)

    return len(keys_of), embed_on_cluster(texts_of, side, actors=actors, done=done)


def _finish(phase: FastPhase, store: SharedStore, slow: Sequence[Any], local: Path) -> str:
    """Copy the staged generation here, run the slow phase on it, publish it; its name."""
    work = local / phase.slug
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        fast = work / "fast"
        copy_tree(Path(phase.staged), fast)
        generation = work / "generation"
        generation.mkdir()
        finish_generation(fast, generation, slow)
        return store.publish(phase.slug, Path(phase.root), generation)
    finally:
        shutil.rmtree(work, ignore_errors=True)
