"""Compound shards' merge: each shard's merge of its repositories, merged again by the router,
equals local federation's merge of every repository's answer, for any grouping and limit."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from engine.cluster.search_merge import router_merge, shard_merge
from engine.search.federation import merge
from engine.types import Result, SearchResponse, SignalRun

REPOS = ["a", "b", "c", "d", "e"]

# Scores from a small set, so that ties (within and across repositories) are common.
scores = st.sampled_from([0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0])


@st.composite
def responses(draw: st.DrawFn, repo: str) -> SearchResponse:
    count = draw(st.integers(0, 6))
    results = [
        Result(repo, f"{repo}/f{n}.py", n + 1, n + 2, "", "", s, ("lexical",))
        for n, s in enumerate(sorted(draw(st.lists(scores, min_size=count, max_size=count))))
    ][::-1]
    return SearchResponse(
        "q",
        results,
        [SignalRun("lexical", [], 1.0)],
        [f"warning of {repo}"] if draw(st.booleans()) else [],
        low_confidence=draw(st.booleans()),
        query_kind=draw(st.sampled_from(["identifier", "question"])),
    )


@given(
    st.permutations(REPOS).flatmap(
        lambda asked: st.tuples(
            st.just(asked),
            st.tuples(*(responses(r) for r in asked)),
            st.lists(st.integers(0, 2), min_size=len(asked), max_size=len(asked)),
            st.integers(1, 8),
        )
    )
)
def test_merging_groups_equals_federation(
    drawn: tuple[list[str], tuple[SearchResponse, ...], list[int], int],
) -> None:
    asked, answers, group_of, limit = drawn
    by_repo = dict(zip(asked, answers, strict=True))
    groups: dict[int, dict[str, SearchResponse]] = {}
    for repo, group in zip(asked, group_of, strict=True):
        groups.setdefault(group, {})[repo] = by_repo[repo]  # each in asked order
    headers: dict[str, SearchResponse] = {}
    lists = []
    for members in reversed(list(groups.values())):  # shards answer in any order
        results, heads = shard_merge(members, limit, federated=True)
        assert len(results) <= limit
        headers.update(heads)
        lists.append(results)
    assert router_merge(asked, headers, lists, limit, "q") == merge(answers, limit)


@given(responses("a"), st.integers(1, 8))
def test_one_repository_is_its_own_answer_unscaled(response: SearchResponse, limit: int) -> None:
    results, headers = shard_merge({"a": response}, limit, federated=False)
    expected = replace(response, results=response.results[:limit])  # a searcher's limit
    assert router_merge(["a"], headers, [results], limit, "q") == expected


def test_no_answer_is_an_empty_one() -> None:
    assert router_merge(["a", "b"], {}, [], 10, "q") == SearchResponse("q", [], [])
