"""A shard's answer as tuples and back: every field of every result and answer survives."""

from __future__ import annotations

from engine.cluster.search_wire import (
    pack_response,
    pack_results,
    unpack_response,
    unpack_results,
)
from engine.types import Adjustment, Contribution, Hit, Result, SearchResponse, SignalRun


def test_results_and_answers_come_back_equal() -> None:
    result = Result(
        "click",
        "src/click/core.py",
        10,
        40,
        "Context.invoke",
        "def invoke(self):\n    ...",
        0.8125,
        ("lexical", "vector"),
        chunk_id=12,
        language="python",
        kind="method",
        contributions=(Contribution("lexical", 1, 7.5, 1.0, 0.0164),),
        prior=0.9,
        prior_reason="test",
        duplicates=("vendor/click/core.py",),
        name="invoke",
        adjustments=(Adjustment("definition", 1.2, "a definition"),),
        freshness="moved",
        qualified_name="click.core.Context.invoke",
        definition_start_line=8,
        definition_end_line=60,
    )
    assert unpack_results(pack_results([result, result])) == [result, result]
    response = SearchResponse(
        "invoke",
        [],
        [SignalRun("lexical", [Hit(12, 7.5)], 1.5, "", "full"), SignalRun("vector", [], 2.0)],
        ["a warning"],
        low_confidence=True,
        query_kind="identifier",
    )
    assert unpack_response(pack_response(response)) == response
