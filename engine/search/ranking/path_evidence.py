"""Path evidence: query words that name a file or folder lift the chunks in it.

``bash completion generation`` is answered by ``bash_completions.go``, ``how generators are
discovered`` by ``generators.rb``: a query's content words are compared, by stem, with the
identifier parts of the file's stem (full weight) and of its folders (``DIR_WEIGHT``). The
multiplier grows with the share of the query's words the path names.
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
def path_share(path: str, query_stems: tuple[str, ...]) -> float:
    """The weighted share, in [0, 1], of ``query_stems`` that ``path`` names."""
    if not query_stems:
        return 0.0
    own, folders = _path_stems(path)
    matched = 0.0
    for q in query_stems:
        if any(stems_match(q, s) for s in own):
            matched += 1.0
        elif any(stems_match(q, s) for s in folders):
            matched += DIR_WEIGHT
    return matched / len(query_stems)
