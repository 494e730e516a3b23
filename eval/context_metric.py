"""Context metric: do the labeled answers fall inside the context an agent is given?

For each answerable query and each token budget, two contexts of the same size are compared:

- **search**: the top 10 search results packed into the budget (engine/search/budget.py ``pack``),
  as ``engine query --budget`` gives them; **search@30**: the top 30, so that plain search
  too can fill a large budget;
- **context**: ``engine context`` (engine/context/assembly.py): primary blocks plus the definitions
  they use.

A target counts as covered when a block *with code* (full or signature; a bare location does
not count) overlaps its lines. Reported per budget: ``hit`` (some target covered), ``recall``
(share of targets covered), and for the context the queries where only an expanded block
covered a target. The context uses the same top-10 search as **search**, so the two differ
only in packing.

Usage: ``python -m eval.context_metric DATASET [--repo SLUG] [--budgets 1000,2000,4000]
[--shares 0,0.2] [--json]`` (indexes are read from ``$ENGINE_HOME``; nothing is written there).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from engine.context.assembly import (
    CONTEXT_RANKING,
    DEFAULT_EXPANSION_SHARE,
    MAX_LIMIT,
    ContextSearcher,
    DefinitionResolver,
    build_context,
)
from engine.search.budget import TokenCounter, pack
from engine.search.ranking.options import RankingOptions
from engine.search.searcher import ChunkReader
from engine.search.tokens import agent_counter
from engine.types import Result, SearchResponse
from eval.dataset import EvalQuery, Target, load_dataset
from eval.metrics import mean

DEFAULT_BUDGETS = (1000, 2000, 4000)


@dataclass(frozen=True, slots=True)
class Span:
    """A packed block: its file and 1-based inclusive lines, and whether it came expanded."""

    path: str
    start_line: int
    end_line: int
    expanded: bool = False


def covered(spans: Iterable[Span], targets: Sequence[Target]) -> list[Span | None]:
    """For each target, the first span that overlaps it (None when none does)."""
    spans = list(spans)
    return [
        next((s for s in spans if t.overlaps(s.path, s.start_line, s.end_line)), None)
        for t in targets
    ]


def packed_spans(
    results: Sequence[Result], budget: int, count: TokenCounter
) -> tuple[list[Span], int]:
    """The blocks *with code* that ``results`` packed into ``budget`` leave (full or signature,
    as ``engine query --budget`` packs them; a bare location shows no code), and the tokens
    the packing used."""
    packed = pack(results, budget, count)
    spans = [
        Span(r.path, r.start_line, r.end_line)
        for r, detail in zip(packed.results, packed.details, strict=True)
        if detail != "location"
    ]
    return spans, packed.used_tokens


@dataclass
class Scores:
    hits: list[float] = field(default_factory=list)
    recalls: list[float] = field(default_factory=list)
    expanded_only: int = 0  # queries where a target was covered only by an expanded block
    tokens: list[float] = field(default_factory=list)

    def add(self, found: Sequence[Span | None], tokens: int) -> None:
        got = [s for s in found if s is not None]
        self.hits.append(1.0 if got else 0.0)
        self.recalls.append(len(got) / len(found) if found else 0.0)
        self.tokens.append(float(tokens))

    def summary(self) -> dict[str, float]:
        return {
            "hit": round(mean(self.hits), 4),
            "recall": round(mean(self.recalls), 4),
            "expandedOnly": float(self.expanded_only),
            "meanTokens": round(mean(self.tokens), 1),
        }


class _OnceSearcher:
    """Answers every budget's context from one search per query (its first ``limit``)."""

    def __init__(self, repo: str, response: SearchResponse) -> None:
        self.repo = repo
        self._response = response

    def search(
        self, text: str, *, limit: int = 10, ranking: RankingOptions | None = None
    ) -> SearchResponse:
        del text, ranking  # the one search was made with the context's own ranking
        return replace(self._response, results=self._response.results[:limit])


@dataclass(frozen=True)
class Repository:
    """An open index as the metric needs it."""

    searcher: ContextSearcher
    store: ChunkReader
    resolver: DefinitionResolver
    lines_of: Callable[[str, str], tuple[int, int] | None]


def evaluate(
    queries: Sequence[EvalQuery],
    repository_for: Callable[[str | None], Repository],
    *,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    shares: Sequence[float] = (DEFAULT_EXPANSION_SHARE,),
    counter: tuple[TokenCounter, str] | None = None,
    limit: int = 10,
    deep_limit: int = 30,
    context_limit: int | None = None,
) -> dict[str, Any]:
    """Scores per budget: ``search`` (``limit`` results), ``search@deep_limit`` (more results
    to fill the budget with; 0 leaves it out) and one ``context@share`` per expansion share
    (searching ``context_limit`` results; None: engine/context/assembly.py's default for the
    budget).
    All three read one search per query."""
    from eval.dataset import resolve_symbols

    count, tokenizer = counter or agent_counter()
    deep_name = f"search@{deep_limit}"
    scores: dict[int, dict[str, Scores]] = {
        b: {
            "search": Scores(),
            **({deep_name: Scores()} if deep_limit else {}),
            **{f"context@{s}": Scores() for s in shares},
        }
        for b in budgets
    }
    answerable = [q for q in queries if not q.negative]
    for q in answerable:
        repo = repository_for(q.repo)
        q = resolve_symbols(q, repo.lines_of)
        response = repo.searcher.search(
            q.query, limit=max(limit, deep_limit, MAX_LIMIT), ranking=CONTEXT_RANKING
        )
        once = _OnceSearcher(repo.searcher.repo, response)
        first, deeper = response.results[:limit], response.results[:deep_limit]
        for budget in budgets:
            for name, results in (("search", first), (deep_name, deeper)):
                if name == deep_name and not deep_limit:
                    continue
                spans, used = packed_spans(results, budget, count)
                scores[budget][name].add(covered(spans, q.relevant), used)
            for share in shares:
                context = build_context(
                    once,
                    repo.store,
                    repo.resolver,
                    q.query,
                    budget_tokens=budget,
                    expansion_share=share,
                    limit=context_limit,
                    counter=(count, tokenizer),
                )
                spans = [
                    Span(b.result.path, b.result.start_line, b.result.end_line, expanded)
                    for blocks, expanded in ((context.primary, False), (context.expanded, True))
                    for b in blocks
                    if b.detail != "location"
                ]
                found = covered(spans, q.relevant)
                entry = scores[budget][f"context@{share}"]
                entry.add(found, context.used_tokens)
                primary_found = covered([s for s in spans if not s.expanded], q.relevant)
                if sum(s is not None for s in found) > sum(s is not None for s in primary_found):
                    entry.expanded_only += 1
    return {
        "queries": len(answerable),
        "tokenizer": tokenizer,
        "budgets": {
            str(b): {name: s.summary() for name, s in by_name.items()}
            for b, by_name in scores.items()
        },
    }


def table(result: Mapping[str, Any]) -> str:
    """One row per budget and configuration."""
    rows = [f"{'budget':>6}  {'packing':<14} {'hit':>6} {'recall':>7} {'+exp':>5} {'tokens':>7}"]
    for budget, by_name in result["budgets"].items():
        for name, s in by_name.items():
            rows.append(
                f"{budget:>6}  {name:<14} {s['hit']:>6.3f} {s['recall']:>7.3f} "
                f"{int(s['expandedOnly']):>5} {s['meanTokens']:>7.0f}"
            )
    return "\n".join(rows)


def _open_repositories(home_root: Path, repo: str | None) -> Callable[[str | None], Repository]:
    """Opens each repository once, read-only, with the real signal registry."""
    from engine.errors import UsageError
    from engine.index.home import Home, validate_slug
    from engine.index.opening import OpenIndex, open_index
    from engine.signal import OpenOptions
    from signals.registry import plugins
    from signals.symbol.resolver import SymbolResolver

    home = Home(home_root)
    opened: dict[str, Repository] = {}

    def repository_for(name: str | None) -> Repository:
        slug = repo or name
        if not slug:
            raise UsageError("the dataset's queries name no repo — pass --repo SLUG")
        if slug not in opened:
            index: OpenIndex = open_index(
                home, validate_slug(slug), plugins(), OpenOptions(home=home.root)
            )
            store = index.store

            def lines_of(path: str, symbol: str) -> tuple[int, int] | None:
                spans = [
                    (c.start_line, c.end_line)
                    for c in store.chunks_in_file(path)
                    if c.qualified_name == symbol
                ]
                return (min(s for s, _ in spans), max(e for _, e in spans)) if spans else None

            opened[slug] = Repository(index.searcher, store, SymbolResolver(index), lines_of)
        return opened[slug]

    return repository_for


def main(argv: Sequence[str] | None = None) -> int:
    from engine.errors import EngineError
    from engine.index.home import engine_home

    parser = argparse.ArgumentParser(prog="python -m eval.context_metric", description=__doc__)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--repo", help="Search this repository for every query.")
    parser.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)))
    parser.add_argument(
        "--shares",
        default=str(DEFAULT_EXPANSION_SHARE),
        help="Expansion shares to compare, e.g. 0,0.1,0.2,0.3",
    )
    parser.add_argument("--context-limit", type=int, help="Results the context searches.")
    parser.add_argument("--json", action="store_true", help="Print JSON instead of a table.")
    args = parser.parse_args(argv)
    try:
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
        shares = [float(s) for s in args.shares.split(",") if s.strip()]
        queries = load_dataset(args.dataset)
        result = evaluate(
            queries,
            _open_repositories(engine_home(), args.repo),
            budgets=budgets,
            shares=shares,
            context_limit=args.context_limit,
        )
    except (EngineError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    result["dataset"] = str(args.dataset)
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    else:
        print(f"{args.dataset}: {result['queries']} answerable queries ({result['tokenizer']})")
        print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
