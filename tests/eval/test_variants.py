from __future__ import annotations

import pytest

from engine.errors import UsageError
from engine.search.ranking.options import DEFAULT_RANKING
from engine.search.routing import ROUTES
from eval.variants import parse_variant


def test_ranking_fields_are_read_by_their_type() -> None:
    config = parse_variant("file_weight=0.3, definition_heads=off,max_per_file=1,file_scope=all")
    assert config.name == "file_weight=0.3, definition_heads=off,max_per_file=1,file_scope=all"
    assert config.ranking.file_weight == 0.3
    assert config.ranking.definition_heads is False
    assert config.ranking.max_per_file == 1
    assert config.ranking.file_scope == "all"
    assert config.ranking.path_weight == DEFAULT_RANKING.path_weight  # the rest as shipped
    assert config.routes is None  # no route changed: the engine's own


def test_route_settings_change_one_route() -> None:
    config = parse_variant("question.k=40,question.vector=4,identifier.symbol=0.5")
    assert config.routes is not None
    assert config.routes["question"].k == 40
    assert config.routes["question"].weights["vector"] == 4.0
    assert config.routes["question"].weights["lexical"] == ROUTES["question"].weights["lexical"]
    assert config.routes["identifier"].weights["symbol"] == 0.5
    assert config.routes["long"] == ROUTES["long"]
    assert config.ranking == DEFAULT_RANKING


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "needs settings"),
        ("file_weight", "is not NAME=VALUE"),
        ("file_wieght=0.3", "no ranking option 'file_wieght'"),
        ("dedupe=maybe", "true or false"),
        ("file_weight=heavy", "is a number"),
        ("file_weight=-1", "cannot be negative"),
        ("file_weight=inf", "is a number"),
        ("candidates=nan", "is a number"),
        ("question.vector=-2", "cannot be negative"),
        ("candidates=2.5", "whole number"),
        ("file_scope=some", "file_scope is one of"),
        ("answer.k=3", "no route 'answer'"),
        ("question.rerank=1", "not 'rerank'"),
        ("question.k=4.5", "whole number"),
    ],
)
def test_a_setting_it_cannot_read_is_named(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_variant(spec)
