"""Cluster search on this machine (issue 16): router overhead, federated query latency over
16 repositories, one repository through the cluster against the same search in-process, and
the memory of a shard actor; with compound shards (a group of repositories per actor, a group
per CPU) and, for comparison, one actor per repository.

It copies the ``--repos`` smallest published indexes of ``--source`` (read only; e.g. the
semble-dev home) and its exported models into ``--work``, starts a simulated 3-node Ray
cluster (one CPU per node, each node its own disk), and for each ``--mode`` starts the shard
actors and queries through the router; it searches the same indexes in this process for the
local figures. Every federated answer is compared with the local federated one.

    nice -n 5 .venv/bin/python -m eval.bench.cluster_search --source /work/bench/home \\
        --work /tmp/cluster-search-bench [--mode compound|per-repository|both]

Router overhead is the query's time in the router less the slowest shard's own search (so:
embedding, dispatch, transport, waiting for a core and merging); it is also given without
the embedding, and as the router's own time (everything but waiting on the shards), beside
Ray's floor on this machine: the same fan-out to actors that do nothing. A shard actor's
memory is given per actor (a compound one holds its group's indexes) and per repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

QUERIES = [
    "parse command line arguments",
    "read a configuration file",
    "retry a failed request",
    "format a date as a string",
    "handle an error and log it",
    "open a connection to the server",
    "serialize an object to json",
    "iterate over the items of a list",
    "register a callback for an event",
    "validate the input of a function",
    "render a template",
    "compute a hash of a string",
    "Parser",
    "decode",
    "test the router",
    "write bytes to a file",
    "lazy load a plugin",
    "escape html special characters",
    "split a string by whitespace",
    "match a regular expression",
]


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def prepare(source: Path, work: Path, count: int) -> tuple[Path, list[str]]:
    """A home in ``work`` with the ``count`` smallest published indexes of ``source``."""
    from engine.index.generations import current_generation
    from engine.index.home import Home

    home = work / "home"
    if home.exists():
        shutil.rmtree(home)
    sizes = []
    for entry in Home(source).list():
        generation = current_generation(entry.directory)
        if generation is not None:
            size = sum(f.stat().st_size for f in generation.rglob("*") if f.is_file())
            sizes.append((size, entry.slug, generation))
    chosen = sorted(sizes)[:count]
    for _, slug, generation in chosen:
        target = home / "repos" / slug
        shutil.copytree(generation, target / generation.name)
        shutil.copy2(generation.parent / "repo.json", target / "repo.json")
        (target / "CURRENT").write_text(generation.name + "\n")
    shutil.copytree(source / "models", home / "models")
    return home, sorted(slug for _, slug, _ in chosen)


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 2),
        "p90": round(percentile(values, 90), 2),
        "p99": round(percentile(values, 99), 2),
        "n": len(values),
    }


def _ranking(response: Any) -> list[tuple[str, str, int, float]]:
    return [(r.repo, r.path, r.start_line, r.score) for r in response.results]


MODES = {"compound": True, "per-repository": False}


def run(source: Path, work: Path, count: int, rounds: int, modes: Sequence[str]) -> dict[str, Any]:
    import ray
    from ray.cluster_utils import Cluster

    from engine.index.home import Home
    from engine.index.opening import open_index
    from engine.search.federation import search_all
    from engine.signal import OpenOptions
    from signals import registry

    home, repos = prepare(source, work, count)
    disks = [work / f"node-{n}" for n in range(3)]
    for disk in disks:
        shutil.rmtree(disk, ignore_errors=True)
        disk.mkdir(parents=True)
    start = time.monotonic()
    cluster = Cluster(
        initialize_head=True,
        connect=False,
        head_node_args={
            "num_cpus": 1,
            "include_dashboard": False,
            "env_vars": {"ENGINE_NODE_DISK": str(disks[0])},
        },
    )
    for disk in disks[1:]:
        cluster.add_node(num_cpus=1, env_vars={"ENGINE_NODE_DISK": str(disk)})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    cluster_start_s = time.monotonic() - start
    out: dict[str, Any] = {"repos": repos, "cluster_start_s": round(cluster_start_s, 1)}
    opened = [open_index(Home(home), r, registry.plugins(), OpenOptions(home=home)) for r in repos]
    try:
        for text in QUERIES:  # warm the local path: page cache, sessions, first-call costs
            search_all([partial(o.searcher.search, text) for o in opened], 10)
        for mode in modes:
            out[mode] = _measure(home, repos, opened, rounds, compound=MODES[mode])
        out["bare_actor_memory_mib"] = _bare_actor_memory()
        out["ray_fanout_trivial_actors_ms"] = {
            n: _fanout(n, rounds * len(QUERIES)) for n in sorted({3, len(repos)})
        }
    finally:
        for o in opened:
            o.close()
        ray.shutdown()
        cluster.shutdown()
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return out


def _measure(
    home: Path, repos: list[str], opened: list[Any], rounds: int, *, compound: bool
) -> dict[str, Any]:
    """One router's figures: shards started, federated and single-repository queries against
    the local ones, every shard actor's memory; its actors stopped at the end."""
    import ray

    from engine.cluster.search_router import Router
    from engine.search.federation import search_all
    from signals import registry
    from signals.vector.query_vector import embed_query

    out: dict[str, Any] = {}
    router = Router(
        home,
        registry.plugins,
        partial(embed_query, home=home),
        deadline_ms=5000,
        compound=compound,
    )
    try:
        start = time.monotonic()
        router.start(wait_s=300)
        out["shards_start_s"] = round(time.monotonic() - start, 1)
        groups, owners = router.groups(), router.group_placement()
        out["shards"] = len(groups)
        out["repos_per_node"] = {
            node[:8]: sum(len(groups[g]) for g, n in owners.items() if n == node)
            for node in sorted(set(owners.values()))
        }
        out["repos_per_shard"] = sorted((len(m) for m in groups.values()), reverse=True)
        for text in QUERIES:  # warm
            router.search(repos, text)
        total, overhead, overhead_no_embed, embed, local_fed, own, calls = (
            [],
            [],
            [],
            [],
            [],
            [],
            [],
        )
        equal = full = 0
        for _ in range(rounds):
            for text in QUERIES:
                response = router.search(repos, text)
                timing = router.last_timing
                total.append(timing["total_ms"])
                embed.append(timing["embed_ms"])
                calls.append(timing["shards"])
                own.append(timing["total_ms"] - timing["wait_ms"])
                overhead.append(timing["total_ms"] - timing["slowest_shard_ms"])
                overhead_no_embed.append(
                    timing["total_ms"] - timing["slowest_shard_ms"] - timing["embed_ms"]
                )
                full += bool(response.coverage and response.coverage.full)
                t = time.perf_counter()
                local = search_all([partial(o.searcher.search, text) for o in opened], 10)
                local_fed.append((time.perf_counter() - t) * 1000)
                equal += _ranking(local) == _ranking(response)
        out["federated"] = {
            "repos": len(repos),
            "shard_calls_per_query": max(calls),
            "total_ms": _summary(total),
            "router_overhead_ms": _summary(overhead),
            "router_overhead_without_embedding_ms": _summary(overhead_no_embed),
            "embed_ms": _summary(embed),
            "router_own_ms": _summary(own),
            "local_federated_ms": _summary(local_fed),
            "full_coverage": f"{full}/{len(total)}",
            "equal_to_local": f"{equal}/{len(total)}",
        }
        single: dict[str, Any] = {}
        for o in opened[:4]:
            slug = o.entry.slug
            cluster_ms, local_ms = [], []
            for _ in range(rounds):
                for text in QUERIES:
                    t = time.perf_counter()
                    router.search([slug], text)
                    cluster_ms.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    o.searcher.search(text)
                    local_ms.append((time.perf_counter() - t) * 1000)
            single[slug] = {
                "cluster_ms": _summary(cluster_ms),
                "local_ms": _summary(local_ms),
                "difference_p50_ms": round(
                    statistics.median(cluster_ms) - statistics.median(local_ms), 2
                ),
            }
        out["single"] = single
        actors = []
        for group, members in groups.items():
            actor = router.actors(members[0])[owners[group]]
            memory = ray.get(actor.memory.remote())
            actors.append({"repos": len(members), **memory})
        out["shard_memory_mib"] = {
            key: {
                "median": round(statistics.median(m[key] for m in actors) / 2**20, 1),
                "max": round(max(m[key] for m in actors) / 2**20, 1),
            }
            for key in ("rss", "uss", "index_bytes")
        }
        out["shard_memory_per_actor_mib"] = [
            {
                "repos": m["repos"],
                "uss": round(m["uss"] / 2**20, 1),
                "index": round(m["index_bytes"] / 2**20, 1),
                "uss_less_index": round((m["uss"] - m["index_bytes"]) / 2**20, 1),
            }
            for m in sorted(actors, key=lambda m: -m["repos"])
        ]
        out["uss_per_repository_mib"] = round(sum(m["uss"] for m in actors) / len(repos) / 2**20, 1)
    finally:
        router.close(stop_actors=True)
    return out


def _fanout(count: int, calls: int) -> dict[str, float]:
    """Ray's own floor: one round of calls to ``count`` actors that do nothing, spread over
    the nodes as shards are, with a query vector's worth of payload."""
    import ray

    @ray.remote(num_cpus=0)
    class Echo:
        def search(self, payload: bytes) -> bytes:
            return payload

    actors = [Echo.options(scheduling_strategy="SPREAD").remote() for _ in range(count)]  # type: ignore[attr-defined]
    payload = b"\0" * 1536
    ray.get([a.search.remote(payload) for a in actors])
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        ray.get([a.search.remote(payload) for a in actors])
        times.append((time.perf_counter() - start) * 1000)
    for actor in actors:
        ray.kill(actor)
    return _summary(times)


def _bare_actor_memory() -> dict[str, dict[str, float]]:
    """A Ray actor that imports nothing of the engine, with the shard actors' environment:
    what Ray's worker process alone costs, so that a shard's own share can be told apart.
    At its first call and after it ("warm"): Ray's worker builds its serialization context
    once its first call has run (importing numpy, pyarrow, pydantic and starlette when they
    are installed, as ray[data] and mcp install them here), which every shard has done."""
    import ray

    from engine.cluster.search_registry import SHARD_ENV

    @ray.remote(num_cpus=0)
    class Bare:
        def memory(self) -> dict[str, int]:
            # Read here, not with search_shard.process_memory: Ray would import that module
            # (and the engine with it) into this actor to call it.
            fields: dict[str, int] = {}
            for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
                parts = line.split()
                if len(parts) >= 3 and parts[2] == "kB":
                    fields[parts[0].rstrip(":")] = int(parts[1]) * 1024
            private = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
            return {"rss": fields.get("Rss", 0), "uss": private}

    actor = Bare.options(runtime_env={"env_vars": SHARD_ENV}).remote()  # type: ignore[attr-defined]
    first = ray.get(actor.memory.remote())
    warm = ray.get(actor.memory.remote())
    ray.kill(actor)
    return {
        name: {k: round(v / 2**20, 1) for k, v in memory.items()}
        for name, memory in (("first_call", first), ("warm", warm))
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="an index home (read only)")
    parser.add_argument("--work", type=Path, required=True, help="a scratch folder")
    parser.add_argument("--repos", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the query set")
    parser.add_argument(
        "--mode",
        choices=[*MODES, "both"],
        default="both",
        help="shard actors: one per group "
        "of repositories (compound), one per repository, or each in turn on one cluster",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here (Ray's raylets "
                        "may print warnings on stdout)")  # fmt: skip
    args = parser.parse_args(argv)
    load_before = [round(x, 2) for x in os.getloadavg()]
    modes = list(MODES) if args.mode == "both" else [args.mode]
    result = run(args.source, args.work, args.repos, args.rounds, modes)
    result["load_average_before"] = load_before
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
