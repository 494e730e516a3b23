"""Compound shards for thousands of small repositories: the design, and a simulation of it.

Built (engine/cluster/grouping.py, search_registry.py, search_merge.py; measured in
BENCHMARKS.md "Cluster search"), as the first variant below, with these differences from the
design as written:

- The groups are a fixed set for a router's life, ``g0`` ... ``g{G-1}`` with G the cluster's
  CPUs when the router starts (not the sqrt(R*w/b) balance the model below picks), and a
  repository's group is the rendezvous winner among those names, so it depends on its name
  and G only: routers over different lists of repositories share the same actors. The groups
  are then placed on nodes by rendezvous capped at each node's share by CPUs (placement.py's
  ``place_bounded``), which gives every node about its CPUs in groups; a node joining or
  leaving moves whole groups (and, the caps moving, a few more), with the handover as before.
- Coverage counts repositories (what the user asked for), not groups; the warning names every
  asked repository of a shard that did not answer.
- A repository whose index cannot be opened does not hold its group back: the actor answers
  for the others, names it, and opens it once it can.
- The merged index per group (the second variant) is not built.

The problem. Cluster search started one shard actor per repository (engine/cluster/
search_router.py). A query over R repositories is then R actor calls: the router pays a
dispatch and a result transfer per call, and the cluster pays a Python process (~100+ MiB
resident, measured in BENCHMARKS.md) per repository. For an organisation's 5,000 small
repositories that is 5,000 processes and a fan-out that grows with R, not with the cores
that do the work.

The design. A *compound shard* is one actor that serves many small repositories:

- Placement stays rendezvous hashing, but of *groups*: repositories under a size threshold
  (say 20k chunks) hash to one of G groups per node (G = the node's cores, so that every
  core searches), and a group, not a repository, is what an actor holds; a large repository
  keeps an actor of its own. The group of a repository is ``owner(repo, groups)``, so a
  node joining moves whole groups, and the handover is the same (the old actor serves until
  the new one has loaded).
- Inside the actor the group's repositories are searched as one: either each repository's
  searcher in turn, merged in the actor (``federation.merge`` is a top-k over per-repository
  scaled scores, so the actor can return its own top ``limit`` after scaling each
  repository's low-confidence answers; the router's merge of those top-k lists equals the
  merge of every repository's list), or, better for very many tiny repositories, one index
  built over the whole group (one Tantivy index, one FAISS index, one chunk store, the
  repository as a stored field and a filter), so that the per-search fixed cost (query
  analysis, three signal calls, fusion, ranking) is paid once per group instead of once
  per repository. Results still carry their repository; scoring per repository (BM25
  statistics, the confidence scaling) is what the merged index must keep per repository,
  which is why the first variant comes first.
- The router's fan-out is then G x nodes calls, whatever R is; coverage counts groups,
  and the warning still names the repositories of a group that did not answer.

The simulation. ``measure`` times a fan-out of N calls to N trivial actors on a local Ray
(the per-call overhead the router pays) and fits ``a + b*N``; ``model`` then estimates a
federated query over R repositories on C cores for one actor per repository and for
compound shards, given the measured per-repository search time ``s`` (shard-side, from
eval/bench/cluster_search.py) and the fixed share of it ``s_fixed`` that a merged group
index pays once:

- per repository:  a + b*R + R*s / C        (R calls; R searches share C cores)
- grouped:         a + b*G + ceil(R/G) * s   (G calls; each actor searches its R/G in turn)
- merged:          a + b*G + s_fixed + ceil(R/G) * (s - s_fixed)

with G, at most C, chosen to balance the calls against the work per actor (sqrt(R*w/b)).
The per-call cost b is paid by the router one call after another, which is what makes one
actor per repository grow with R. The model leaves out the router's merge (small: 10
results per shard) and, on this machine, that the Ray daemons of three simulated nodes and
other work share the same two cores: it is for the shape, not the absolute figure.

    nice -n 5 .venv/bin/python -m eval.bench.compound_shards --home /tmp/cluster-search-bench/home
    (the home eval/bench/cluster_search.py prepared), or --search-ms S --fixed-ms F
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FANOUTS = (1, 2, 4, 8, 16, 32)
REPOS = (16, 100, 1000, 5000)
CORES = (2, 16, 64, 256)


def measure(fanouts: Sequence[int] = FANOUTS, calls: int = 60) -> dict[int, float]:
    """N -> p50 ms of one round of N concurrent calls to N trivial actors."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:

        @ray.remote(num_cpus=0)
        class Echo:
            def search(self, payload: bytes) -> bytes:
                return payload

        actors = [Echo.remote() for _ in range(max(fanouts))]  # type: ignore[attr-defined]
        payload = b"\0" * 1536  # a MiniLM query vector
        ray.get([a.search.remote(payload) for a in actors])
        out = {}
        for n in fanouts:
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                ray.get([a.search.remote(payload) for a in actors[:n]])
                times.append((time.perf_counter() - start) * 1000)
            out[n] = statistics.median(times)
        return out
    finally:
        ray.shutdown()


def search_times(home: Path, disk: Path) -> dict[str, float]:
    """repository -> p50 ms of a shard-side search (the vector given, as the router sends
    it) over eval/bench/cluster_search.py's queries, every repository of ``home``."""
    from engine.cluster.search_shard import ShardRequest, ShardSearcher
    from engine.search.searcher import clean_query
    from eval.bench.cluster_search import QUERIES
    from signals import registry
    from signals.vector.query_vector import embed_query

    out = {}
    for repo in sorted(p.name for p in (home / "repos").iterdir()):
        shard = ShardSearcher(str(home), [repo], registry.plugins, disk=str(disk))
        model = shard.load()[repo]
        requests = [
            ShardRequest((repo,), clean_query(q), 10, (embed_query(model, clean_query(q), home),))
            for q in QUERIES
        ]
        for request in requests:  # warm
            shard.search(request)
        times = []
        for _ in range(3):
            for request in requests:
                start = time.perf_counter()
                shard.search(request)
                times.append((time.perf_counter() - start) * 1000)
        out[repo] = statistics.median(times)
        shard.close()
    return out


def fit(points: dict[int, float]) -> tuple[float, float]:
    """Least squares a + b*N."""
    xs, ys = list(points), list(points.values())
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    return my - b * mx, b


def groups(a_call_ms: float, work_ms: float, repos: int, cores: int) -> int:
    """How many compound shards to fan out to: G minimising b*G + (R/G)*w is sqrt(R*w/b),
    at most one per core and per repository."""
    best = math.sqrt(repos * work_ms / a_call_ms) if a_call_ms > 0 else cores
    return max(1, min(cores, repos, round(best)))


def model(
    a: float, b: float, search_ms: float, fixed_ms: float, repos: int, cores: int
) -> dict[str, float]:
    grouped = groups(b, search_ms, repos, cores)
    merged = groups(b, search_ms - fixed_ms, repos, cores)
    return {
        "per_repository": a + b * repos + repos * search_ms / cores,
        "grouped": a + b * grouped + math.ceil(repos / grouped) * search_ms,
        "grouped_shards": grouped,
        "merged": a + b * merged + fixed_ms + math.ceil(repos / merged) * (search_ms - fixed_ms),
        "merged_shards": merged,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Compound shards: fan-out cost simulation.")
    parser.add_argument("--home", type=Path, help="measure s and s_fixed on its indexes")
    parser.add_argument("--work", type=Path, default=Path("/tmp/compound-shards"))
    parser.add_argument("--search-ms", type=float, help="shard-side p50 per repository")
    parser.add_argument("--fixed-ms", type=float, help="its fixed share")
    args = parser.parse_args(argv)
    load = [round(x, 2) for x in os.getloadavg()]
    measured: dict[str, float] = {}
    if args.home is not None:
        # s: the median repository's search; s_fixed: the smallest repository's, which is
        # nearly all fixed cost (query analysis, three signal calls, fusion, ranking).
        measured = search_times(args.home, args.work)
        args.search_ms = args.search_ms or statistics.median(measured.values())
        args.fixed_ms = args.fixed_ms or min(measured.values())
    if args.search_ms is None or args.fixed_ms is None:
        parser.error("give --home, or --search-ms and --fixed-ms")
    points = measure()
    a, b = fit(points)
    table: dict[str, Any] = {}
    for repos in REPOS:
        for cores in CORES:
            table[f"R={repos} C={cores}"] = {
                k: round(v, 1)
                for k, v in model(a, b, args.search_ms, args.fixed_ms, repos, cores).items()
            }
    print(
        json.dumps(
            {
                "fanout_p50_ms": {n: round(t, 2) for n, t in points.items()},
                "fit_ms": {"a": round(a, 2), "b_per_call": round(b, 3)},
                "search_ms": round(args.search_ms, 2),
                "fixed_ms": round(args.fixed_ms, 2),
                "measured_search_ms": {k: round(v, 2) for k, v in measured.items()},
                "model_ms": table,
                "load_average": load,
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
