"""Cutting long line ranges into windows."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from engine.chunking.windows import blank_separated_starts, split_range


def test_short_range_is_one_window() -> None:
    assert split_range(5, 20, 80, [], []) == [(5, 20)]


def test_windows_are_balanced_and_cut_at_the_nearest_start() -> None:
    lines = ["x"] * 200
    assert split_range(1, 100, 80, [], lines) == [(1, 50), (51, 100)]
    assert split_range(1, 100, 80, [48, 70], lines) == [(1, 47), (48, 100)]


def test_cut_after_a_blank_line_when_no_statement_starts_nearby() -> None:
    lines = ["x"] * 100
    lines[44] = ""  # line 45 is blank, so line 46 starts a paragraph
    assert split_range(1, 100, 80, [], lines) == [(1, 45), (46, 100)]


def test_blank_separated_starts() -> None:
    lines = ["a", "", "b", "c", "", "", "d"]
    assert blank_separated_starts(lines, 1, 7) == [3, 7]


@given(
    first=st.integers(1, 50),
    length=st.integers(1, 2000),
    limit=st.integers(1, 120),
    starts=st.lists(st.integers(1, 2100), max_size=60),
    blanks=st.sets(st.integers(1, 2100), max_size=60),
)
def test_windows_cover_the_range_without_overlap(
    first: int, length: int, limit: int, starts: list[int], blanks: set[int]
) -> None:
    last = first + length - 1
    lines = ["" if n in blanks else "x" for n in range(1, last + 2)]
    windows = split_range(first, last, limit, sorted(set(starts)), lines)
    assert windows[0][0] == first
    assert windows[-1][1] == last
    for (_, end), (start, _) in itertools.pairwise(windows):
        assert start == end + 1
    for start, end in windows:
        assert 1 <= end - start + 1 <= limit
