"""Path evidence: query words that name a file or folder lift the chunks in it.

``bash completion generation`` is answered by ``bash_completions.go``, ``how generators are
discovered`` by ``generators.rb``: a query's content words are compared, by stem, with the
identifier parts of the file's stem (full weight) and of its folders (``DIR_WEIGHT``). The
multiplier grows with the share of the query's words the path names.

For a question, a file whose whole name the query names weighs more: "rate-limiting with a
semaphore" is answered by ``semaphore.rs`` rather than ``batch_semaphore.rs``, "citations and
bibliography" by ``Citations.hs``. The question counts ``name_weight`` more words, which a path
names by the share of its file stem's parts the query names, squared (half the name counts a
quarter; a file only its folders name gets none of them).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath

from engine.search.ranking.stems import name_stems, stems_match

DIR_WEIGHT = 0.5


@lru_cache(maxsize=16_384)
def _path_stems(path: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    pure = PurePosixPath(path)
    folders = tuple(s for part in pure.parent.parts for s in name_stems(part))
    return name_stems(pure.stem), folders


# Memoised: a long report has hundreds of stems, and a ranking that adds mentioned
# definitions (mentions.py) re-ranks the same candidates' paths a second time.
@lru_cache(maxsize=4_096)
def path_share(path: str, query_stems: tuple[str, ...], name_weight: float = 0.0) -> float:
    """The weighted share, in [0, 1], of ``query_stems`` that ``path`` names; with
    ``name_weight``, how much of the file's own name they name counts as that many words."""
    if not query_stems:
        return 0.0
    own, folders = _path_stems(path)
    matched = 0.0
    for q in query_stems:
        if any(stems_match(q, s) for s in own):
            matched += 1.0
        elif any(stems_match(q, s) for s in folders):
            matched += DIR_WEIGHT
    if name_weight <= 0 or matched == 0 or not own:
        return matched / len(query_stems)
    named = sum(any(stems_match(q, s) for q in query_stems) for s in own) / len(own)
    return (matched + name_weight * named**2) / (len(query_stems) + name_weight)
