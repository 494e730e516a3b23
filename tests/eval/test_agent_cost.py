"""Tokens to the first hit and recall within a budget, on a tiny fixture with a fake searcher
and a word-counting tokenizer (no index, no network)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from cli.output import result_json
from engine.types import Result, SearchResponse
from eval.agent_cost import (
    QueryCost,
    first_hit_tokens,
    measure,
    measure_query,
    result_object,
    result_tokens,
    summarize,
    table,
)
from eval.benchmark import BenchQuery, BenchRepo
from eval.dataset import Target
from eval.grep_baseline import GrepCorpus

REPO = BenchRepo("tiny", "python", "https://github.com/acme/tiny.git", "0" * 40, "pkg")


def words(text: str) -> int:
    return len(text.split())


def result(path: str, start: int, end: int, content: str) -> Result:
    return Result("tiny", path, start, end, "", content, 0.5, ("lexical",))


class FakeSearcher:
    """Answers every query with the same ranked results, cut at ``limit``."""

    def __init__(self, results: list[Result]) -> None:
        self.results = results

    def search(self, text: str, *, limit: int = 10) -> SearchResponse:
        return SearchResponse(text, self.results[:limit], [])


RESULTS = [
    result("noise.py", 1, 3, "def noise():\n    pass\n    return None"),
    result("greeting.py", 4, 5, "def greet(name):\n    return name"),
    result("storage.py", 1, 2, "def save(rows):\n    write(rows)"),
]


def test_a_result_costs_what_the_agent_tool_serializes() -> None:
    duplicated = Result(
        "tiny", "a.py", 1, 2, "f", "def f(): pass", 0.9, ("lexical", "vector"), duplicates=("b.py",)
    )
    for r in (RESULTS[0], duplicated):
        assert result_object(r) == result_json(r)
    assert result_tokens([duplicated], words) == [
        words(orjson.dumps(result_json(duplicated)).decode())
    ]


def test_first_hit_sums_through_the_covering_item_and_a_miss_pays_the_penalty() -> None:
    assert first_hit_tokens([10, 20, 30], [False, True, True], penalty=1000) == (30, 2)
    assert first_hit_tokens([10, 20], [False, False], penalty=1000) == (1030, None)
    assert first_hit_tokens([], [], penalty=5) == (5, None)


def grep_folder(root: Path) -> GrepCorpus:
    root.mkdir()
    (root / "greeting.py").write_text("def greet(name):\n    return name\n")
    (root / "noise.py").write_text("greet greet\ngreet\n" + "filler " * 50 + "\n")
    return GrepCorpus.scan(root, words)


def test_one_query_is_measured_on_both_sides_and_within_budgets(tmp_path: Path) -> None:
    corpus = grep_folder(tmp_path / "pkg")
    # Targets are repository-root paths; the index reports paths under benchmark_root "pkg".
    q = BenchQuery(
        "tiny-1", "tiny", "greet someone", "semantic", (Target("pkg/greeting.py", 4, 5),)
    )
    cost = measure_query(
        q, REPO, FakeSearcher(RESULTS), corpus, words, budgets=(50, 1000), penalty=500
    )
    per_result = result_tokens(RESULTS, words)
    assert (cost.ours_tokens, cost.ours_rank) == (per_result[0] + per_result[1], 2)
    assert cost.content_tokens == words(RESULTS[0].content) + words(RESULTS[1].content)
    assert cost.answer_tokens == sum(per_result)
    # grep ranks noise.py first (more matching lines), then greeting.py.
    assert cost.grep_rank == 2
    assert cost.grep_tokens == corpus.tokens("noise.py") + corpus.tokens("greeting.py")
    assert cost.grep_words == ("greet", "someone")
    # 50 tokens (24 per location) hold the first result in full and leave no room
    # for the second, not even its location: not recalled. 1000 tokens hold all three.
    assert cost.recall["top10@50"] == 0.0 and cost.hit["top10@50"] == 0.0
    assert cost.recall["top10@1000"] == 1.0 and cost.recall["top50@1000"] == 1.0


def test_a_miss_on_both_sides_costs_everything_plus_the_penalty(tmp_path: Path) -> None:
    corpus = grep_folder(tmp_path / "pkg")
    q = BenchQuery("tiny-2", "tiny", "greet", "symbol", (Target("pkg/absent.py"),))
    cost = measure_query(
        q, REPO, FakeSearcher(RESULTS), corpus, words, budgets=(1000,), penalty=500
    )
    assert (cost.ours_rank, cost.ours_tokens) == (None, cost.answer_tokens + 500)
    everything = corpus.tokens("noise.py") + corpus.tokens("greeting.py")
    assert (cost.grep_rank, cost.grep_tokens) == (None, everything + 500)
    assert cost.recall["top10@1000"] == 0.0


def cost(id: str, repo: str, category: str, ours: int, grep: int, recall: float) -> QueryCost:
    return QueryCost(
        id,
        repo,
        category,
        ours,
        1,
        ours,
        grep,
        1,
        ("w",),
        recall={"top10@2000": recall},
        hit={"top10@2000": 1.0},
    )


def test_the_summary_is_a_mean_of_repository_means_overall_and_per_category() -> None:
    costs = [
        cost("a-1", "a", "semantic", 100, 1000, 1.0),
        cost("a-2", "a", "semantic", 300, 3000, 0.0),
        cost("a-3", "a", "symbol", 200, 2000, 1.0),
        cost("b-1", "b", "semantic", 1000, 500, 0.5),
    ]
    queries = [BenchQuery(c.id, c.repo, "", c.category, (Target("x"),)) for c in costs]
    summary = summarize(costs, queries)
    ours = summary["firstHit"]["ours"]["mean"]
    assert ours["all"] == pytest.approx((200 + 1000) / 2)
    assert ours["semantic"] == pytest.approx((200 + 1000) / 2)
    assert ours["symbol"] == pytest.approx(200)
    assert summary["recall"]["top10@2000"]["all"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert summary["firstHit"]["oursCheaper"] == 3
    assert "tokens to the first hit" in table(summary)


def test_measure_opens_each_repository_once_and_closes_it(tmp_path: Path) -> None:
    corpus_root = tmp_path / "pkg"
    grep_folder(corpus_root)
    closed: list[str] = []
    queries = [
        BenchQuery("tiny-1", "tiny", "greet", "semantic", (Target("pkg/greeting.py"),)),
        BenchQuery("tiny-neg", "tiny", "nothing", "negative", ()),  # unanswerable: skipped
    ]
    costs = measure(
        [REPO],
        queries,
        lambda repo: (FakeSearcher(RESULTS), corpus_root, lambda: closed.append(repo.name)),
        words,
        budgets=(1000,),
    )
    assert [c.id for c in costs] == ["tiny-1"] and closed == ["tiny"]


def test_the_agent_view_is_what_semantic_search_sends() -> None:
    from cli.serve.tools.search import _focused
    from eval.agent_cost import agent_view

    body = "\n".join(["def long():"] + [f"    step_{n}()" for n in range(40)] + ["    retry()"])
    long = Result("tiny", "a.py", 3, 44, "long", body, 0.7, ("vector",))
    for result in (RESULTS[0], long):
        sent, shown = agent_view(result, "where is the retry")
        assert sent == _focused(result_json(result), result, "where is the retry")
        assert (sent["startLine"], sent["endLine"]) == (shown.start_line, shown.end_line)
    assert sent["detail"] == "excerpt" and "retry()" in sent["content"]
