"""What the vector signal's embedding order buys, and what skipping classes of chunks costs.

    python -m eval.bench.embed_order --benchmark ../shared/benchmarks/semble-dev

The full (MiniLM) pass embeds chunks in signals/vector/order.py's order: implementation
definitions (class 0), implementation module-level code (1), test definitions (2), test
module-level code (3), generated or vendored code (4, 5). For each benchmark repository, over
its existing index in $ENGINE_HOME (nothing is re-embedded), this reports

- each class's share of the chunks and of the chunks the labeled queries point at (a chunk
  overlapping a query's relevant range);
- how far a pass in that order, and in the order chunks were stored (what it was before),
  has gone when half and when all of the pointed-at chunks have vectors;
- NDCG@10 (the protocol's: mean of repository means) when the classes from some class on
  are never embedded: each query's vector hits are taken from a deeper run and those chunks
  dropped, then fused and ranked again exactly as `engine eval` does; and the share of the
  pass each choice saves (MiniLM's time is proportional to chunks embedded).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from statistics import mean

import orjson

from engine.index.home import Home
from engine.index.opening import open_index
from engine.search.routing import ROUTES
from engine.search.searcher import depth_for
from engine.signal import OpenOptions
from engine.types import Chunk, Filters, Query
from eval.benchmark import BenchQuery, BenchRepo, load_benchmark
from eval.benchmark_run import LIMIT, _top
from eval.protocol import mean_of_means, ndcg_at_10
from signals import registry
from signals.vector.order import embed_priority

CLASSES = (
    "impl definitions",
    "impl module-level",
    "test definitions",
    "test module-level",
    "generated definitions",
    "generated module-level",
)
# Never embedded: classes >= the value (6 = everything embedded, the default).
SKIPS = {"all (default)": 6, "no generated/vendored": 4, "no tests, no generated": 2}
SKIPS |= {"definitions of implementation only": 1}
DEPTH = 200  # vector hits fetched per query before dropping skipped classes


def _pointed(chunks: Sequence[Chunk], queries: Sequence[BenchQuery], repo: BenchRepo) -> set[int]:
    out: set[int] = set()
    for q in queries:
        for t in q.targets:
            for c in chunks:
                if t.overlaps(repo.repo_path(c.path), c.start_line, c.end_line):
                    out.add(c.id)
    return out


def _reached(order: Sequence[int], pointed: set[int], share: float) -> float:
    """The fraction of the pass done when ``share`` of ``pointed`` has vectors."""
    need = max(1, round(share * len(pointed)))
    seen = 0
    for n, chunk_id in enumerate(order, 1):
        seen += chunk_id in pointed
        if seen >= need:
            return n / len(order)
    return 1.0


def measure(home: Home, repo: BenchRepo, queries: Sequence[BenchQuery]) -> dict[str, object]:
    plugins = registry.plugins()
    opened = open_index(home, repo.name, plugins, OpenOptions(home=home.root))
    try:
        chunks = list(opened.store.iter_chunks())
        klass = {c.id: embed_priority(c)[0] for c in chunks}
        asked = [q for q in queries if q.repo == repo.name and q.targets]
        pointed = _pointed(chunks, asked, repo)
        by_priority = [c.id for c in sorted(chunks, key=embed_priority)]
        stored = [c.id for c in sorted(chunks, key=lambda c: c.id)]
        searcher = opened.searcher
        scores: dict[str, list[float]] = {name: [] for name in SKIPS}
        for q in asked:
            runs = searcher.run_signals(Query(q.query), DEPTH)
            for name, skip in SKIPS.items():
                kept = [
                    replace(r, hits=[h for h in r.hits if klass.get(h.chunk_id or -1, 0) < skip])
                    if r.signal == "vector"
                    else r
                    for r in runs
                ]
                depth = depth_for(LIMIT, searcher.ranking)
                kept = [replace(r, hits=r.hits[:depth]) for r in kept]
                results = searcher.rank_runs(
                    Query(q.query, Filters()), kept, LIMIT, searcher.ranking, ROUTES
                )
                scores[name].append(ndcg_at_10(_top(results, repo), q.targets))
        return {
            "repo": repo.name,
            "chunks": len(chunks),
            "classShare": [sum(v == k for v in klass.values()) / len(chunks) for k in range(6)],
            "pointed": len(pointed),
            "pointedShare": [
                sum(klass[i] == k for i in pointed) / max(1, len(pointed)) for k in range(6)
            ],
            "halfAt": {"priority": _reached(by_priority, pointed, 0.5)}
            | {"stored": _reached(stored, pointed, 0.5)},
            "allAt": {"priority": _reached(by_priority, pointed, 1.0)}
            | {"stored": _reached(stored, pointed, 1.0)},
            "embedded": {
                name: sum(v < skip for v in klass.values()) / len(chunks)
                for name, skip in SKIPS.items()
            },
            "ndcg": scores,
        }
    finally:
        opened.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--benchmark", type=Path, required=True)
    parser.add_argument("--repos", default="")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    home = Home(Path(os.environ.get("ENGINE_HOME", "~/.local/share/engine")).expanduser())
    only = [r for r in args.repos.split(",") if r] or None
    repos, queries = load_benchmark(args.benchmark, only)
    rows = [measure(home, repo, queries) for repo in repos]
    if args.out:
        args.out.write_bytes(orjson.dumps(rows, option=orjson.OPT_INDENT_2))
    n = len(rows)
    print(f"{n} repositories, {sum(int(str(r['chunks'])) for r in rows)} chunks")
    for k, label in enumerate(CLASSES):
        chunk_share = mean(r["classShare"][k] for r in rows)  # type: ignore[index]
        pointed_share = mean(r["pointedShare"][k] for r in rows)  # type: ignore[index]
        print(f"  {label:24} {chunk_share:6.1%} of chunks, {pointed_share:6.1%} of pointed-at")
    for key in ("halfAt", "allAt"):
        for order in ("priority", "stored"):
            value = mean(r[key][order] for r in rows)  # type: ignore[index]
            print(f"  {key} ({order} order): {value:.1%} of the pass (mean over repositories)")
    for name in SKIPS:
        per_repo = {str(r["repo"]): r["ndcg"][name] for r in rows}  # type: ignore[index]
        embedded = mean(r["embedded"][name] for r in rows)  # type: ignore[index]
        print(f"  {name:36} NDCG@10 {mean_of_means(per_repo):.4f}, embeds {embedded:.1%}")


if __name__ == "__main__":
    main()
