"""The semble-dev scoring protocol, exactly as ``../shared/benchmarks/semble-dev/README.md``
writes it (semble's ``benchmarks/metrics.py``), so our numbers compare with the published ones.

- The top 10 results as returned, one per chunk: no de-duplication by file.
- A result covers a target when its repository-root path equals the target's path and, for a
  line-range target, its lines overlap the range (a file-level result covers any range).
- DCG@10 sums 1/log2(r+1) over the distinct ranks r that are the first to cover some
  target; IDCG sums 1/log2(i+1) for i = 1..min(10, number of targets); both ``relevant``
  and ``secondary`` targets have gain 1.
- A repository's score is the mean over its queries; the headline is the mean of the
  repository means, and a category's score the mean over the repositories that have it.

This differs from ``eval.metrics.ndcg`` (the project's own datasets) in one way: a result
that covers two targets earns one rank's gain here, not one per target.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from eval.dataset import Target
from eval.metrics import Ranked, mean

CUTOFF = 10


def ndcg_at_10(results: Sequence[Ranked], targets: Sequence[Target]) -> float:
    """NDCG@10 of ``results`` (paths relative to the repository root) against ``targets``."""
    if not targets:
        return 0.0
    first_rank: dict[int, int] = {}
    for rank, result in enumerate(results[:CUTOFF], 1):
        for index, target in enumerate(targets):
            if index not in first_rank and target.overlaps(
                result.path, result.start_line, result.end_line
            ):
                first_rank[index] = rank
    dcg = sum(1.0 / math.log2(rank + 1) for rank in set(first_rank.values()))
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(CUTOFF, len(targets)) + 1))
    return dcg / ideal


def file_rank(results: Sequence[Ranked], paths: set[str]) -> int | None:
    """The 1-based rank of the first *distinct file* in ``paths`` (swebench-dev's Acc@k)."""
    seen: list[str] = []
    for result in results:
        if result.path not in seen:
            seen.append(result.path)
            if result.path in paths:
                return len(seen)
    return None


def mean_of_means(scores: Mapping[str, Sequence[float]]) -> float:
    """The mean over groups (repositories) of each group's mean, skipping empty groups."""
    return mean([mean(list(values)) for values in scores.values() if values])
