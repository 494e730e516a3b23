from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.search.fusion import reciprocal_rank_fusion
from engine.types import Hit, Location


def hits(*ids: int) -> list[Hit]:
    return [Hit(chunk_id=i, score=float(10 - n)) for n, i in enumerate(ids)]


def test_hand_computed_example() -> None:
    fused = reciprocal_rank_fusion(
        {"lexical": hits(1, 2, 3), "vector": hits(3, 1)}, {"lexical": 1.0, "vector": 1.0}, k=60
    )
    scores = {f.key: f.score for f in fused}
    best = 2 / 61
    assert [f.key for f in fused] == [1, 3, 2]
    assert abs(scores[1] - (1 / 61 + 1 / 62) / best) < 1e-12
    assert abs(scores[3] - (1 / 63 + 1 / 61) / best) < 1e-12
    assert abs(scores[2] - (1 / 62) / best) < 1e-12
    assert [c.signal for c in fused[0].contributions] == ["lexical", "vector"]
    assert fused[0].contributions[1].rank == 2


def test_weights_are_keyed_by_name() -> None:
    fused = reciprocal_rank_fusion({"a": hits(1), "b": hits(2)}, {"b": 3.0, "a": 1.0})
    assert [f.key for f in fused] == [2, 1]


def test_duplicate_hit_counts_once_at_best_rank() -> None:
    fused = reciprocal_rank_fusion({"a": hits(1, 1, 2)}, {})
    assert [c.rank for c in fused[0].contributions] == [1]
    assert fused[1].contributions[0].rank == 2


def test_chunkless_hits_fuse_by_location() -> None:
    loc = Location("a.py", 3, 4)
    fused = reciprocal_rank_fusion(
        {"symbol": [Hit(None, 1.0, symbol="a.f", location=loc)], "lexical": hits(7)}, {}
    )
    assert {f.key for f in fused} == {loc, 7}
    assert next(f for f in fused if f.key == loc).symbol == "a.f"


def test_empty_input() -> None:
    assert reciprocal_rank_fusion({}, {}) == []
    assert reciprocal_rank_fusion({"a": []}, {}) == []


ranked_lists = st.dictionaries(
    st.sampled_from(["lexical", "vector", "symbol"]),
    st.lists(st.integers(0, 30), max_size=20),
    max_size=3,
)


@given(ranked_lists, st.integers(0, 100))
def test_scores_bounded_and_sorted(lists: dict[str, list[int]], k: int) -> None:
    fused = reciprocal_rank_fusion({n: hits(*ids) for n, ids in lists.items()}, {}, k=k)
    assert all(0.0 <= f.score <= 1.0 for f in fused)
    assert [f.score for f in fused] == sorted((f.score for f in fused), reverse=True)
    assert len({f.key for f in fused}) == len(fused)
    assert {f.key for f in fused} == {i for ids in lists.values() for i in ids}


@given(st.lists(st.integers(0, 50), min_size=1, max_size=20, unique=True))
def test_top_of_every_list_scores_one(ids: list[int]) -> None:
    lists = {"lexical": hits(*ids), "vector": hits(*ids), "symbol": hits(*ids)}
    fused = reciprocal_rank_fusion(lists, {"vector": 2.0})
    assert fused[0].key == ids[0]
    assert abs(fused[0].score - 1.0) < 1e-9
    assert [f.key for f in fused] == ids
