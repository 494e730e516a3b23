"""Cluster indexing's embedding job: throughput per actor, Ray Data's overhead, pool start.

    python -m eval.bench.cluster_index [--texts 384] [--models HOME] [--json]
    python -m eval.bench.cluster_index --pipeline [--models HOME] [--static-models HOME]

Real text: 40-line windows of the running interpreter's standard library (eval/bench/
vector.py's ``stdlib_chunks``), made into the vector signal's documents and batched as the
local builder batches them (64 texts a batch). Each configuration embeds the same batches
with MiniLM's ONNX export at the default (mixed) precision:

- ``local``: in this process, as ``VectorBuilder`` does (one embedder, two threads), and
  with one thread (a core's rate, the unit of the scaling figures);
- ``actors=1`` / ``actors=2``: the Ray Data job (``embed_on_cluster``) on a local Ray
  instance with two CPUs, one thread per actor;
- ``nodes=3, actors=2``: the same job on ``ray.cluster_utils.Cluster`` with three one-CPU
  nodes, each with its own disk, so the model is shipped to and unpacked on each node.

Figures per run: texts/s once the pool is up (``steady``) and over the whole job, the pool's
start (submission to the last actor's model loaded), and the framework's overhead: the
job's time after the pool is up beyond the busiest actor's time inside ``embed_documents``,
as a share of that model time. The machine has two cores shared with other work: record the
load average with the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.cluster.indexing_embed import NODE_DISK_ENV, EmbedStats, embed_on_cluster
from engine.signal import IndexOptions
from eval.bench.tiers import link_models
from eval.bench.vector import stdlib_chunks
from signals.vector.cluster_embedding import ClusterVectorEmbedding


def _batches(side: ClusterVectorEmbedding, limit: int) -> list[list[str]]:
    texts = side.texts(stdlib_chunks(limit))
    keys = [side.key(t) for t in texts]
    text_of = dict(zip(keys, texts, strict=True))
    return [[text_of[k] for k in batch] for batch in side.batches(list(text_of), text_of)]


def _local(side: ClusterVectorEmbedding, batches: list[list[str]], threads: int) -> dict[str, Any]:
    # The actors' own factory: the export with the local builder's settings.
    embedder = side.make_embedder(side.model_folder, threads=threads)
    embedder.embed_documents(batches[0][:8])  # warm-up
    started, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        embedder.embed_documents(batch)
    seconds = time.perf_counter() - started
    texts = sum(len(b) for b in batches)
    return {
        "config": f"local, {threads} thread(s)",
        "texts": texts,
        "seconds": round(seconds, 2),
        "steady_texts_per_s": round(texts / seconds, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
    }


def _job(
    side: ClusterVectorEmbedding, batches: list[list[str]], actors: int, config: str
) -> dict[str, Any]:
    stats: EmbedStats = embed_on_cluster(batches, side, actors=actors, done=lambda i, v: None)
    after_pool = stats.seconds - stats.pool_start_s
    return {
        "config": config,
        "texts": stats.texts,
        "seconds": round(stats.seconds, 2),
        "texts_per_s": round(stats.texts / stats.seconds, 2),
        "steady_texts_per_s": round(stats.texts / after_pool, 2),
        "pool_start_s": round(stats.pool_start_s, 2),
        "first_row_s": round(stats.first_row_s, 2),
        "model_s": round(stats.model_s, 2),
        "model_cpu_s": round(stats.model_cpu_s, 2),
        "framework_s": round(stats.framework_s, 3),
        "framework_share": round(stats.framework_share, 4),
        "model_s_per_actor": sorted(round(s, 1) for s in stats.per_actor.values()),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    import ray

    work = Path(tempfile.mkdtemp(prefix="bench-cluster-index-"))
    try:
        home = work / "home"
        home.mkdir()
        link_models(Path(args.models), home)
        side = ClusterVectorEmbedding(IndexOptions(home=home))
        batches = _batches(side, args.texts)
        load = os.getloadavg()
        results = [_local(side, batches, 2), _local(side, batches, 1)]
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {NODE_DISK_ENV: str(work / "disk")}},
        )
        try:
            for actors in (1, 2):
                results.append(_job(side, batches, actors, f"actors={actors}, one node"))
        finally:
            ray.shutdown()
        from ray.cluster_utils import Cluster

        cluster = Cluster(
            initialize_head=True,
            connect=False,
            head_node_args={
                "num_cpus": 1,
                "include_dashboard": False,
                "env_vars": {NODE_DISK_ENV: str(work / "node-0")},
            },
        )
        try:
            for n in (1, 2):
                cluster.add_node(num_cpus=1, env_vars={NODE_DISK_ENV: str(work / f"node-{n}")})
            cluster.wait_for_nodes()
            ray.init(address=cluster.address, log_to_driver=False)
            results.append(_job(side, batches, 2, "actors=2, 3 simulated nodes"))
        finally:
            ray.shutdown()
            cluster.shutdown()
        side.close()
        one_thread = next(r for r in results if r["config"] == "local, 1 thread(s)")
        local_cpu = one_thread["cpu_s"] / one_thread["texts"]
        one = next(r for r in results if r["config"].startswith("actors=1"))
        two = next(r for r in results if r["config"].startswith("actors=2, one"))
        return {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "load_before": [round(x, 2) for x in load],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "cores": os.cpu_count(),
            "corpus": f"{sum(len(b) for b in batches)} stdlib windows of "
            f"{sys.version.split()[0]}, {len(batches)} batches of <= 64",
            "results": results,
            "scaling_1_to_2_actors": round(
                two["steady_texts_per_s"] / (2 * one["steady_texts_per_s"]), 3
            ),
            # Load-independent: the CPU a text costs in one local thread against in an actor
            # (the work per text does not shrink or grow with the pool; only its overheads do).
            "cpu_efficiency": {
                r["config"]: round(local_cpu / (r["model_cpu_s"] / r["texts"]), 3)
                for r in results
                if "model_cpu_s" in r
            },
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


PIPELINE_PACKAGES = ("json", "email", "http", "urllib", "xml/dom")


def pipeline(args: argparse.Namespace) -> dict[str, Any]:
    """The whole build of a few stdlib packages as repositories: locally, one after another
    into one home (the fast tier first, then MiniLM), against ``engine index --cluster`` on a
    local Ray instance with two CPUs and two actors; both with empty caches."""
    import ray

    from engine.cluster.indexing import index_on_cluster
    from engine.cluster.indexing_repos import RepoSpec
    from engine.index.home import Home
    from engine.indexing.indexer import Indexer
    from signals.registry import plugins

    work = Path(tempfile.mkdtemp(prefix="bench-cluster-pipeline-"))
    try:
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        repos = []
        for package in PIPELINE_PACKAGES:
            target = work / "repos" / package.replace("/", "-")
            shutil.copytree(stdlib / package, target, ignore=shutil.ignore_patterns("__pycache__"))
            repos.append(RepoSpec(target.name, target))
        local_home, coordinator = work / "local", work / "coordinator"
        for home in (local_home, coordinator):
            home.mkdir()
            link_models(Path(args.models), home)
        if args.static_models:  # only its static model: the exports are linked already
            for folder in (Path(args.static_models) / "models").glob("static-*"):
                shutil.copytree(folder, local_home / "models" / folder.name, copy_function=os.link)
        load = os.getloadavg()
        started = time.perf_counter()
        indexer = Indexer(Home(local_home), plugins(), IndexOptions(home=local_home))
        chunks = sum(indexer.index(spec.slug, spec.root).chunks for spec in repos)
        local_s = time.perf_counter() - started
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {NODE_DISK_ENV: str(work / "disk")}},
        )
        try:
            options = IndexOptions(home=coordinator)
            started = time.perf_counter()
            with ClusterVectorEmbedding(options) as side:
                report = index_on_cluster(repos, work / "store", plugins(), options, side, actors=2)
            cluster_s = time.perf_counter() - started
        finally:
            ray.shutdown()
        (stats,) = report.embedding
        return {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "load_before": [round(x, 2) for x in load],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "repos": [spec.slug for spec in repos],
            "chunks": chunks,
            "failed": [r.slug for r in report.failed],
            "local_s": round(local_s, 1),
            "cluster_s": round(cluster_s, 1),
            "cluster_stage_s": {k: round(v, 1) for k, v in report.stage_seconds.items()},
            "texts": report.texts,
            "embedded": report.embedded,
            "pool_start_s": round(stats.pool_start_s, 1),
            "framework_share": round(stats.framework_share, 4),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=384, help="documents to embed per run")
    parser.add_argument(
        "--models", default="/work/bench/home", help="a home whose exported models to link"
    )
    parser.add_argument(
        "--pipeline",
        action="store_true",
        help="time a whole build of a few stdlib packages, local against cluster, instead",
    )
    parser.add_argument(
        "--static-models",
        help="with --pipeline: a home whose static model the local build's first tier links",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.pipeline:
        import orjson

        print(orjson.dumps(pipeline(args), option=orjson.OPT_INDENT_2).decode())
        return
    report = run(args)
    if args.json:
        import orjson

        print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return
    print(f"{report['date']}  load {report['load_before']} -> {report['load_after']}")
    print(report["corpus"])
    for r in report["results"]:
        print("  " + ", ".join(f"{k}={v}" for k, v in r.items()))
    print(f"scaling 1 -> 2 actors: {report['scaling_1_to_2_actors']:.1%} of linear")


if __name__ == "__main__":
    main()
