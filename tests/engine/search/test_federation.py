from __future__ import annotations

from engine.search.federation import merge, search_all
from engine.types import Result, SearchResponse


def response(repo: str, scores: list[float], *, low: bool = False) -> SearchResponse:
    results = [
        Result(repo, f"{repo}/f{i}.py", 1, 2, "", "x", s, ("lexical",))
        for i, s in enumerate(scores)
    ]
    return SearchResponse("q", results, [], [f"{repo} warning"], low_confidence=low)


def test_merge_orders_by_score_across_repositories() -> None:
    merged = merge([response("a", [0.9, 0.5]), response("b", [0.8, 0.7])], 3)
    assert [(r.repo, r.score) for r in merged.results] == [("a", 0.9), ("b", 0.8), ("b", 0.7)]
    assert merged.warnings == ["a warning", "b warning"]


def test_weak_repository_cannot_crowd_out_a_strong_one() -> None:
    weak = response("weak", [1.0, 0.99, 0.98], low=True)
    strong = response("strong", [0.8, 0.7])
    merged = merge([weak, strong], 3)
    assert [r.repo for r in merged.results][:2] == ["strong", "strong"]
    assert not merged.low_confidence
    assert merge([weak], 3).low_confidence


def test_search_all_runs_every_search() -> None:
    merged = search_all([lambda: response("a", [0.5]), lambda: response("b", [0.6])], 10)
    assert [r.repo for r in merged.results] == ["b", "a"]
