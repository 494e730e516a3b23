"""File evidence: a file with several strong chunks lifts its best ones.

Questions about how something works are usually answered by a module, not one line range; a
file that the signals hit several times is likelier the answer than one hit once. Each
chunk gains ``weight`` times the scores of the file's next best chunks (other than itself),
each halved in turn, so three hits in one file weigh more than one, and thirty do not
weigh more than four.
"""

from __future__ import annotations

from collections.abc import Sequence

DECAY = 0.5
OTHERS = 3


def file_bonuses(paths: Sequence[str], scores: Sequence[float], weight: float) -> list[float]:
    """Per chunk, the score it gains from the other chunks of its file."""
    by_file: dict[str, list[float]] = {}
    for path, score in zip(paths, scores, strict=True):
        by_file.setdefault(path, []).append(score)
    for values in by_file.values():
        values.sort(reverse=True)
    bonuses: list[float] = []
    for path, score in zip(paths, scores, strict=True):
        others = list(by_file[path])
        others.remove(score)
        bonuses.append(weight * sum(s * DECAY**i for i, s in enumerate(others[:OTHERS])))
    return bonuses
