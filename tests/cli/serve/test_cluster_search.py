"""semanticSearch through a cluster (``engine serve --cluster``): the router's answer, its
coverage included, in the tool's shape; no index is opened in the server."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from cli.serve.tools.common import ToolContext
from cli.serve.tools.schemas import SearchAnswer
from cli.serve.tools.search import semantic_search
from engine.index.home import Home
from engine.types import Coverage, Filters, Result, SearchResponse


def test_semantic_search_answers_through_the_cluster(tmp_path: Path) -> None:
    asked: list[tuple[tuple[str, ...], str, int, Filters]] = []

    def cluster(repos: Sequence[str], text: str, limit: int, filters: Filters) -> SearchResponse:
        asked.append((tuple(repos), text, limit, filters))
        result = Result(
            "a", "greeter.py", 1, 2, "greet", "def greet():\n    pass", 0.9, ("lexical",)
        )
        return SearchResponse(
            text,
            [result],
            [],
            ["partial answer: 1 of 2 repositories answered; not searched: b (its shard failed)"],
            coverage=Coverage(1, 2, ("b",)),
        )

    context = ToolContext(Home(tmp_path), cast(Any, None), cast(Any, None), cluster=cluster)
    answer = semantic_search(context, ["a", "b"], "greet", limit=5, lang="python")
    assert asked == [(("a", "b"), "greet", 6, Filters(languages=("python",)))]
    assert answer["coverage"] == {"answered": 1, "asked": 2, "missing": ["b"]}
    assert "not searched: b" in answer["warning"]
    assert [r["filePath"] for r in answer["results"]] == ["greeter.py"]
    SearchAnswer.model_validate(answer)
