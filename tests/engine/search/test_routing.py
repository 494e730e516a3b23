from __future__ import annotations

from dataclasses import replace

import pytest

from engine.search.ranking.options import DEFAULT_RANKING
from engine.search.routing import (
    FAST_TIER_SHARE,
    LONG_QUERY_TOKENS,
    ROUTES,
    query_kind,
    route,
    tier_weights,
)
from engine.search.searcher import Searcher
from engine.types import Hit, Query, SignalRun
from signals import registry
from tests.fakes import FakeChunkSource, make_chunk


@pytest.mark.parametrize(
    "text",
    [
        "APIRouter",  # camelCase
        "parse_header_links",  # snake_case
        "Greeter.greet",  # a dotted path
        "`Greeter.greet`",  # quoted as in a chat message
        "tokenize",  # any single word may be a name
        "where is parse_header_links called",  # a short phrase around an identifier
    ],
)
def test_names_are_routed_as_identifiers(text: str) -> None:
    assert query_kind(text) == "identifier"


@pytest.mark.parametrize(
    "text",
    [
        "how does caching work",
        "open the file",
        "fix the greet method",  # plain words, even one that is also a name
        "where are search results from several signals fused into one ranking",
    ],
)
def test_questions_in_words_are_routed_as_questions(text: str) -> None:
    assert query_kind(text) == "question"


def test_a_query_is_long_from_the_token_threshold_on() -> None:
    words = [f"alpha{i}" for i in range(LONG_QUERY_TOKENS)]
    assert query_kind(" ".join(words[:-1])) == "question"
    assert query_kind(" ".join(words)) == "long"


def test_a_pasted_block_of_four_lines_is_long_however_short() -> None:
    assert query_kind("Traceback:\n  File a.py\n  line 3") == "question"
    assert query_kind("Traceback:\n  File a.py\n  line 3\nKeyError") == "long"


def test_route_gives_the_kinds_table_entry() -> None:
    assert route("APIRouter") is ROUTES["identifier"]
    assert route("how does caching work") is ROUTES["question"]
    assert route("a\nb\nc\nd") is ROUTES["long"]


def test_every_route_weighs_every_registered_signal_by_name() -> None:
    for kind, r in ROUTES.items():
        assert set(r.weights) == set(registry.plugins()), kind
        assert all(w >= 0 for w in r.weights.values()), kind
        assert r.k > 0, kind


def test_routes_lean_the_way_the_tuning_chose() -> None:
    # Names: every signal evenly, with a small k so that top ranks dominate.
    identifier = ROUTES["identifier"]
    assert len(set(identifier.weights.values())) == 1
    assert identifier.k < ROUTES["question"].k
    # Questions in words lean on the vector signal.
    question = ROUTES["question"].weights
    assert question["vector"] == max(question.values()) > question["lexical"]
    assert question["symbol"] == 0.0  # its name matches on a question's words cost more
    # Long pasted text leans on lexical matching; the symbol signal is left out.
    long = ROUTES["long"].weights
    assert long["lexical"] > long["vector"] > long["symbol"] == 0.0


def test_a_signal_answering_from_its_fast_tier_is_fused_at_a_share_of_its_weight() -> None:
    weights = ROUTES["question"].weights
    runs = [SignalRun("lexical", [], 1.0), SignalRun("vector", [], 1.0, tier="fast")]
    scaled = tier_weights(weights, runs)
    assert scaled["vector"] == weights["vector"] * FAST_TIER_SHARE
    assert scaled["lexical"] == weights["lexical"] and scaled["symbol"] == weights["symbol"]
    full = [SignalRun("vector", [], 1.0, tier="full")]
    assert tier_weights(weights, full) == weights


def test_the_searcher_weighs_a_fast_tier_run_down_in_its_routes() -> None:
    store = FakeChunkSource([make_chunk(n, f"def f{n}(): pass") for n in (1, 2)])
    runs = [
        SignalRun("lexical", [Hit(1, 2.0), Hit(2, 1.0)], 1.0),
        SignalRun("vector", [Hit(2, 0.9), Hit(1, 0.5)], 1.0, tier="full"),
    ]
    searcher = Searcher("toy", store, {})
    question = Query("how are functions declared here")
    first = searcher.rank_runs(question, runs, 2, DEFAULT_RANKING)[0]
    assert first.chunk_id == 2  # MiniLM's vector weight (3.0) outweighs lexical's
    fast = [runs[0], replace(runs[1], tier="fast")]
    assert searcher.rank_runs(question, fast, 2, DEFAULT_RANKING)[0].chunk_id == 1


def test_a_signal_its_route_leaves_out_still_ranks_when_asked_alone() -> None:
    store = FakeChunkSource(
        [
            make_chunk(n, f"pkg/m{n}.py", f"def f{n}():\n    return {n}", name=f"f{n}")
            for n in (1, 2, 3)
        ]
    )
    assert ROUTES["question"].weights["symbol"] == 0.0
    runs = [SignalRun("symbol", [Hit(3, 1.0), Hit(1, 0.5), Hit(2, 0.2)], 1.0)]
    searcher = Searcher("toy", store, {})
    ranked = searcher.rank_runs(Query("how are functions declared here"), runs, 3, DEFAULT_RANKING)
    assert [r.chunk_id for r in ranked] == [3, 1, 2]
    assert ranked[0].score > 0
