"""The order the vector signal embeds chunks in: what a search needs most, first.

MiniLM embeds ~40 chunks/s here, so a first full pass over a large repository takes minutes,
and an interrupted pass resumes from the embedding cache. Embedding definitions of
implementation code first means the vectors that answer most queries are cached first;
module-level code (imports, constants) and tests follow, and generated and vendored code,
which the ranking stage puts last anyway, is embedded last.
"""

from __future__ import annotations

from engine.search.ranking.priors import path_kind
from engine.types import Chunk

_PATH_RANK = {"implementation": 0, "test": 2, "generated": 4}
_MODULE_LEVEL = frozenset({"module", "window"})


def embed_priority(chunk: Chunk) -> tuple[int, int]:
    """Sort key: implementation definitions (0), implementation module-level code (1), test
    definitions (2), test module-level code (3), generated or vendored code (4, 5); then the
    chunk id, which keeps a file's chunks together."""
    return _PATH_RANK[path_kind(chunk.path)] + (chunk.kind in _MODULE_LEVEL), chunk.id
