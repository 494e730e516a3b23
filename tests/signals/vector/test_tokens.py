from __future__ import annotations

from signals.vector.tokens import bundled_counter


def test_real_tokenizer_counts() -> None:
    count, name = bundled_counter()
    assert count("def greet(name):\n    return name") > 5
    assert name
