from __future__ import annotations

import pytest

from engine.search.routing import LONG_QUERY_TOKENS, ROUTES, query_kind, route
from signals import registry


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
    # Long pasted text leans on lexical matching; the symbol signal is left out.
    long = ROUTES["long"].weights
    assert long["lexical"] > long["vector"] > long["symbol"] == 0.0
