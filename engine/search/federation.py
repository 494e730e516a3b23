"""Search several repositories at once and merge their answers into one ranking.

Each repository is searched in parallel by its own searcher. Fused scores are already on one
scale (1.0 = ranked first by every signal asked), but a repository with nothing relevant
still has a "best" result with a high rank score; so an answer flagged lowConfidence has its
scores scaled down before merging, and one repository's weak best hits cannot crowd out
another's strong ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from engine.types import Result, SearchResponse

LOW_CONFIDENCE_FACTOR = 0.5

SearchFn = Callable[[], SearchResponse]


def merge(responses: Sequence[SearchResponse], limit: int) -> SearchResponse:
    """One ranking from several repositories' responses, best score first."""
    results: list[Result] = []
    for response in responses:
        factor = LOW_CONFIDENCE_FACTOR if response.low_confidence else 1.0
        results.extend(
            replace(r, score=round(r.score * factor, 4)) if factor != 1.0 else r
            for r in response.results
        )
    results.sort(key=lambda r: -r.score)  # stable: ties keep repository order
    warnings = [w for response in responses for w in response.warnings]
    return SearchResponse(
        query=responses[0].query if responses else "",
        results=results[:limit],
        runs=[run for response in responses for run in response.runs],
        warnings=warnings,
        low_confidence=all(r.low_confidence for r in responses),
        query_kind=responses[0].query_kind if responses else "",
    )


def search_all(searches: Sequence[SearchFn], limit: int) -> SearchResponse:
    """Run each repository's search in parallel, then merge."""
    with ThreadPoolExecutor(max_workers=max(1, min(len(searches), 4))) as pool:
        responses = list(pool.map(lambda search: search(), searches))
    return merge(responses, limit)
