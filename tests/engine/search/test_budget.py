from __future__ import annotations

from engine.search.budget import LOCATION_TOKENS, estimated_counter, pack
from engine.types import Result


def result(n: int, lines: int) -> Result:
    content = "\n".join(f"line {i} of result {n}" for i in range(lines))
    return Result("r", f"f{n}.py", 1, lines, f"s{n}", content, 1.0, ("lexical",))


def words(text: str) -> int:
    return len(text.split())


def test_full_then_signature_then_location_then_dropped() -> None:
    rows = [result(1, 10), result(2, 10), result(3, 10), result(4, 10)]
    full = 50 + LOCATION_TOKENS  # 10 lines of 5 words
    signature = 15 + LOCATION_TOKENS
    budget = full + signature + LOCATION_TOKENS
    packed = pack(rows, budget, words)
    assert packed.details == ["full", "signature", "location"]
    assert packed.results[0].content == rows[0].content
    assert packed.results[1].content == "\n".join(rows[1].content.split("\n")[:3])
    assert (packed.results[1].start_line, packed.results[1].end_line) == (1, 3)
    assert packed.results[2].content == ""
    assert packed.used_tokens == budget
    assert packed.dropped == 1


def test_never_exceeds_budget() -> None:
    rows = [result(i, 30) for i in range(20)]
    for budget in (0, 10, 100, 1000, 5000):
        packed = pack(rows, budget, words)
        assert packed.used_tokens <= budget
        assert all(r.content in rows[i].content for i, r in enumerate(packed.results))


def test_the_estimate_rounds_up_to_a_token_per_three_characters() -> None:
    count, name = estimated_counter()
    assert (count(""), count("a"), count("abcd")) == (0, 1, 2)
    assert name.startswith("estimate")
