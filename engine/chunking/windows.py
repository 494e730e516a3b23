"""Cutting a long line range into windows, at statement starts when the syntax tree has them.

A range longer than ``limit`` lines is cut into the fewest windows that fit, each about the
same size; a cut goes where a statement starts (a named node at the shallowest level that
has one there), else after a blank line, else at the ideal line. Windows never overlap and
together cover the whole range.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.types import ChunkDraft

if TYPE_CHECKING:
    from tree_sitter import Node

# Lines per window for files without a grammar; windows do not overlap and prefer to end
# at a paragraph break.
TEXT_WINDOW_LINES = 50

# Bound on the nodes visited to find statement starts for one range: keeps a pathological
# tree (one statement of 100k lines) linear in the range, not in the tree.
_MAX_NODES_VISITED = 20_000


def split_range(
    first: int, last: int, limit: int, starts: Sequence[int], lines: Sequence[str]
) -> list[tuple[int, int]]:
    """Windows (first_line, last_line), 1-based inclusive, covering ``first..last``.

    ``starts`` are sorted 1-based lines where a window may begin; ``lines`` are the file's
    lines, used to prefer a cut after a blank line when no statement starts nearby.
    """
    windows: list[tuple[int, int]] = []
    current = first
    shortest = max(1, limit // 4)
    while last - current + 1 > limit:
        remaining = last - current + 1
        ideal = current + math.ceil(remaining / math.ceil(remaining / limit))
        low, high = current + shortest, current + limit  # where the next window may begin
        cut = _nearest(starts, low, high, ideal)
        if cut is None:
            cut = _after_blank(lines, low, high, ideal) or ideal
        windows.append((current, cut - 1))
        current = cut
    windows.append((current, last))
    return windows


def _nearest(starts: Sequence[int], low: int, high: int, ideal: int) -> int | None:
    """The element of sorted ``starts`` within [low, high] closest to ``ideal``.

    ``ideal`` always lies within [low, high], so the closest element overall (one of the
    two neighbours of ``ideal``) is the closest within the bounds if any element is.
    """
    i = bisect.bisect_left(starts, ideal)
    best: int | None = None
    for j in (i - 1, i):
        in_bounds = 0 <= j < len(starts) and low <= starts[j] <= high
        if in_bounds and (best is None or abs(starts[j] - ideal) < abs(best - ideal)):
            best = starts[j]
    return best


def _after_blank(lines: Sequence[str], low: int, high: int, ideal: int) -> int | None:
    """The line closest to ``ideal`` in [low, high] whose previous line is blank."""
    for distance in range(high - low + 1):
        for line in (ideal - distance, ideal + distance):
            if low <= line <= high and line - 2 < len(lines) and not lines[line - 2].strip():
                return line
    return None


def statement_starts(scope: Node, first: int, last: int, limit: int) -> list[int]:
    """Sorted 1-based lines in (first, last] where a named node under ``scope`` starts.

    Direct children of ``scope`` are listed; a child longer than ``limit`` lines is opened
    too, since a cut inside it cannot be avoided. Only children overlapping the range are
    visited (the cursor jumps to the first one), so the cost follows the range, not the file.
    """
    found: set[int] = set()
    pending = [scope]
    visited = 0
    while pending and visited < _MAX_NODES_VISITED:
        cursor = pending.pop().walk()
        if cursor.goto_first_child_for_point((first - 1, 0)) is None:
            continue
        while visited < _MAX_NODES_VISITED:
            child = cursor.node
            visited += 1
            if child is None:
                break
            row = child.start_point.row + 1
            if row > last:
                break
            if child.is_named:
                if row > first:
                    found.add(row)
                end = child.end_point.row + 1
                if end - row + 1 > limit and child.child_count:
                    pending.append(child)
            if not cursor.goto_next_sibling():
                break
    return sorted(found)


def blank_separated_starts(lines: Sequence[str], first: int, last: int) -> list[int]:
    """1-based lines in (first, last] that follow a blank line and are not blank: paragraphs."""
    return [
        number
        for number in range(first + 1, last + 1)
        if not lines[number - 2].strip() and lines[number - 1].strip()
    ]


def text_windows(path: str, language: str, lines: Sequence[str]) -> list[ChunkDraft]:
    """Windows of about TEXT_WINDOW_LINES lines, trimmed of blank lines at both ends."""
    starts = blank_separated_starts(lines, 1, len(lines))
    chunks: list[ChunkDraft] = []
    for first, last in split_range(1, len(lines), TEXT_WINDOW_LINES, starts, lines):
        while first <= last and not lines[first - 1].strip():
            first += 1
        while last >= first and not lines[last - 1].strip():
            last -= 1
        if first <= last:
            text = "\n".join(lines[first - 1 : last])
            chunks.append(ChunkDraft(path, language, "window", "", "", "", first, last, text))
    return chunks
