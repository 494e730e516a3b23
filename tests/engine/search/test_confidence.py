from __future__ import annotations

from engine.search.confidence import low_confidence
from engine.types import Hit, SignalRun


def run(signal: str, top: float | None, error: str = "") -> SignalRun:
    hits = [] if top is None else [Hit(1, top)]
    return SignalRun(signal, hits, 1.0, error)


def test_flags_only_when_every_calibrated_signal_is_weak() -> None:
    assert low_confidence([run("lexical", 40.0), run("vector", 0.2), run("symbol", 1.0)])
    assert not low_confidence([run("vector", 0.6), run("symbol", 1.0)])
    assert not low_confidence([run("vector", 0.2), run("symbol", 9.0)])
    assert low_confidence([run("vector", 0.2), run("symbol", None)])


def test_never_flags_without_the_vector_signal() -> None:
    assert not low_confidence([run("lexical", 1.0), run("symbol", 0.1)])
    assert not low_confidence([run("vector", 0.1, error="boom"), run("symbol", 0.1)])
