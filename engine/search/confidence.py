"""The ``lowConfidence`` flag: nothing in the answer matched the query well.

Rank fusion says which results are best, not whether any is good. Two measurements carry
that, one per kind of query:

- **A name** (an identifier query): the answer is flagged when no result's code contains
  the name's words at all. A name that exists is written somewhere in its definition or a
  use; one that does not exist gets only near misses (other names sharing parts).
- **Words** (a question, a pasted report): flagged when the vector signal ran and its best
  cosine similarity is below ``VECTOR_THRESHOLD`` (``FAST_VECTOR_THRESHOLD`` when it
  answered from its fast tier: static vectors' cosines run higher, so unrelated code scores
  more). Without the vector signal the engine cannot tell and never flags.

Calibrated on the semble-dev queries and the 144 checked unanswerable queries beside them
(eval/datasets/semble-dev-negatives.jsonl), with cross-validation by repository; the
numbers are in eval/RESULTS.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.terms import identifiers
from engine.types import VECTOR, Result, SignalRun

VECTOR_THRESHOLD = 0.44
# The same rule for the fast tier, calibrated the same way on its own runs (RESULTS.md,
# session 7): at 0.44 it flagged 52% of unanswerable queries, at 0.54 73% (cross-validated
# 73.2% at 4.7% of answerable ones, thresholds 0.53-0.55).
FAST_VECTOR_THRESHOLD = 0.54
MIN_WORD_CHARS = 3


def _name_words(text: str) -> list[str]:
    return [w.lower() for w in identifiers(text) if len(w) >= MIN_WORD_CHARS]


def low_confidence(
    runs: Sequence[SignalRun],
    results: Sequence[Result],
    *,
    identifier_query: bool,
    text: str,
    vector_threshold: float | None = None,
) -> bool:
    """``vector_threshold``: None for the calibrated one of the tier that answered."""
    if not results:
        return False
    if identifier_query:
        words = _name_words(text)
        if words:
            return not any(all(w in r.content.lower() for w in words) for r in results)
    vector = next((run for run in runs if run.signal == VECTOR and not run.error), None)
    if vector is None:
        return False
    if vector_threshold is None:
        vector_threshold = FAST_VECTOR_THRESHOLD if vector.tier == "fast" else VECTOR_THRESHOLD
    return (vector.hits[0].score if vector.hits else 0.0) < vector_threshold
