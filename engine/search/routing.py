"""Query-type routing: which kind of query this is, and the fusion weights for that kind.

An identifier-like query ("APIRouter", "parse_header_links", "Greeter.greet") is answered
by all signals evenly with a small k (top ranks dominate); a question in words leans on the
vector signal; a long pasted report or stack trace leans on lexical matching of the
identifiers and error strings it contains (the vector signal reads only its first 256 word
pieces, and the symbol signal's frame matches did not help on the datasets). The weights
per kind were chosen with ``python -m eval.tune`` on the labeled datasets (see
eval/RESULTS.md), not on single queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from engine.search.ranking.options import MAX_PER_FILE
from engine.terms import analyze_query, identifiers, looks_like_identifier
from engine.types import SignalRun

QueryKind = Literal["identifier", "question", "long"]

LONG_QUERY_TOKENS = 40


def query_kind(text: str) -> QueryKind:
    tokens = identifiers(text)
    if len(tokens) >= LONG_QUERY_TOKENS or text.count("\n") >= 3:
        return "long"
    words = text.split()
    if len(words) <= 3 and any(looks_like_identifier(w.strip("`'\"()")) for w in words):
        return "identifier"
    if len(words) == 1:
        return "identifier"
    if analyze_query(text).identifiers and len(words) <= 4:
        return "identifier"
    return "question"


@dataclass(frozen=True, slots=True)
class Route:
    k: int
    weights: Mapping[str, float]
    # At most this many results of one file, unless the caller sets its own cap.
    max_per_file: int = MAX_PER_FILE


# Tuned on jinja, ky and urfave-cli (eval.tune --kind ...); the self dataset is held out.
# Questions leave the symbol signal out (it was 0.25): its name matches on a question's words
# (`AsyncFd` for "async file I/O") pulled in definitions the ranking stage's definition-first
# feature had not asked for. Measured on semble-dev (0.860 -> 0.864; 2-fold cross-validation
# by repository over 20 shuffles picked 0 in 34 of 40 folds, +0.003 held out) and on the own
# datasets (jinja 0.713 -> 0.723, ky 0.620 -> 0.614, urfave-cli 0.604 -> 0.631, self 0.517).
# Its run is still asked: lowConfidence reads it, and it costs under a millisecond.
ROUTES: Mapping[QueryKind, Route] = {
    "identifier": Route(10, {"lexical": 1.0, "vector": 1.0, "symbol": 1.0}),
    "question": Route(60, {"lexical": 1.0, "vector": 3.0, "symbol": 0.0}),
    # A pasted report or trace: k 20 and up to 5 results per file, measured on swebench-dev
    # (python -m eval.swebench --rankings before,k30,...; eval/RESULTS.md, session 13). With
    # k 10 the top lexical ranks of a report's many incidental words decided; k 20 or 30:
    # file Acc@5 0.782 -> 0.821 on 78 of the 95 issues (k 30 the same; 0.773 -> 0.818 on 88
    # in another pass), but k 30 cost jinja's stack traces 0.016 NDCG@10, k 20 0.003. The
    # file a report is about usually holds the function too, which a cap of 3 cut off:
    # function hit@10 0.368 -> 0.412, file ranks unchanged (they count distinct files), and
    # the own datasets' long queries unchanged by the cap.
    "long": Route(20, {"lexical": 1.0, "vector": 0.5, "symbol": 0.0}, max_per_file=5),
}


# A signal answering from its fast tier (the vector signal's static vectors, while MiniLM's
# are not built or with --vectors fast) is fused at this share of its route's weight. The
# routes were tuned for MiniLM; static vectors at that weight ranked below leaving them out.
# Chosen on semble-dev (x1 0.812, x0.5 0.817, x0.25 0.823, x0 0.815) and checked on the
# project's own datasets, which had no part in it (x1 -> x0.25: jinja 0.607 -> 0.598, ky
# 0.473 -> 0.525, urfave-cli 0.516 -> 0.565, self 0.392 -> 0.442); eval/RESULTS.md.
FAST_TIER_SHARE = 0.25


def tier_weights(weights: Mapping[str, float], runs: Sequence[SignalRun]) -> Mapping[str, float]:
    """``weights`` with each signal that answered from its fast tier scaled down."""
    fast = {run.signal for run in runs if run.tier == "fast"}
    if not fast:
        return weights
    return {name: w * FAST_TIER_SHARE if name in fast else w for name, w in weights.items()}


def route(text: str) -> Route:
    return ROUTES[query_kind(text)]
