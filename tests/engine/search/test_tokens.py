from __future__ import annotations

from engine.search.tokens import TOKENIZER_NAME, agent_counter


def test_the_llm_tokenizer_is_installed_and_counts_code_as_a_chat_model_does() -> None:
    count, name = agent_counter()
    assert name == TOKENIZER_NAME  # not the estimate: the vocabulary ships with the project
    # cl100k_base splits this into exactly these pieces: def| greet|(name|):\n|   | return| name
    assert count("def greet(name):\n    return name") == 7


def test_special_token_text_in_code_is_counted_not_refused() -> None:
    count, _ = agent_counter()
    assert count("x = '<|endoftext|>'") > 3
