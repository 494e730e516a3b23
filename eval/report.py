"""Readable tables for evaluation runs: metrics, ablation, categories, latency, deltas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eval.runner import RunSummary

MAIN_METRICS = (
    "ndcg",
    "mrr",
    "hit@1",
    "hit@3",
    "hit@5",
    "hit@10",
    "recall",
    "file_ndcg",
    "file_hit@1",
)


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [_row(header, widths), _row(["-" * w for w in widths], widths)]
    lines += [_row(r, widths) for r in rows]
    return "\n".join(lines)


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def _delta(value: float) -> str:
    return f"{value:+.3f}" if abs(value) >= 0.0005 else "="


def ablation_table(
    runs: Sequence[RunSummary], baseline: Mapping[str, Mapping[str, Any]] | None = None
) -> str:
    header = ["configuration", *MAIN_METRICS, "p50 ms", "p95 ms"]
    rows = []
    for run in runs:
        cells = [run.label, *(_fmt(run.metrics.get(m, 0.0)) for m in MAIN_METRICS)]
        fused = run.latency_ms.get("fused", {})
        cells += [f"{fused.get('p50', 0.0):.1f}", f"{fused.get('p95', 0.0):.1f}"]
        rows.append(cells)
        base = (baseline or {}).get(run.label)
        if base:
            base_metrics = base.get("metrics", {})
            rows.append(
                [
                    "  Δ vs baseline",
                    *(
                        _delta(run.metrics.get(m, 0.0) - base_metrics.get(m, 0.0))
                        for m in MAIN_METRICS
                    ),
                    "",
                    "",
                ]
            )
    return table(header, rows)


def category_table(run: RunSummary) -> str:
    metrics = ("ndcg", "mrr", "hit@1", "hit@10", "recall")
    header = ["category", "queries", *metrics]
    rows = [
        [category, str(int(values["queries"])), *(_fmt(values.get(m, 0.0)) for m in metrics)]
        for category, values in run.by_category.items()
    ]
    return table(header, rows)


def latency_table(run: RunSummary) -> str:
    header = ["stage", "p50 ms", "p95 ms"]
    rows = [[name, f"{v['p50']:.2f}", f"{v['p95']:.2f}"] for name, v in run.latency_ms.items()]
    return table(header, rows)


def negatives_line(run: RunSummary) -> str:
    n = run.negatives
    if not n["queries"]:
        return "negatives: none in this dataset"
    return (
        f"negatives: {int(n['queries'])} queries, {int(n['flagged'])} flagged lowConfidence "
        f"(answerable queries flagged: {int(n['answerable_flagged'])}); "
        f"top score mean {n['mean_top_score']:.3f}, "
        f"max {n['max_top_score']:.3f} (answerable queries' top score mean "
        f"{n['positive_mean_top_score']:.3f})"
    )
