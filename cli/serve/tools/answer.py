"""Answers that fit what an agent can take: a token budget over the whole answer, and pages.

The budget counts the tokens of the answer as it is sent (its serialized JSON) with an LLM
tokenizer (engine/search/tokens.py). Items are taken best first: whole while they fit, then
with ``content`` cut to its first lines (``detail: "signature"``; ``startLine``/``endLine``
still give the whole range, so read it with readRange before editing), then as a bare
location (``detail: "location"``, no ``content``). What does not fit is left for the next
page: ``nextCursor`` continues exactly where this answer stopped.

A cursor is opaque to the agent: the offset and a digest of the tool and its other
arguments, so that a cursor handed to a different question is refused rather than
answered with the wrong page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from engine.errors import UsageError
from engine.search.budget import SIGNATURE_LINES
from engine.search.tokens import agent_counter

# Claude Code refuses tool output over 25k tokens; other clients cap lower. The default
# leaves room for the agent's own turn.
DEFAULT_BUDGET = 8_000
MIN_BUDGET = 200
MAX_BUDGET = 24_000
DIGEST_CHARS = 12
TOKENS_DIGITS = 1  # at most what the number in "tokens" (< 25k) adds to a count made with 0 there


def digest(tool: str, arguments: Mapping[str, Any]) -> str:
    """What a cursor must match: the tool and every argument but the cursor itself."""
    same = {k: v for k, v in sorted(arguments.items()) if k not in ("cursor",)}
    # repr, not JSON: a query may hold lone surrogates (undecodable bytes), which JSON refuses.
    text = repr([tool, same]).encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()[:DIGEST_CHARS]


def encode_cursor(tool: str, arguments: Mapping[str, Any], offset: int) -> str:
    return f"{offset}-{digest(tool, arguments)}"


def decode_cursor(tool: str, arguments: Mapping[str, Any], cursor: str | None) -> int:
    """The offset a cursor continues from (0 without one); a foreign cursor is an error."""
    if not cursor:
        return 0
    number, _, check = cursor.partition("-")
    if not number.isdigit() or len(check) != DIGEST_CHARS:
        raise UsageError("cursor is not one this server gave — leave it out to start")
    if check != digest(tool, arguments):
        raise UsageError(
            "cursor belongs to another question — repeat the exact arguments of the answer "
            "that gave it, or leave it out to start again"
        )
    return int(number)


def checked_budget(budget: int | None) -> int:
    if budget is None:
        return DEFAULT_BUDGET
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise UsageError(f"budget must be between {MIN_BUDGET} and {MAX_BUDGET} tokens")
    return budget


def _signature(item: dict[str, Any]) -> dict[str, Any] | None:
    content = item.get("content")
    if not isinstance(content, str) or content.count("\n") < SIGNATURE_LINES:
        return None
    return {**item, "content": "\n".join(content.split("\n")[:SIGNATURE_LINES])}


def _location(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "content"}


def fit(
    envelope: dict[str, Any],
    key: str,
    items: Sequence[dict[str, Any]],
    budget: int,
    *,
    more: bool,
    next_cursor: Callable[[int], str],
    count: Callable[[str], int] | None = None,
) -> dict[str, Any]:
    """``envelope`` with ``key`` set to as many of ``items`` as fit in ``budget`` tokens.

    ``more`` says whether items exist beyond ``items`` (a later page); ``next_cursor(n)``
    makes the cursor for the answer that skips the first ``n`` of ``items``. The answer
    reports ``total`` (items in it), ``tokens`` (its own size), ``budget``, and ``nextCursor``
    when anything is left.
    """
    counter = count or agent_counter()[0]
    whole = {**envelope, key: list(items), "total": len(items), "budget": budget, "tokens": 0}
    if more:
        whole["nextCursor"] = next_cursor(len(items))
    tokens = counter(orjson.dumps(whole).decode())
    if tokens + TOKENS_DIGITS <= budget:  # the usual case: everything fits, counted once
        whole["tokens"] = tokens + TOKENS_DIGITS
        return whole
    base = {
        **envelope,
        key: [],
        "total": 0,
        "tokens": 0,
        "budget": budget,
        "nextCursor": next_cursor(len(items)),
    }
    used = counter(orjson.dumps(base).decode())
    taken: list[dict[str, Any]] = []
    for item in items:
        for form, detail in (
            (item, "full"),
            (_signature(item), "signature"),
            (_location(item), "location"),
        ):
            if form is None:
                continue
            shaped = form if detail == "full" else {**form, "detail": detail}
            cost = counter(orjson.dumps(shaped).decode()) + 1  # the comma between items
            if used + cost <= budget:
                taken.append(shaped)
                used += cost
                break
        else:
            break  # not even its location fits: this and the rest go to the next page
    data = {**envelope, key: taken, "total": len(taken)}
    if len(taken) < len(items) or more:
        data["nextCursor"] = next_cursor(len(taken))
    data["budget"] = budget
    data["tokens"] = 0
    data["tokens"] = counter(orjson.dumps(data).decode())
    return data
