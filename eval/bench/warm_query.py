"""Warm query latency of one indexed repository, every signal, in one long-lived process.

    python -m eval.bench.warm_query SLUG [--queries DIR] [--count 200] [--warm-up 20]

Opens the published generation of ``SLUG`` in ``$ENGINE_HOME`` once, as the agent server
does (``open_index`` with every registered signal, the on-disk freshness check, not
one-shot), runs one warm-up search plus ``--warm-up`` discarded queries, then times
``searcher.search(text, limit=10)`` for ``--count`` queries, one at a time. The query texts
are the ``query`` fields of a benchmark's annotation files (default semble-dev's), taken
round-robin across the files so that consecutive queries come from different repositories.

Reports the whole query's p50/p95 (wall, in this process), each signal's p50/p95 (the
``latency_ms`` of the response's runs), the vector tier that answered, and this process's
RSS after the run (and its peak).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_QUERIES = Path("/work/shared/benchmarks/semble-dev/annotations")
WARM_UP_QUERY = "main"


def query_texts(directory: Path, count: int) -> list[str]:
    """Up to ``count`` distinct query texts, round-robin over the annotation files."""
    per_file: list[list[str]] = []
    for path in sorted(directory.glob("*.json")):
        items = json.loads(path.read_text(encoding="utf-8"))
        per_file.append([str(item["query"]) for item in items if item.get("query")])
    texts: list[str] = []
    seen: set[str] = set()
    depth = max((len(q) for q in per_file), default=0)
    for i in range(depth):
        for queries in per_file:
            if i < len(queries) and queries[i] not in seen:
                seen.add(queries[i])
                texts.append(queries[i])
                if len(texts) == count:
                    return texts
    return texts


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100) by linear interpolation; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def rss_mb() -> tuple[float, float]:
    """This process's resident set and its peak, in MB (Linux /proc)."""
    fields: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


def run(slug: str, texts: Sequence[str], warm_up: int, limit: int) -> dict[str, Any]:
    from engine.index.home import Home, engine_home
    from engine.index.opening import open_index
    from engine.indexing.freshness import DiskFiles
    from engine.signal import OpenOptions
    from signals.registry import plugins

    home = Home(engine_home())
    started = time.perf_counter()
    opened = open_index(home, slug, plugins(), OpenOptions(home=home.root), files=DiskFiles.of)
    open_s = time.perf_counter() - started
    try:
        searcher = opened.searcher
        searcher.search(WARM_UP_QUERY, limit=1)
        for text in texts[:warm_up]:
            searcher.search(text, limit=limit)
        walls: list[float] = []
        per_signal: dict[str, list[float]] = {}
        tiers: dict[str, set[str]] = {}
        errors: list[str] = []
        for text in texts:
            t0 = time.perf_counter()
            response = searcher.search(text, limit=limit)
            walls.append((time.perf_counter() - t0) * 1000)
            for signal_run in response.runs:
                per_signal.setdefault(signal_run.signal, []).append(signal_run.latency_ms)
                if signal_run.tier:
                    tiers.setdefault(signal_run.signal, set()).add(signal_run.tier)
                if signal_run.error:
                    errors.append(f"{signal_run.signal}: {signal_run.error}")
        rss, peak = rss_mb()
        return {
            "slug": slug,
            "generation": opened.generation.name,
            "files": opened.manifest.files,
            "chunks": opened.manifest.chunks,
            "open_s": round(open_s, 2),
            "queries": len(walls),
            "limit": limit,
            "p50_ms": round(statistics.median(walls), 1),
            "p95_ms": round(percentile(walls, 95), 1),
            "mean_ms": round(statistics.fmean(walls), 1),
            "signals": {
                name: {
                    "p50_ms": round(percentile(values, 50), 1),
                    "p95_ms": round(percentile(values, 95), 1),
                    "tier": ",".join(sorted(tiers.get(name, set()))),
                }
                for name, values in per_signal.items()
            },
            "errors": errors[:5],
            "rss_mb": round(rss),
            "peak_rss_mb": round(peak),
        }
    finally:
        opened.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.bench.warm_query", description=__doc__)
    parser.add_argument("slug", help="the indexed repository's name in $ENGINE_HOME")
    parser.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--warm-up", type=int, default=20, help="queries run and discarded")
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args(argv)
    texts = query_texts(args.queries, args.count)
    if not texts:
        print(f"no queries in {args.queries}", file=sys.stderr)
        return 2
    print(json.dumps(run(args.slug, texts, args.warm_up, args.limit), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
