"""Retrieval metrics over one ranked list: NDCG, MRR, hit@k and recall at chunk and file level.

A result is relevant when its path matches a target and its lines overlap the target's range
(a whole-file target matches any chunk of the file). Each target counts once: a second result
matching an already-found target earns nothing, so overlapping chunks cannot inflate a score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from eval.dataset import Target


@dataclass(frozen=True, slots=True)
class Ranked:
    """One returned result, as the metrics see it."""

    path: str
    start_line: int
    end_line: int


def gains(results: Sequence[Ranked], targets: Sequence[Target], k: int) -> list[int]:
    """1 at each rank (within k) whose result finds a target not found before, else 0."""
    found: set[int] = set()
    out: list[int] = []
    for result in results[:k]:
        gain = 0
        for index, target in enumerate(targets):
            if index not in found and target.overlaps(
                result.path, result.start_line, result.end_line
            ):
                found.add(index)
                gain = 1
                break
        out.append(gain)
    return out


def file_level(
    results: Sequence[Ranked], targets: Sequence[Target]
) -> tuple[list[Ranked], list[Target]]:
    """Collapse results to distinct files (first occurrence) and targets to whole files."""
    seen: set[str] = set()
    files: list[Ranked] = []
    for r in results:
        if r.path not in seen:
            seen.add(r.path)
            files.append(Ranked(r.path, 1, 1))
    paths = list(dict.fromkeys(t.path for t in targets))
    return files, [Target(p) for p in paths]


def ndcg(results: Sequence[Ranked], targets: Sequence[Target], k: int) -> float:
    if not targets:
        return 0.0
    dcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(gains(results, targets, k), 1))
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(targets), k) + 1))
    return dcg / ideal


def reciprocal_rank(results: Sequence[Ranked], targets: Sequence[Target], k: int) -> float:
    for rank, g in enumerate(gains(results, targets, k), 1):
        if g:
            return 1.0 / rank
    return 0.0


def hit(results: Sequence[Ranked], targets: Sequence[Target], k: int) -> float:
    return 1.0 if any(gains(results, targets, k)) else 0.0


def recall(results: Sequence[Ranked], targets: Sequence[Target], k: int) -> float:
    if not targets:
        return 0.0
    return sum(gains(results, targets, k)) / len(targets)


HIT_KS = (1, 3, 5, 10)


def query_metrics(
    results: Sequence[Ranked], targets: Sequence[Target], k: int = 10
) -> dict[str, float]:
    """Every metric for one query, chunk level and file level."""
    files, file_targets = file_level(results, targets)
    out = {
        "ndcg": ndcg(results, targets, k),
        "mrr": reciprocal_rank(results, targets, k),
        "recall": recall(results, targets, k),
        "file_ndcg": ndcg(files, file_targets, k),
        "file_mrr": reciprocal_rank(files, file_targets, k),
        "file_recall": recall(files, file_targets, k),
    }
    for n in HIT_KS:
        out[f"hit@{n}"] = hit(results, targets, n)
        out[f"file_hit@{n}"] = hit(files, file_targets, n)
    return out


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]
