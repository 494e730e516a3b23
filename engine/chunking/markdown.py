"""Markdown chunks: one per heading section, long sections cut at block boundaries.

A section runs from its heading line to the line before the next heading of any level, so
sections never nest or overlap. Text before the first heading (front matter, a badge line)
is a section with an empty name. The tree-sitter grammar finds the headings, so a ``#``
inside a fenced code block is not mistaken for one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.chunking.definitions import too_costly_to_query
from engine.chunking.naming import node_text
from engine.chunking.parsing import parse
from engine.chunking.windows import split_range, statement_starts, text_windows
from engine.types import ChunkDraft

if TYPE_CHECKING:
    from tree_sitter import Node, Query

# Longest section chunk, in lines, before it is cut at paragraph/block boundaries.
MAX_SECTION_LINES = 80

_ATX_MARKS = re.compile(r"^\s{0,3}#{1,6}\s*|\s+#+\s*$|^\s*#+\s*$")


def markdown_chunks(path: str, lines: Sequence[str], data: bytes) -> list[ChunkDraft]:
    from tree_sitter import QueryCursor

    tree = parse("markdown", data)
    if tree is None or too_costly_to_query(tree):
        return text_windows(path, "markdown", lines)
    root = tree.root_node
    headings = QueryCursor(_heading_query()).captures(root).get("heading", [])
    starts: list[tuple[int, str, str]] = [(1, "", "")]  # (first line, name, heading line)
    for heading in sorted(headings, key=lambda h: h.start_byte):
        line = heading.start_point.row + 1
        name = _heading_text(heading, data)
        if line == 1:
            starts[0] = (1, name, lines[0].strip())
        elif line > starts[-1][0]:
            starts.append((line, name, lines[line - 1].strip()))

    chunks: list[ChunkDraft] = []
    for index, (first, name, heading_line) in enumerate(starts):
        last = starts[index + 1][0] - 1 if index + 1 < len(starts) else len(lines)
        while last >= first and not lines[last - 1].strip():
            last -= 1
        while first <= last and not lines[first - 1].strip():
            first += 1
        if first > last:
            continue
        for window_first, window_last in _windows(first, last, lines, root):
            text = "\n".join(lines[window_first - 1 : window_last])
            chunks.append(
                ChunkDraft(
                    path,
                    "markdown",
                    "section",
                    name,
                    "",
                    "",
                    window_first,
                    window_last,
                    text,
                    signature=heading_line,
                )
            )
    return chunks


def _windows(first: int, last: int, lines: Sequence[str], root: Node) -> list[tuple[int, int]]:
    if last - first + 1 <= MAX_SECTION_LINES:
        return [(first, last)]
    block_starts = statement_starts(root, first, last, MAX_SECTION_LINES)
    return split_range(first, last, MAX_SECTION_LINES, block_starts, lines)


def _heading_text(heading: Node, data: bytes) -> str:
    content = heading.child_by_field_name("heading_content") or heading
    text = node_text(data, content)
    if heading.type == "atx_heading":
        text = _ATX_MARKS.sub("", text)
    return " ".join(text.split())


@functools.cache
def _heading_query() -> Query:
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    return Query(get_language("markdown"), "[(atx_heading) (setext_heading)] @heading")
