from __future__ import annotations

from engine.search.confidence import FAST_VECTOR_THRESHOLD, VECTOR_THRESHOLD, low_confidence
from engine.types import Hit, Result, SignalRun


def run(signal: str, top: float | None, error: str = "") -> SignalRun:
    hits = [] if top is None else [Hit(1, top)]
    return SignalRun(signal, hits, 1.0, error)


def code(content: str) -> Result:
    return Result("r", "a.py", 1, 2, "", content, 0.5, ("lexical",))


ANSWER = [code("class Greeter:\n    def greet(self, name): ...")]


def test_a_question_is_flagged_when_the_vector_signal_finds_nothing_close() -> None:
    asked = "how are people greeted"
    weak = [run("lexical", 40.0), run("vector", 0.2)]
    assert low_confidence(weak, ANSWER, identifier_query=False, text=asked)
    close = [run("vector", 0.6), run("symbol", 1.0)]
    assert not low_confidence(close, ANSWER, identifier_query=False, text=asked)


def test_a_question_is_never_flagged_without_the_vector_signal() -> None:
    asked = "how are people greeted"
    no_vector = [run("lexical", 1.0), run("symbol", 0.1)]
    assert not low_confidence(no_vector, ANSWER, identifier_query=False, text=asked)
    failed = [run("vector", 0.1, error="boom")]
    assert not low_confidence(failed, ANSWER, identifier_query=False, text=asked)


def test_a_name_is_flagged_when_no_result_contains_it() -> None:
    runs = [run("vector", 0.9)]  # a name's vector similarity says little either way
    assert not low_confidence(runs, ANSWER, identifier_query=True, text="Greeter")
    assert not low_confidence(runs, ANSWER, identifier_query=True, text="Greeter.greet")
    assert low_confidence(runs, ANSWER, identifier_query=True, text="GreeterFactory")


def test_an_empty_answer_is_not_flagged_it_is_empty() -> None:
    assert not low_confidence([run("vector", 0.1)], [], identifier_query=False, text="x y z")


def test_the_fast_tier_has_its_own_threshold_since_static_cosines_run_higher() -> None:
    asked = "how are people greeted"
    between = (VECTOR_THRESHOLD + FAST_VECTOR_THRESHOLD) / 2
    full = [SignalRun("vector", [Hit(1, between)], 1.0, tier="full")]
    fast = [SignalRun("vector", [Hit(1, between)], 1.0, tier="fast")]
    assert not low_confidence(full, ANSWER, identifier_query=False, text=asked)
    assert low_confidence(fast, ANSWER, identifier_query=False, text=asked)
