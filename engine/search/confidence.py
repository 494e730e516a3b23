"""The ``lowConfidence`` flag: nothing in the answer matched the query well.

Rank fusion says which results are best, not whether any is good. The raw scores of two
signals do carry that: the vector signal's cosine similarity and the symbol signal's match
score (an exact name scores 9). An answer is flagged when the vector signal ran and neither
signal's best hit reaches its threshold. Without the vector signal the engine cannot tell
and never flags.

Calibrated on the 27 negative and 167 answerable queries of the four labeled datasets
(eval/RESULTS.md): these thresholds flag 14 of 27 negatives and 1 of 167 answerable queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.types import SYMBOL, VECTOR, SignalRun

THRESHOLDS: Mapping[str, float] = {VECTOR: 0.38, SYMBOL: 3.0}


def low_confidence(runs: Sequence[SignalRun], thresholds: Mapping[str, float] = THRESHOLDS) -> bool:
    best = {run.signal: (run.hits[0].score if run.hits else 0.0) for run in runs if not run.error}
    if VECTOR not in best:
        return False
    return all(best[name] < limit for name, limit in thresholds.items() if name in best)
