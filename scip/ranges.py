"""SCIP ranges: decode the 3- or 4-int encoding, encode it back, convert to 1-based lines.

SCIP positions are 0-based and half-open: ``[startLine, startChar, endLine, endChar]``, or
``[startLine, startChar, endChar]`` when the range stays on one line. Characters count code
units of the document's position encoding (UTF-8 bytes for the engine's own indexes).

The rest of the engine speaks 1-based inclusive lines. A half-open range that ends at
character 0 of line L covers nothing of line L, so it ends on line L-1: ``to_lines`` applies
that only when the range spans more than one line (``end_char == 0 and end_line >
start_line``); an empty range at the start of a line stays on that line. ``from_lines`` makes
whole-line ranges in exactly that form, so the two round-trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scip.errors import RangeError


@dataclass(frozen=True, slots=True)
class Range:
    """A half-open SCIP range; every field is 0-based. Construction validates it."""

    start_line: int
    start_char: int
    end_line: int
    end_char: int  # exclusive

    def __post_init__(self) -> None:
        fields = (self.start_line, self.start_char, self.end_line, self.end_char)
        if min(fields) < 0:
            raise RangeError(f"negative position in range {list(fields)}")
        if (self.end_line, self.end_char) < (self.start_line, self.start_char):
            raise RangeError(f"range {list(fields)} ends before it starts")


def decode_range(values: Sequence[int]) -> Range:
    """``[sl, sc, ec]`` or ``[sl, sc, el, ec]`` as a ``Range``; anything else raises."""
    if len(values) == 3:
        start_line, start_char, end_char = values
        return Range(start_line, start_char, start_line, end_char)
    if len(values) == 4:
        return Range(*values)
    raise RangeError(f"a SCIP range has 3 or 4 ints, not {len(values)}: {list(values)}")


def encode_range(span: Range) -> list[int]:
    """The SCIP encoding, using the 3-int form whenever the range stays on one line."""
    if span.start_line == span.end_line:
        return [span.start_line, span.start_char, span.end_char]
    return [span.start_line, span.start_char, span.end_line, span.end_char]


def to_lines(span: Range) -> tuple[int, int]:
    """The 1-based inclusive (start_line, end_line) that the range touches."""
    end_line = span.end_line
    if span.end_char == 0 and span.end_line > span.start_line:
        end_line -= 1
    return span.start_line + 1, end_line + 1


def from_lines(start_line: int, end_line: int) -> Range:
    """The half-open range covering 1-based inclusive lines start_line..end_line whole."""
    if start_line < 1 or end_line < start_line:
        raise RangeError(f"not a 1-based inclusive line span: {start_line}..{end_line}")
    return Range(start_line - 1, 0, end_line, 0)
