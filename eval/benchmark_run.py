"""Run a benchmark's queries through the searcher and score them with its protocol.

Per repository: materialize, index once (reused later), open, then every query goes through
``Searcher.search`` exactly as the CLI sends it; that run is the headline. The ablation rows
(each signal alone, pairs, each ranking feature off) re-rank the same signal runs through
``Searcher.rank_runs``, the second half of ``search``, so they need no second round of
signal queries; the full configuration replayed that way must equal the headline, which
the run checks and reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.index.home import Home
from engine.index.opening import open_index
from engine.search.ranking.options import DEFAULT_RANKING, RankingOptions
from engine.search.routing import ROUTES, QueryKind, Route
from engine.search.searcher import Searcher, depth_for
from engine.signal import IndexOptions, OpenOptions, ProgressFn, SignalPlugin, no_progress
from engine.types import Filters, Query, Result
from eval.benchmark import BenchQuery, BenchRepo, materialize
from eval.metrics import Ranked, mean, percentile
from eval.protocol import mean_of_means, ndcg_at_10

LIMIT = 10


@dataclass(frozen=True, slots=True)
class Config:
    """One row of the ablation: which signals, and which ranking options."""

    name: str
    signals: tuple[str, ...] | None = None  # None: every ready signal
    ranking: RankingOptions = DEFAULT_RANKING
    routes: Mapping[QueryKind, Route] | None = None  # None: the engine's own (ROUTES)


@dataclass
class ConfigScores:
    config: Config
    per_query: dict[str, float] = field(default_factory=dict)  # id -> NDCG@10
    top: dict[str, list[str]] = field(default_factory=dict)  # id -> "path:start-end" x 10


@dataclass
class BenchmarkRun:
    repos: list[BenchRepo]
    queries: list[BenchQuery]
    configs: list[ConfigScores]
    latency_ms: dict[str, list[float]]  # "fused" and each signal, one value per query
    replay_mismatches: int  # queries whose replayed full ranking differs from search()
    index_seconds: dict[str, float]
    low_confidence: dict[str, bool]  # query id -> flagged


# The ranking before the post-fusion stage: fusion, test and generated priors, dedupe, and
# up to three results per file.
BEFORE = RankingOptions(
    docs_prior=1.0,
    legacy_prior=1.0,
    max_per_file=3,
    fill=False,
    definitions=False,
    path_evidence=False,
    file_evidence=False,
)


def ablation_configs(signals: Sequence[str], features: Sequence[str]) -> list[Config]:
    """Each signal alone, lexical+vector, all fused; then all fused minus each feature."""
    rows = [Config("before (RRF, test/generated priors, 3 per file)", None, BEFORE)]
    rows += [Config(name, (name,)) for name in signals]
    if {"lexical", "vector"} <= set(signals) and len(signals) > 2:
        rows.append(Config("lexical+vector", ("lexical", "vector")))
    for feature in features:
        rows.append(Config(f"-{feature}", None, DEFAULT_RANKING.without(feature)))
    return rows


def _top(results: Sequence[Result], repo: BenchRepo) -> list[Ranked]:
    return [Ranked(repo.repo_path(r.path), r.start_line, r.end_line) for r in results]


def _label(ranked: Sequence[Ranked]) -> list[str]:
    return [f"{r.path}:{r.start_line}-{r.end_line}" for r in ranked]


def ensure_index(
    home: Home, plugins: Mapping[str, SignalPlugin], repo: BenchRepo, scope: Path
) -> float:
    """Index ``scope`` as ``repo.name`` unless it is already indexed; seconds spent."""
    if any(entry.slug == repo.name for entry in home.list()):
        return 0.0
    from engine.indexing.indexer import Indexer

    started = time.perf_counter()
    Indexer(home, dict(plugins), IndexOptions(home=home.root)).index(repo.name, scope)
    return time.perf_counter() - started


def run_benchmark(
    home: Home,
    plugins: Mapping[str, SignalPlugin],
    repos: Sequence[BenchRepo],
    queries: Sequence[BenchQuery],
    checkouts: Path,
    *,
    configs_for: Callable[[Sequence[str]], list[Config]] | None = None,
    progress: ProgressFn = no_progress,
) -> BenchmarkRun:
    headline = ConfigScores(Config("fused"))
    rows: dict[str, ConfigScores] = {}
    latency: dict[str, list[float]] = {}
    mismatches = 0
    flags: dict[str, bool] = {}  # query id -> lowConfidence
    index_seconds: dict[str, float] = {}
    done = 0
    for repo in repos:
        scope = materialize(repo, checkouts)
        index_seconds[repo.name] = ensure_index(home, plugins, repo, scope)
        opened = open_index(home, repo.name, plugins, OpenOptions(home=home.root))
        try:
            searcher = opened.searcher
            names = list(searcher.signals)
            configs = configs_for(names) if configs_for else []
            for config in configs:
                rows.setdefault(config.name, ConfigScores(config))
            for q in (q for q in queries if q.repo == repo.name):
                started = time.perf_counter()
                response = searcher.search(q.query, limit=LIMIT)
                latency.setdefault("fused", []).append((time.perf_counter() - started) * 1000)
                for signal_run in response.runs:
                    latency.setdefault(signal_run.signal, []).append(signal_run.latency_ms)
                flags[q.id] = response.low_confidence
                if not q.targets:  # an unanswerable query: only its flag is measured
                    continue
                ranked = _top(response.results, repo)
                headline.per_query[q.id] = ndcg_at_10(ranked, q.targets)
                headline.top[q.id] = _label(ranked)
                replayed = _replay(searcher, q.query, response.runs, Config("fused"))
                if _label(_top(replayed, repo)) != headline.top[q.id]:
                    mismatches += 1
                depth = max((depth_for(LIMIT, c.ranking) for c in configs), default=0)
                deep_runs = response.runs
                if depth > depth_for(LIMIT, searcher.ranking):
                    deep_runs = searcher.run_signals(Query(q.query), depth)
                for config in configs:
                    depth = depth_for(LIMIT, config.ranking)
                    runs = [replace(r, hits=r.hits[:depth]) for r in deep_runs]
                    ranked = _top(_replay(searcher, q.query, runs, config), repo)
                    rows[config.name].per_query[q.id] = ndcg_at_10(ranked, q.targets)
                    rows[config.name].top[q.id] = _label(ranked)
                done += 1
                progress("benchmark", done, len(queries))
        finally:
            opened.close()
    return BenchmarkRun(
        list(repos),
        list(queries),
        [headline, *rows.values()],
        latency,
        mismatches,
        index_seconds,
        flags,
    )


def _replay(searcher: Searcher, text: str, runs: Sequence[Any], config: Config) -> list[Result]:
    chosen = [r for r in runs if config.signals is None or r.signal in config.signals]
    return searcher.rank_runs(
        Query(text, Filters()), chosen, LIMIT, config.ranking, config.routes or ROUTES
    )


def grouped(
    scores: Mapping[str, float], queries: Sequence[BenchQuery], key: Callable[[BenchQuery], str]
) -> dict[str, dict[str, list[float]]]:
    """group -> repository -> the scores of that repository's queries in the group."""
    out: dict[str, dict[str, list[float]]] = {}
    for q in queries:
        if q.id in scores:
            out.setdefault(key(q), {}).setdefault(q.repo, []).append(scores[q.id])
    return out


def summary(run: BenchmarkRun, scores: ConfigScores) -> dict[str, Any]:
    """Headline, per repository, per language and per category, as the protocol means them."""
    language = {r.name: r.language for r in run.repos}
    per_repo = grouped(scores.per_query, run.queries, lambda q: "all").get("all", {})
    by_language: dict[str, list[float]] = {}
    for name, values in per_repo.items():
        by_language.setdefault(language[name], []).append(mean(values))
    return {
        "name": scores.config.name,
        "signals": list(scores.config.signals or ()),
        "ndcg10": mean_of_means(per_repo),
        "byRepo": {name: mean(values) for name, values in per_repo.items()},
        "byLanguage": {lang: mean(v) for lang, v in sorted(by_language.items())},
        "byCategory": {
            category: mean_of_means(repos)
            for category, repos in sorted(grouped(scores.per_query, run.queries, _cat).items())
        },
    }


def _cat(q: BenchQuery) -> str:
    return q.category


def _flag_rates(run: BenchmarkRun) -> dict[str, float]:
    negatives = [run.low_confidence[q.id] for q in run.queries if not q.targets]
    answerable = [run.low_confidence[q.id] for q in run.queries if q.targets]
    return {
        "negatives": len(negatives),
        "negativesFlagged": mean([float(f) for f in negatives]),
        "answerable": len(answerable),
        "answerableFlagged": mean([float(f) for f in answerable]),
    }


def run_json(run: BenchmarkRun) -> dict[str, Any]:
    return {
        "repos": [r.name for r in run.repos],
        "queries": len(run.queries),
        "replayMismatches": run.replay_mismatches,
        "lowConfidence": _flag_rates(run),
        "indexSeconds": run.index_seconds,
        "latencyMs": {
            name: {"p50": percentile(values, 50), "p95": percentile(values, 95)}
            for name, values in run.latency_ms.items()
        },
        # Every row's per-query scores, for --baseline; the ranked lists of the headline only
        # (the ablation rows' lists would multiply the file's size by their number).
        "configs": [
            {**summary(run, c), "perQuery": c.per_query, **({"top": c.top} if i == 0 else {})}
            for i, c in enumerate(run.configs)
        ],
    }


def report_text(data: Mapping[str, Any], base: Mapping[str, Any] | None) -> str:
    """The readable report of a saved run (``run_json``), against ``base`` when given."""
    from eval.benchmark_report import (
        ablation_table,
        confidence_line,
        latency_line,
        repo_table,
        wins_and_losses,
    )

    parts = [
        f"{len(data['repos'])} repositories, {data['queries']} queries, NDCG@10 as the "
        "benchmark's protocol scores it (mean of repository means)",
        ablation_table(data, base),
        repo_table(data, base),
        f"{latency_line(data)} (replay mismatches: {data['replayMismatches']})\n"
        + confidence_line(data),
    ]
    if base:
        parts.append(wins_and_losses(data, base))
    return "\n\n".join(parts)


def evaluate_benchmark(
    home: Home,
    plugins: Mapping[str, SignalPlugin],
    folder: Path,
    *,
    repos: Sequence[str] | None,
    checkouts: Path,
    negatives: Path | None,
    ablation: bool,
    variants: Sequence[Config] = (),
    progress: ProgressFn = no_progress,
) -> dict[str, Any]:
    """Materialize, index (once), run and score ``folder``'s benchmark: ``run_json``'s dict.
    ``variants`` (eval/variants.py) are rows of their own, after the ablation's."""
    from engine.search.ranking.options import FEATURES
    from eval.benchmark import load_benchmark

    def configs_for(names: Sequence[str]) -> list[Config]:
        rows = ablation_configs(names, FEATURES) if ablation else []
        return [*rows, *variants]

    chosen, queries = load_benchmark(folder, repos, negatives=negatives)
    run = run_benchmark(
        home,
        plugins,
        chosen,
        queries,
        checkouts,
        configs_for=configs_for if ablation or variants else None,
        progress=progress,
    )
    return run_json(run)
