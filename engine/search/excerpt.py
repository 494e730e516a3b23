"""The lines of a long result that answer the query: what an agent reads first.

A chunk is a whole definition or a module stretch, and some run to hundreds of lines; an
agent that asked a question pays for every line it is shown. A result longer than
``max_lines`` is shown as the window of ``max_lines`` consecutive lines that holds the most
of the query's words (by stem, as the ranking stage stems them), with the definition's
header line(s) first when the window does not start there; a window with none of them is the
chunk's head. The result keeps the chunk's whole range in ``chunk_start_line`` /
``chunk_end_line``, so the agent knows what it is part of and can read the rest.

The content stays exactly the file's lines ``start_line..end_line``: the header, when
prepended, is a second, separate excerpt given in ``header`` rather than glued to the window.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.search.ranking.stems import stem
from engine.terms import STOPWORDS, identifier_parts, identifiers
from engine.types import Result

DEFAULT_EXCERPT_LINES = 16  # semble-dev: against 12, 24, 32, 48 and whole chunks (RESULTS)
HEADER_LINES = 1
MIN_STEM = 3  # shorter keys ("id", "io") would match inside unrelated words


@dataclass(frozen=True, slots=True)
class Excerpt:
    result: Result  # lines and content narrowed to the window
    chunk_start_line: int  # the whole chunk's range
    chunk_end_line: int
    header: str  # the chunk's first line when the window starts below it, else ""


def query_keys(query: str) -> tuple[str, ...]:
    """What a line must contain to hold each of the query's words: the common prefix of the
    word and its stem ("retry" and its stem "retri" give "retr", which finds "retry()" and
    "retries"), at least ``MIN_STEM`` characters."""
    keys: dict[str, None] = {}
    for token in identifiers(query):
        for part in identifier_parts(token):
            if part in STOPWORDS or part.isdigit():
                continue
            key = _shared_start(part, stem(part))
            if len(key) >= MIN_STEM:
                keys[key] = None
    return tuple(keys)


def _shared_start(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _line_score(line: str, wanted: tuple[str, ...]) -> int:
    """How many of the query's stems the line holds, as substrings of its lower-cased text
    (a stem is a word's prefix, so "chunk" finds "chunked" and "parallel_chunks"); a
    substring test keeps a 300-line chunk well under a millisecond."""
    lower = line.lower()
    return sum(1 for w in wanted if w in lower)


def excerpt(result: Result, query: str, max_lines: int = DEFAULT_EXCERPT_LINES) -> Excerpt | None:
    """The window of ``result`` to show for ``query``; None when the result is short enough
    to show whole."""
    lines = result.content.split("\n")
    if max_lines < 1 or len(lines) <= max_lines:
        return None
    wanted = query_keys(query)
    scores = [_line_score(line, wanted) for line in lines]
    window = sum(scores[:max_lines])
    best, best_start = window, 0
    for start in range(1, len(lines) - max_lines + 1):
        window += scores[start + max_lines - 1] - scores[start - 1]
        if window > best:
            best, best_start = window, start
    shown = lines[best_start : best_start + max_lines]
    narrowed = replace(
        result,
        start_line=result.start_line + best_start,
        end_line=result.start_line + best_start + len(shown) - 1,
        content="\n".join(shown),
    )
    header = "\n".join(lines[:HEADER_LINES]) if best_start >= HEADER_LINES else ""
    return Excerpt(narrowed, result.start_line, result.end_line, header)


def excerpt_json(data: dict[str, object], cut: Excerpt) -> dict[str, object]:
    """A result's JSON (``contract_json`` and what the formatter adds) for an excerpt: its
    own lines, ``detail: "excerpt"``, the whole chunk's range and the header line."""
    shaped = {
        **data,
        "startLine": cut.result.start_line,
        "endLine": cut.result.end_line,
        "content": cut.result.content,
        "detail": "excerpt",
        "chunk": {"startLine": cut.chunk_start_line, "endLine": cut.chunk_end_line},
    }
    if cut.header:
        shaped["header"] = cut.header
    return shaped
