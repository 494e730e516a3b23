"""Run a dataset through the searcher: one configuration, or the ablation (every subset of
the signals, then the full configuration with each ranking feature switched off).

The harness drives the same ``Searcher.search`` that the CLI and the agent tool use, in one
process, so what it measures is what users get.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.search.ranking.options import DEFAULT_RANKING, FEATURES, RankingOptions
from engine.search.searcher import Searcher
from engine.signal import ProgressFn, no_progress
from eval.dataset import EvalQuery
from eval.metrics import Ranked, mean, percentile, query_metrics

SearcherFor = Callable[[str | None], Searcher]
"""Returns the searcher for a query's repository (None when the query names none)."""


@dataclass
class QueryOutcome:
    id: str
    category: str
    negative: bool
    metrics: dict[str, float]
    top_score: float
    latency_ms: dict[str, float]  # per signal, plus "fused" for the whole search call
    top_paths: list[str]
    signal_top: dict[str, float]  # each signal's best raw score (for calibrating confidence)
    low_confidence: bool


@dataclass
class RunSummary:
    signals: tuple[str, ...]
    queries: int
    metrics: dict[str, float]
    by_category: dict[str, dict[str, float]]
    negatives: dict[str, float]
    latency_ms: dict[str, dict[str, float]]  # name -> {"p50", "p95"}
    outcomes: list[QueryOutcome] = field(default_factory=list)
    name: str = ""  # a row that is not a signal subset: "-definitions" (one feature off)

    @property
    def label(self) -> str:
        return self.name or "+".join(self.signals)


def run_config(
    searcher_for: SearcherFor,
    queries: Sequence[EvalQuery],
    signals: Sequence[str],
    *,
    limit: int = 10,
    progress: ProgressFn = no_progress,
    ranking: RankingOptions | None = None,
    name: str = "",
) -> RunSummary:
    outcomes: list[QueryOutcome] = []
    label = name or "+".join(signals)
    for done, q in enumerate(queries, 1):
        searcher = searcher_for(q.repo)
        started = time.perf_counter()
        response = searcher.search(q.query, limit=limit, signals=list(signals), ranking=ranking)
        fused_ms = (time.perf_counter() - started) * 1000
        ranked = [Ranked(r.path, r.start_line, r.end_line) for r in response.results]
        metrics = {} if q.negative else query_metrics(ranked, q.relevant, limit)
        latency = {run.signal: run.latency_ms for run in response.runs}
        latency["fused"] = fused_ms
        outcomes.append(
            QueryOutcome(
                id=q.id,
                category=q.category,
                negative=q.negative,
                metrics=metrics,
                top_score=response.results[0].score if response.results else 0.0,
                latency_ms=latency,
                top_paths=[f"{r.path}:{r.start_line}-{r.end_line}" for r in response.results[:3]],
                signal_top={run.signal: run.hits[0].score for run in response.runs if run.hits},
                low_confidence=response.low_confidence,
            )
        )
        progress(f"eval {label}", done, len(queries))
    return summarize(tuple(signals), outcomes, name)


def summarize(signals: tuple[str, ...], outcomes: list[QueryOutcome], name: str = "") -> RunSummary:
    positives = [o for o in outcomes if not o.negative]
    negatives = [o for o in outcomes if o.negative]
    names = sorted({m for o in positives for m in o.metrics})
    overall = {m: mean([o.metrics[m] for o in positives]) for m in names}
    by_category: dict[str, dict[str, float]] = {}
    for category in sorted({o.category for o in positives}):
        group = [o for o in positives if o.category == category]
        by_category[category] = {m: mean([o.metrics[m] for o in group]) for m in names}
        by_category[category]["queries"] = float(len(group))
    latency_names = sorted({n for o in outcomes for n in o.latency_ms})
    latency = {
        n: {
            "p50": percentile([o.latency_ms[n] for o in outcomes if n in o.latency_ms], 50),
            "p95": percentile([o.latency_ms[n] for o in outcomes if n in o.latency_ms], 95),
        }
        for n in latency_names
    }
    negative_stats = {
        "queries": float(len(negatives)),
        "flagged": float(sum(o.low_confidence for o in negatives)),
        "answerable_flagged": float(sum(o.low_confidence for o in positives)),
        "mean_top_score": mean([o.top_score for o in negatives]),
        "max_top_score": max((o.top_score for o in negatives), default=0.0),
        "positive_mean_top_score": mean([o.top_score for o in positives]),
    }
    return RunSummary(
        signals=signals,
        queries=len(outcomes),
        metrics=overall,
        by_category=by_category,
        negatives=negative_stats,
        latency_ms=latency,
        outcomes=outcomes,
        name=name,
    )


def subsets(names: Sequence[str]) -> list[tuple[str, ...]]:
    """Each signal alone, each pair, ..., and all together, in registry order."""
    return [
        combo for size in range(1, len(names) + 1) for combo in itertools.combinations(names, size)
    ]


def run_ablation(
    searcher_for: SearcherFor,
    queries: Sequence[EvalQuery],
    names: Sequence[str],
    *,
    limit: int = 10,
    progress: ProgressFn = no_progress,
) -> list[RunSummary]:
    """Every subset of ``names``, the full set last among them, then the full set with each
    ranking feature off (``-definitions``, ...): what each signal and each feature is worth."""
    runs = [
        run_config(searcher_for, queries, combo, limit=limit, progress=progress)
        for combo in subsets(names)
    ]
    for feature in FEATURES:
        off = DEFAULT_RANKING.without(feature)
        runs.append(
            run_config(
                searcher_for,
                queries,
                names,
                limit=limit,
                progress=progress,
                ranking=off,
                name=f"-{feature}",
            )
        )
    return runs


def summary_json(summary: RunSummary) -> dict[str, Any]:
    return {
        "name": summary.label,
        "signals": list(summary.signals),
        "queries": summary.queries,
        "metrics": summary.metrics,
        "byCategory": summary.by_category,
        "negatives": summary.negatives,
        "latencyMs": summary.latency_ms,
        "perQuery": [
            {
                "id": o.id,
                "category": o.category,
                "negative": o.negative,
                "metrics": o.metrics,
                "topScore": o.top_score,
                "signalTop": o.signal_top,
                "lowConfidence": o.low_confidence,
                "top": o.top_paths,
            }
            for o in summary.outcomes
        ],
    }


def deltas(current: Mapping[str, float], baseline: Mapping[str, float]) -> dict[str, float]:
    return {m: current[m] - baseline[m] for m in current if m in baseline}
