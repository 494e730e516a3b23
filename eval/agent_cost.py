"""What an agent pays on a benchmark (semble-dev): the tokens it reads before the first
relevant code, and the relevant files it gets within a token budget; against grep-then-read.

Every count is in the agent's tokenizer (``engine.search.tokens.agent_counter``: OpenAI's
cl100k_base through tiktoken). Targets and "covers" are the benchmark protocol's
(eval/protocol.py): a result covers a target when its repository-root path equals the
target's and, for a line-range target, its lines overlap the range; ``relevant`` and
``secondary`` are both targets.

**Tokens to the first hit, ours.** The ``semanticSearch`` answer as the agent tool returns it
(``Searcher.search`` with the tool's default ``limit`` of 10 and default ranking), read in rank
order. Each result costs the tokens of its serialized JSON object, exactly the object the tool
sends (cli/output.py ``result_json``, a long chunk cut to its best-matching lines by
engine/search/excerpt.py; compact JSON, as orjson writes it);
the answer's envelope (``query``, ``total``, brackets) is left out. A query costs the sum up to
and including the first result that covers a target. **A miss** (no result of the 10 covers
one) costs every result returned plus ``MISS_PENALTY_TOKENS``.

**Tokens to the first hit, grep.** eval/grep_baseline.py: the query's words grepped over the
same checkout, files ranked by matching lines and read whole until the first that holds a
target, at most 10 files; a miss costs everything read plus the same penalty.

**Recall within a budget.** The same search packed by engine/search/budget.py ``pack`` into
1k, 2k and 4k tokens with the same counter, as ``engine query --budget N`` packs its
``--limit`` results (full code, then signatures, then locations), each as the tool shows it
(excerpts of long chunks): ``top10`` packs the 10
results of the answer above, ``top50`` packs 50 (``--limit 50``). A target counts as recalled
when a packed block *with code* (full or signature; a bare location does not) covers it.
``recall`` is the share of a query's targets recalled, ``hit`` 1 when any is.

Aggregates follow the protocol: a repository's value is the mean over its queries, the
headline the mean of the 36 repository means, a category's the mean over the repositories
that have it. Medians and the paired comparison are over queries.

Usage: ``python -m eval.agent_cost --benchmark FOLDER --checkouts DIR [--repos a,b]
[--budgets 1000,2000,4000] [--penalty N] [--out FILE] [--json]``; the indexes are read from
(and, when missing, built in) ``$ENGINE_HOME``, as ``engine eval --benchmark`` builds them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from engine.index.home import Home
from engine.search.budget import TokenCounter
from engine.search.excerpt import excerpt, excerpt_json
from engine.types import Result, SearchResponse
from eval.benchmark import BenchQuery, BenchRepo
from eval.benchmark_run import grouped
from eval.context_metric import Span, covered, packed_spans
from eval.grep_baseline import DEFAULT_MAX_FILES, GrepCorpus, grep_then_read
from eval.metrics import mean
from eval.protocol import mean_of_means

DEFAULT_BUDGETS = (1000, 2000, 4000)
LIMIT = 10  # semanticSearch's default limit
DEEP_LIMIT = 50
# What a miss costs on top of what was read, on both sides: a convention for "the agent has to
# look again" (about one more full answer plus one whole file). The report gives the misses,
# so another penalty P changes a mean by (P - 10,000) x the share of misses.
MISS_PENALTY_TOKENS = 10_000


class Searcher(Protocol):
    def search(self, text: str, *, limit: int = 10) -> SearchResponse: ...


def result_object(result: Result) -> dict[str, Any]:
    """One result as the agent tool serializes it (cli/output.py ``result_json``; eval sits
    below cli, and tests/eval pins that the two agree)."""
    data: dict[str, Any] = result.contract_json()
    if result.duplicates:
        data["alsoIn"] = list(result.duplicates)
    return data


def agent_view(result: Result, query: str) -> tuple[dict[str, Any], Result]:
    """(the object the agent tool sends, the lines it shows) for one result: a long chunk is
    sent as its best-matching lines (engine/search/excerpt.py), as ``semanticSearch`` does
    unless asked for whole chunks; tests/eval pins that the two agree."""
    data = result_object(result)
    cut = excerpt(result, query)
    if cut is None:
        return data, result
    return excerpt_json(data, cut), cut.result


def result_tokens(results: Sequence[Result], count: TokenCounter) -> list[int]:
    """Each result's cost to the agent: the tokens of its compact JSON object."""
    return [count(orjson.dumps(result_object(r)).decode()) for r in results]


def first_hit_tokens(
    costs: Sequence[int], covers: Sequence[bool], penalty: int
) -> tuple[int, int | None]:
    """(tokens, 1-based rank of the first covering item) reading ``costs`` in order; a miss
    is (everything + penalty, None)."""
    used = 0
    for rank, (cost, hit) in enumerate(zip(costs, covers, strict=True), 1):
        used += cost
        if hit:
            return used, rank
    return used + penalty, None


@dataclass
class QueryCost:
    id: str
    repo: str
    category: str
    ours_tokens: int
    ours_rank: int | None  # None: no hit in the top 10
    answer_tokens: int  # the whole answer's results
    grep_tokens: int
    grep_rank: int | None  # files read to the first relevant one; None: a miss
    grep_words: tuple[str, ...]
    # ours again with each result costing its code alone (no path, lines, score): what a
    # count of snippet text gives
    content_tokens: int = 0
    recall: dict[str, float] = field(default_factory=dict)  # "top10@2000" -> share of targets
    hit: dict[str, float] = field(default_factory=dict)


def measure_query(
    q: BenchQuery,
    repo: BenchRepo,
    searcher: Searcher,
    corpus: GrepCorpus,
    count: TokenCounter,
    *,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    penalty: int = MISS_PENALTY_TOKENS,
    max_files: int = DEFAULT_MAX_FILES,
) -> QueryCost:
    """Both sides' costs and the budget recalls of one answerable query."""
    targets = q.targets
    views = [agent_view(r, q.query) for r in searcher.search(q.query, limit=LIMIT).results]
    answer = [shown for _, shown in views]
    costs = [count(orjson.dumps(data).decode()) for data, _ in views]
    covers = [
        any(t.overlaps(repo.repo_path(r.path), r.start_line, r.end_line) for t in targets)
        for r in answer
    ]
    ours, rank = first_hit_tokens(costs, covers, penalty)
    paths = {t.path for t in targets}  # a whole file read covers any range in it
    grep = grep_then_read(
        corpus, q.query, lambda path: repo.repo_path(path) in paths, max_files=max_files
    )
    grep_tokens = grep.tokens if grep.first_hit is not None else grep.tokens + penalty
    code_only, _ = first_hit_tokens([count(r.content) for r in answer], covers, penalty)
    cost = QueryCost(
        q.id, q.repo, q.category, ours, rank, sum(costs), grep_tokens, grep.first_hit, grep.words
    )
    cost.content_tokens = code_only
    deep = [agent_view(r, q.query)[1] for r in searcher.search(q.query, limit=DEEP_LIMIT).results]
    for name, results in (("top10", answer), (f"top{DEEP_LIMIT}", deep)):
        for budget in budgets:
            spans, _ = packed_spans(results, budget, count)
            found = covered(
                [Span(repo.repo_path(s.path), s.start_line, s.end_line) for s in spans], targets
            )
            got = sum(s is not None for s in found)
            cost.recall[f"{name}@{budget}"] = got / len(targets)
            cost.hit[f"{name}@{budget}"] = 1.0 if got else 0.0
    return cost


def measure(
    repos: Sequence[BenchRepo],
    queries: Sequence[BenchQuery],
    open_repo: Callable[[BenchRepo], tuple[Searcher, Path, Callable[[], None]]],
    count: TokenCounter,
    *,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    penalty: int = MISS_PENALTY_TOKENS,
    progress: Callable[[str], None] = lambda _: None,
) -> list[QueryCost]:
    """Every answerable query of ``repos``; ``open_repo`` gives a repository's searcher, the
    folder its index was built from (which the baseline greps) and a close function."""
    out: list[QueryCost] = []
    for repo in repos:
        searcher, scope, close = open_repo(repo)
        try:
            corpus = GrepCorpus.scan(scope, count)
            mine = [q for q in queries if q.repo == repo.name and q.targets]
            for q in mine:
                out.append(
                    measure_query(
                        q, repo, searcher, corpus, count, budgets=budgets, penalty=penalty
                    )
                )
            progress(f"{repo.name}: {len(mine)} queries, {len(corpus.files)} files grepped")
        finally:
            close()
    return out


def _mean_of_repo_means(
    values: Mapping[str, float], queries: Sequence[BenchQuery]
) -> dict[str, float]:
    """ "all" and each category: the protocol's mean of repository means of ``values``."""
    out = {"all": mean_of_means(grouped(values, queries, lambda q: "all").get("all", {}))}
    by_category = grouped(values, queries, lambda q: q.category)
    out |= {category: mean_of_means(repos) for category, repos in sorted(by_category.items())}
    return out


def summarize(costs: Sequence[QueryCost], queries: Sequence[BenchQuery]) -> dict[str, Any]:
    """The report's numbers: means of repository means (overall and per category), medians
    and misses over queries, and the paired comparison."""
    ids = {c.id for c in costs}
    measured = [q for q in queries if q.id in ids]
    ours = {c.id: float(c.ours_tokens) for c in costs}
    grep = {c.id: float(c.grep_tokens) for c in costs}
    both = [c for c in costs if c.ours_rank is not None and c.grep_rank is not None]
    configs = list(costs[0].recall) if costs else []
    return {
        "queries": len(costs),
        "repos": len({c.repo for c in costs}),
        "firstHit": {
            "ours": {
                "mean": _mean_of_repo_means(ours, measured),
                "median": statistics.median(ours.values()) if ours else 0.0,
                "misses": sum(c.ours_rank is None for c in costs),
                "meanAnswerTokens": mean([float(c.answer_tokens) for c in costs]),
            },
            "oursCodeOnly": {
                "mean": _mean_of_repo_means(
                    {c.id: float(c.content_tokens) for c in costs}, measured
                ),
            },
            "grep": {
                "mean": _mean_of_repo_means(grep, measured),
                "median": statistics.median(grep.values()) if grep else 0.0,
                "misses": sum(c.grep_rank is None for c in costs),
                "noWords": sum(not c.grep_words for c in costs),
            },
            "bothHit": len(both),
            "oursCheaper": sum(c.ours_tokens < c.grep_tokens for c in costs),
            "medianRatioBothHit": statistics.median(
                [c.grep_tokens / max(1, c.ours_tokens) for c in both]
            )
            if both
            else 0.0,
        },
        "recall": {
            name: _mean_of_repo_means({c.id: c.recall[name] for c in costs}, measured)
            for name in configs
        },
        "hit": {
            name: _mean_of_repo_means({c.id: c.hit[name] for c in costs}, measured)
            for name in configs
        },
    }


def table(summary: Mapping[str, Any]) -> str:
    """The readable report of ``summarize``'s numbers."""
    first = summary["firstHit"]
    ours, grep = first["ours"], first["grep"]
    categories = [c for c in ours["mean"] if c != "all"]
    columns = ["all", *categories]
    head = f"{'':<28}" + "".join(f"{c:>14}" for c in columns)
    rows = [
        f"{summary['queries']} answerable queries, {summary['repos']} repositories "
        "(means of repository means)",
        "",
        "tokens to the first hit",
        head,
    ]
    sides = (
        ("ours (semanticSearch)", ours),
        ("ours, code only", first["oursCodeOnly"]),
        ("grep then read", grep),
    )
    for name, side in sides:
        cells = "".join(f"{side['mean'][c]:>14,.0f}" for c in columns)
        rows.append(f"{name:<28}{cells}")
    rows += [
        f"median over queries: ours {ours['median']:,.0f}, grep {grep['median']:,.0f}; misses: "
        f"ours {ours['misses']}, grep {grep['misses']} (no words to grep: {grep['noWords']})",
        f"ours cheaper on {first['oursCheaper']} of {summary['queries']}; both hit on "
        f"{first['bothHit']}, median grep/ours there {first['medianRatioBothHit']:.1f}x; a whole "
        f"answer is {ours['meanAnswerTokens']:,.0f} tokens on average",
        "",
        "recall / hit within a budget",
        head,
    ]
    for name in summary["recall"]:
        recall, hit = summary["recall"][name], summary["hit"][name]
        cells = "".join(f"{recall[c]:.3f}/{hit[c]:.3f}".rjust(14) for c in columns)
        rows.append(f"{name:<28}{cells}")
    return "\n".join(rows)


def _opener(
    home: Home, checkouts: Path
) -> Callable[[BenchRepo], tuple[Searcher, Path, Callable[[], None]]]:
    """Materializes, indexes (once) and opens each repository, as ``engine eval --benchmark``."""
    from engine.index.opening import open_index
    from engine.signal import OpenOptions
    from eval.benchmark import materialize
    from eval.benchmark_run import ensure_index
    from signals.registry import plugins

    def open_repo(repo: BenchRepo) -> tuple[Searcher, Path, Callable[[], None]]:
        scope = materialize(repo, checkouts)
        ensure_index(home, plugins(), repo, scope)
        opened = open_index(home, repo.name, plugins(), OpenOptions(home=home.root))
        return opened.searcher, scope, opened.close

    return open_repo


def main(argv: Sequence[str] | None = None) -> int:
    from engine.errors import EngineError
    from engine.index.home import engine_home
    from engine.search.tokens import agent_counter
    from eval.benchmark import DEFAULT_CHECKOUTS, load_benchmark

    parser = argparse.ArgumentParser(prog="python -m eval.agent_cost", description=__doc__)
    parser.add_argument("--benchmark", type=Path, required=True)
    parser.add_argument("--checkouts", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--repos", help="Only these repositories, e.g. click,cobra.")
    parser.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)))
    parser.add_argument("--penalty", type=int, default=MISS_PENALTY_TOKENS)
    parser.add_argument("--out", type=Path, help="Write the summary and every query's costs.")
    parser.add_argument("--json", action="store_true", help="Print JSON instead of a table.")
    args = parser.parse_args(argv)
    count, tokenizer = agent_counter()
    try:
        only = [r.strip() for r in (args.repos or "").split(",") if r.strip()] or None
        repos, queries = load_benchmark(args.benchmark, only)
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
        costs = measure(
            repos,
            queries,
            _opener(Home(engine_home()), args.checkouts),
            count,
            budgets=budgets,
            penalty=args.penalty,
            progress=lambda line: print(line, file=sys.stderr),
        )
    except (EngineError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    summary = {"tokenizer": tokenizer, "penalty": args.penalty, **summarize(costs, queries)}
    if args.out is not None:
        perquery = [{**vars(c), "grep_words": list(c.grep_words)} for c in costs]
        args.out.write_bytes(
            orjson.dumps({**summary, "perQuery": perquery}, option=orjson.OPT_INDENT_2)
        )
    if args.json:
        print(orjson.dumps(summary, option=orjson.OPT_INDENT_2).decode())
    else:
        print(f"{args.benchmark} ({tokenizer}, miss penalty {args.penalty:,} tokens)")
        print(table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
