"""The semble-dev protocol scorer against hand-computed cases."""

from __future__ import annotations

import math

import pytest

from eval.dataset import Target
from eval.metrics import Ranked
from eval.protocol import file_rank, mean_of_means, ndcg_at_10


def r(path: str, start: int = 1, end: int = 10) -> Ranked:
    return Ranked(path, start, end)


def test_one_file_target_found_first_scores_one() -> None:
    assert ndcg_at_10([r("a.py"), r("b.py")], [Target("a.py")]) == 1.0


def test_one_target_at_rank_three() -> None:
    got = ndcg_at_10([r("x.py"), r("y.py"), r("a.py")], [Target("a.py")])
    assert got == pytest.approx(1 / math.log2(4))


def test_more_chunks_of_the_found_file_add_nothing() -> None:
    # No de-duplication by file, but a target counts once: ranks 1 and 2 both cover a.py.
    assert ndcg_at_10([r("a.py", 1, 5), r("a.py", 6, 9)], [Target("a.py")]) == 1.0


def test_two_targets_at_ranks_one_and_four() -> None:
    got = ndcg_at_10([r("a.py"), r("x.py"), r("y.py"), r("b.py")], [Target("a.py"), Target("b.py")])
    ideal = 1 + 1 / math.log2(3)
    assert got == pytest.approx((1 + 1 / math.log2(5)) / ideal)


def test_a_rank_covering_two_targets_counts_once() -> None:
    # Two line ranges of one file, both overlapped by the first result: DCG 1, IDCG 1 + 1/log2 3.
    targets = [Target("a.py", 1, 3), Target("a.py", 5, 8)]
    got = ndcg_at_10([r("a.py", 1, 10)], targets)
    assert got == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_line_range_targets_need_overlap() -> None:
    targets = [Target("a.py", 20, 30)]
    assert ndcg_at_10([r("a.py", 1, 19)], targets) == 0.0
    assert ndcg_at_10([r("a.py", 1, 19), r("a.py", 30, 40)], targets) == pytest.approx(
        1 / math.log2(3)
    )


def test_only_the_top_ten_count() -> None:
    results = [r(f"x{i}.py") for i in range(10)] + [r("a.py")]
    assert ndcg_at_10(results, [Target("a.py")]) == 0.0


def test_ideal_dcg_is_capped_at_ten_targets() -> None:
    targets = [Target(f"t{i}.py") for i in range(12)]
    results = [r(f"t{i}.py") for i in range(10)]
    assert ndcg_at_10(results, targets) == pytest.approx(1.0)


def test_file_rank_counts_distinct_files() -> None:
    results = [r("a.py", 1, 2), r("a.py", 3, 4), r("b.py"), r("c.py")]
    assert file_rank(results, {"c.py"}) == 3
    assert file_rank(results, {"z.py"}) is None


def test_headline_is_the_mean_of_repository_means() -> None:
    # One repository with 3 queries, one with 1: the small one weighs as much.
    assert mean_of_means({"big": [1.0, 1.0, 1.0], "small": [0.0], "empty": []}) == 0.5
