"""Pack results into a token budget, degrading gracefully instead of cutting code mid-line.

Results are taken best first: full code while it fits, then only the signature line(s), then
only the location. Tokens are counted by the ``TokenCounter`` the caller hands in: the
composition root passes an LLM tokenizer's count (engine/search/tokens.py), or
``estimated_counter`` when it is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from engine.types import Result

TokenCounter = Callable[[str], int]

LOCATION_TOKENS = 24  # what a result without content costs in the JSON (path, lines, name)
SIGNATURE_LINES = 3


def estimated_counter() -> tuple[TokenCounter, str]:
    """(counter, name): a conservative estimate of one token per three characters."""
    return (lambda text: (len(text) + 2) // 3), "estimate (3 characters per token)"


@dataclass(frozen=True, slots=True)
class Packed:
    results: list[Result]
    details: list[str]  # per result: "full", "signature" or "location"
    used_tokens: int
    dropped: int  # results left out entirely for lack of budget


def signature_of(result: Result) -> str:
    lines = result.content.split("\n")
    return "\n".join(lines[:SIGNATURE_LINES])


def pack(results: Sequence[Result], budget_tokens: int, count: TokenCounter) -> Packed:
    """Spend ``budget_tokens`` on results in rank order; never split a line."""
    used = 0
    packed: list[Result] = []
    details: list[str] = []
    for r in results:
        full = count(r.content) + LOCATION_TOKENS
        if used + full <= budget_tokens:
            packed.append(r)
            details.append("full")
            used += full
            continue
        signature = signature_of(r)
        cost = count(signature) + LOCATION_TOKENS
        if signature and used + cost <= budget_tokens:
            lines = signature.count("\n") + 1
            end = min(r.end_line, r.start_line + lines - 1)
            packed.append(replace(r, content=signature, end_line=end))
            details.append("signature")
            used += cost
            continue
        if used + LOCATION_TOKENS <= budget_tokens:
            packed.append(replace(r, content=""))
            details.append("location")
            used += LOCATION_TOKENS
            continue
        break
    return Packed(packed, details, used, len(results) - len(packed))
