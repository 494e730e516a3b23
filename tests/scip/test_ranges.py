from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scip.errors import RangeError
from scip.ranges import Range, decode_range, encode_range, from_lines, to_lines


def test_three_ints_stay_on_one_line() -> None:
    assert decode_range([3, 4, 9]) == Range(3, 4, 3, 9)
    assert encode_range(Range(3, 4, 3, 9)) == [3, 4, 9]


def test_four_ints() -> None:
    assert decode_range([3, 0, 5, 33]) == Range(3, 0, 5, 33)
    assert encode_range(Range(3, 0, 5, 33)) == [3, 0, 5, 33]


@pytest.mark.parametrize(
    ("values", "lines"),
    [
        ([3, 4, 9], (4, 4)),
        ([3, 0, 5, 33], (4, 6)),
        # scip-typescript's module range for a 17-line file ends at char 0 of line 17.
        ([1, 0, 17, 0], (2, 17)),
        ([0, 4, 1, 0], (1, 1)),
        # An empty range at a line start stays on its line.
        ([2, 0, 2, 0], (3, 3)),
        ([2, 0, 0], (3, 3)),
    ],
)
def test_to_lines_is_one_based_inclusive(values: list[int], lines: tuple[int, int]) -> None:
    assert to_lines(decode_range(values)) == lines


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ([], "3 or 4 ints"),
        ([1, 2], "3 or 4 ints"),
        ([1, 2, 3, 4, 5], "3 or 4 ints"),
        ([-1, 0, 3], "negative"),
        ([0, 0, -2, 3], "negative"),
        ([4, 0, 3, 9], "ends before it starts"),
        ([4, 7, 5], "ends before it starts"),
    ],
)
def test_invalid_ranges_raise(values: list[int], problem: str) -> None:
    with pytest.raises(RangeError, match=problem):
        decode_range(values)


def test_from_lines_rejects_non_spans() -> None:
    with pytest.raises(RangeError):
        from_lines(0, 3)
    with pytest.raises(RangeError):
        from_lines(5, 4)


positions = st.integers(min_value=0, max_value=2**31 - 1)


@st.composite
def ranges(draw: st.DrawFn) -> Range:
    start_line, end_line = sorted((draw(positions), draw(positions)))
    start_char, end_char = draw(positions), draw(positions)
    if start_line == end_line and end_char < start_char:
        start_char, end_char = end_char, start_char
    return Range(start_line, start_char, end_line, end_char)


@given(ranges())
def test_decode_inverts_encode(span: Range) -> None:
    encoded = encode_range(span)
    assert decode_range(encoded) == span
    assert len(encoded) == (3 if span.start_line == span.end_line else 4)


@given(st.lists(positions, min_size=3, max_size=4))
def test_encode_inverts_decode_when_canonical(values: list[int]) -> None:
    try:
        span = decode_range(values)
    except RangeError:
        return
    if len(values) == 4 and values[0] == values[2]:
        assert encode_range(span) == [values[0], values[1], values[3]]
    else:
        assert encode_range(span) == values


@given(ranges())
def test_lines_are_ordered_and_within_the_range(span: Range) -> None:
    start, end = to_lines(span)
    assert start == span.start_line + 1
    assert start <= end <= span.end_line + 1


@given(st.integers(min_value=1, max_value=10**6), st.integers(min_value=0, max_value=1000))
def test_whole_line_spans_round_trip(start_line: int, extra: int) -> None:
    assert to_lines(from_lines(start_line, start_line + extra)) == (start_line, start_line + extra)
