from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.dataset import Target
from eval.metrics import (
    Ranked,
    hit,
    ndcg,
    percentile,
    query_metrics,
    recall,
    reciprocal_rank,
)

A = Target("a.py", 10, 20)
B = Target("b.py", 1, 5)


def r(path: str, start: int, end: int) -> Ranked:
    return Ranked(path, start, end)


def test_hand_computed() -> None:
    results = [r("x.py", 1, 9), r("a.py", 15, 30), r("c.py", 1, 2), r("b.py", 5, 8)]
    assert reciprocal_rank(results, [A, B], 10) == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    assert ndcg(results, [A, B], 10) == pytest.approx(dcg / (1 + 1 / math.log2(3)))
    assert hit(results, [A, B], 1) == 0.0
    assert hit(results, [A, B], 3) == 1.0
    assert recall(results, [A, B], 3) == 0.5
    assert recall(results, [A, B], 10) == 1.0


def test_overlap_rules() -> None:
    assert A.overlaps("a.py", 20, 25)
    assert not A.overlaps("a.py", 21, 25)
    assert not A.overlaps("b.py", 10, 20)
    assert Target("a.py").overlaps("a.py", 999, 1000)


def test_duplicates_do_not_inflate() -> None:
    results = [r("a.py", 10, 12), r("a.py", 13, 15), r("a.py", 16, 20)]
    assert ndcg(results, [A, B], 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert recall(results, [A, B], 10) == 0.5


def test_file_level() -> None:
    results = [r("a.py", 100, 120), r("a.py", 1, 2), r("b.py", 50, 60)]
    m = query_metrics(results, [A, B], 10)
    assert m["mrr"] == 0.0
    assert m["file_mrr"] == 1.0
    assert m["file_ndcg"] == pytest.approx(1.0)
    assert m["file_hit@1"] == 1.0


def test_empty() -> None:
    assert query_metrics([], [A], 10)["ndcg"] == 0.0
    assert ndcg([r("a.py", 10, 10)], [], 10) == 0.0
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == 4.0


targets = st.lists(
    st.builds(
        lambda p, s, n: Target(p, s, s + n),
        st.sampled_from(["a.py", "b.py", "c.py"]),
        st.integers(1, 50),
        st.integers(0, 10),
    ),
    min_size=1,
    max_size=4,
)
rankings = st.lists(
    st.builds(
        lambda p, s, n: Ranked(p, s, s + n),
        st.sampled_from(["a.py", "b.py", "c.py", "d.py"]),
        st.integers(1, 60),
        st.integers(0, 10),
    ),
    max_size=15,
)


@given(rankings, targets)
def test_bounds(results: list[Ranked], ts: list[Target]) -> None:
    for value in query_metrics(results, ts, 10).values():
        assert 0.0 <= value <= 1.0 + 1e-12


@given(targets)
def test_perfect_ranking_scores_one(ts: list[Target]) -> None:
    distinct = list(dict.fromkeys(ts))
    # Each target's own range ranked in order is perfect unless two targets overlap.
    results = [Ranked(t.path, t.start_line or 1, t.end_line or 1) for t in distinct]
    overlapping = any(
        i != j and a.overlaps(b.path, b.start_line or 1, b.end_line or 1)
        for i, a in enumerate(distinct)
        for j, b in enumerate(distinct)
    )
    if not overlapping:
        assert ndcg(results, distinct, 10) == pytest.approx(1.0)
        assert reciprocal_rank(results, distinct, 10) == 1.0
        assert recall(results, distinct, 10) == pytest.approx(1.0)
