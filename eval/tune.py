"""Tune fusion weights and k on the labeled datasets, reusing one run of each signal.

``python -m eval.tune eval/datasets/jinja.jsonl eval/datasets/ky.jsonl ...`` asks every
signal once per query, then re-fuses those runs for each point of a grid through the
searcher's own ``rank`` (fusion, priors, diversity), and prints mean NDCG@10 per dataset for
the best points. Confirm a choice with ``engine eval``; this only narrows the search.
Like the CLI, it is a composition root (it reads the signal registry).
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from engine.index.home import Home, engine_home
from engine.index.opening import OpenIndex, open_index
from engine.search.ranking.options import DEFAULT_RANKING
from engine.search.routing import query_kind
from engine.search.searcher import MIN_DEPTH
from engine.signal import OpenOptions
from engine.types import Filters, Query
from eval.dataset import EvalQuery, load_dataset, resolve_symbols
from eval.metrics import Ranked, mean, ndcg
from signals.registry import plugins

Point = tuple[float, float, float, float]  # k, lexical, vector, symbol weights

GRID = {
    "k": [10.0, 30.0, 60.0],
    "lexical": [1.0],
    "vector": [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0],
    "symbol": [0.0, 0.25, 0.5, 1.0, 2.0],
}


def _grid_scores(
    opened: OpenIndex, queries: list[EvalQuery], kind: str | None
) -> dict[Point, float]:
    """Mean NDCG@10 of every grid point on one dataset's answerable queries."""
    searcher = opened.searcher

    def lines(path: str, symbol: str) -> tuple[int, int] | None:
        spans = [
            (c.start_line, c.end_line)
            for c in opened.store.chunks_in_file(path)
            if c.qualified_name == symbol
        ]
        return (min(s for s, _ in spans), max(e for _, e in spans)) if spans else None

    rows = [
        (resolve_symbols(q, lines), searcher.run_signals(Query(q.query), MIN_DEPTH))
        for q in queries
        if not q.negative
    ]
    if kind is not None:
        rows = [(q, runs) for q, runs in rows if query_kind(q.query) == kind]
    scores: dict[Point, float] = {}
    for k, lw, vw, sw in itertools.product(*GRID.values()):
        weights = {"lexical": lw, "vector": vw, "symbol": sw}
        per_query = []
        for q, runs in rows:
            ranked = searcher.rank(runs, Filters(), 10, DEFAULT_RANKING, weights=weights, k=int(k))
            found = [Ranked(r.path, r.start_line, r.end_line) for r in ranked]
            per_query.append(ndcg(found, q.relevant, 10))
        scores[(k, lw, vw, sw)] = mean(per_query)
    return scores


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--kind", choices=["identifier", "question", "long"])
    args = parser.parse_args(argv)
    home = Home(engine_home())
    registry = plugins()
    table: dict[Point, list[float]] = {}
    names = []
    for path in args.datasets:
        queries = load_dataset(path)
        opened = open_index(home, queries[0].repo or path.stem, registry, OpenOptions(home.root))
        try:
            for point, score in _grid_scores(opened, queries, args.kind).items():
                table.setdefault(point, []).append(score)
        finally:
            opened.close()
        names.append(path.stem)
    print("k   lex  vec  sym   " + "  ".join(f"{n:>10}" for n in names) + "        mean")
    best = sorted(table.items(), key=lambda kv: -mean(kv[1]))[: args.top]
    default = (60.0, 1.0, 1.0, 1.0)
    for point, scores in [*best, (default, table.get(default, []))]:
        k, lw, vw, sw = point
        cells = "  ".join(f"{s:10.3f}" for s in scores)
        print(f"{int(k):<3} {lw:<4} {vw:<4} {sw:<4}  {cells}  {mean(scores):10.3f}")


if __name__ == "__main__":
    main()
