"""Readable tables for a benchmark run: the ablation, per repository, language and category,
latency, and per-query wins and losses against a saved baseline run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

WIN = 0.005  # an NDCG@10 change smaller than this is a tie, not a win or a loss


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(_row(r, widths) for r in [header, *rows])


def ablation_table(data: Mapping[str, Any], base: Mapping[str, Any] | None) -> str:
    categories = sorted({c for cfg in data["configs"] for c in cfg["byCategory"]})
    base_by_name = {c["name"]: c for c in base["configs"]} if base else {}
    rows = []
    for cfg in data["configs"]:
        cells = [cfg["name"], f"{cfg['ndcg10']:.3f}"]
        cells += [f"{cfg['byCategory'].get(c, 0.0):.3f}" for c in categories]
        old = base_by_name.get(cfg["name"])
        cells.append(f"{cfg['ndcg10'] - old['ndcg10']:+.3f}" if old else "")
        rows.append(cells)
    return _table(["configuration", "NDCG@10", *categories, "Δ baseline"], rows)


def repo_table(data: Mapping[str, Any], base: Mapping[str, Any] | None) -> str:
    head = data["configs"][0]
    old = base["configs"][0]["byRepo"] if base else {}
    rows = [
        [name, f"{score:.3f}", f"{score - old[name]:+.3f}" if name in old else ""]
        for name, score in head["byRepo"].items()
    ]
    languages = [[lang, f"{score:.3f}", ""] for lang, score in head["byLanguage"].items()]
    return (
        _table(["repository", "NDCG@10", "Δ"], rows)
        + "\n\n"
        + _table(["language", "NDCG@10", ""], languages)
    )


def latency_line(data: Mapping[str, Any]) -> str:
    parts = [
        f"{name} p50 {v['p50']:.1f} ms / p95 {v['p95']:.1f} ms"
        for name, v in data["latencyMs"].items()
    ]
    return "latency: " + "; ".join(parts)


def wins_and_losses(data: Mapping[str, Any], base: Mapping[str, Any], limit: int = 15) -> str:
    """The headline configuration's biggest per-query changes against the baseline's."""
    now = data["configs"][0]["perQuery"]
    before = base["configs"][0]["perQuery"]
    changes = sorted(
        ((now[q] - before[q], q) for q in now if q in before and abs(now[q] - before[q]) >= WIN),
        key=lambda item: item[0],
    )
    wins = [c for c in changes if c[0] > 0]
    losses = [c for c in changes if c[0] < 0]
    lines = [f"per query vs baseline: {len(wins)} better, {len(losses)} worse"]
    lines += [f"  worse {delta:+.3f} {q}" for delta, q in losses[:limit]]
    lines += [f"  better {delta:+.3f} {q}" for delta, q in reversed(wins[-limit:])]
    return "\n".join(lines)


def confidence_line(data: Mapping[str, Any]) -> str:
    flags = data["lowConfidence"]
    line = f"lowConfidence: {flags['answerableFlagged']:.1%} of {flags['answerable']} answerable"
    if flags["negatives"]:
        line += f", {flags['negativesFlagged']:.1%} of {flags['negatives']} unanswerable flagged"
    return line
