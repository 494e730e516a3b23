"""Reciprocal rank fusion of named, ranked hit lists into one ranking.

score(d) = Σ_s weight_s / (k + rank_s(d)), over the signals s that ranked d (rank 1-based).
The fused score is divided by the best score any document could get from the signals that
were asked (rank 1 everywhere), so it lies in [0, 1] and means the same across queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.types import Contribution, Hit, Location

DEFAULT_K = 60

ResultKey = int | Location  # a chunk id, or the location of a chunkless hit


@dataclass(frozen=True, slots=True)
class Fused:
    key: ResultKey
    score: float  # normalised to [0, 1]
    contributions: tuple[Contribution, ...]  # in the order of the signals asked
    symbol: str  # the first symbol a contributing hit named, "" if none


def hit_key(hit: Hit) -> ResultKey | None:
    if hit.chunk_id is not None:
        return hit.chunk_id
    return hit.location


def reciprocal_rank_fusion(
    ranked: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float],
    *,
    k: int = DEFAULT_K,
) -> list[Fused]:
    """Fuse each signal's ranked hits; hits a signal scores equally share a rank, and fused
    ties keep the order of first appearance (``rerank`` then orders them by location).

    A signal missing from ``weights`` gets weight 1.0. A document a signal lists twice counts
    once, at its best rank.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    best_possible = sum(weights.get(name, 1.0) for name in ranked) / (k + 1)
    totals: dict[ResultKey, float] = {}
    parts: dict[ResultKey, list[Contribution]] = {}
    symbols: dict[ResultKey, str] = {}
    order: dict[ResultKey, int] = {}
    for name, hits in ranked.items():
        weight = weights.get(name, 1.0)
        seen: set[ResultKey] = set()
        rank = listed = 0
        last_score: float | None = None
        for hit in hits:
            key = hit_key(hit)
            if key is None or key in seen:
                continue
            seen.add(key)
            listed += 1
            # Equal scores share the best rank of their group ("1224"): the order a backend
            # returns exact ties in depends on how its index was built (an update numbers
            # chunks and segments differently from a clean build), and must not move a score.
            if hit.score != last_score:
                rank, last_score = listed, hit.score
            rrf = weight / (k + rank)
            totals[key] = totals.get(key, 0.0) + rrf
            parts.setdefault(key, []).append(Contribution(name, rank, hit.score, weight, rrf))
            order.setdefault(key, len(order))
            if hit.symbol and not symbols.get(key):
                symbols[key] = hit.symbol
    keys = sorted(totals, key=lambda key: (-totals[key], order[key]))
    scale = 1.0 / best_possible if best_possible > 0 else 0.0
    return [
        Fused(key, min(1.0, totals[key] * scale), tuple(parts[key]), symbols.get(key, ""))
        for key in keys
    ]
