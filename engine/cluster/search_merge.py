"""Merging compound shards' answers into exactly the answer local federation gives.

A compound shard (grouping.py) searches its repositories one after another and merges them
itself with the local federation's ``merge`` (engine/search/federation.py: a low-confidence
repository's scores scaled, then a stable top ``limit`` by score), so it sends ``limit``
results, not ``limit`` per repository, and every repository's answer without its results
(warnings, runs, confidence). The router then merges the shards' lists by (score, the asked
position of the result's repository). That equals ``federation.merge`` over every
repository's own answer in the asked order, result for result and field for field:

- any result of the federated top ``limit`` is in its shard's top ``limit`` (fewer than
  ``limit`` results of its own shard rank above it);
- ties: federation's stable sort over the repositories' lists in asked order puts equal
  scores in repository order, then in each repository's own order, which is the order the
  key and a stable sort give (a shard keeps each repository's own order, as merge does).

A query of one repository is not federated: its answer is the repository's own, unscaled.
Pure: no Ray.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from engine.search.federation import merge
from engine.types import Result, SearchResponse


def shard_merge(
    responses: Mapping[str, SearchResponse], limit: int, *, federated: bool
) -> tuple[list[Result], dict[str, SearchResponse]]:
    """A shard's answer: its repositories' results merged (in the mapping's order, which is
    the asked order) and each repository's answer without results. Not ``federated`` (the
    query asked one repository): that repository's results as they are."""
    headers = {repo: replace(response, results=[]) for repo, response in responses.items()}
    if not responses:
        return [], headers
    if not federated and len(responses) == 1:
        (only,) = responses.values()
        return list(only.results), headers
    return merge(list(responses.values()), limit).results, headers


def router_merge(
    asked: Sequence[str],
    headers: Mapping[str, SearchResponse],
    results: Iterable[Sequence[Result]],
    limit: int,
    query: str,
) -> SearchResponse:
    """The federated answer from the shards' merged lists (``results``, one per shard, in any
    order) and the answering repositories' ``headers``; one repository asked: its own."""
    answered = [headers[repo] for repo in asked if repo in headers]
    position = {repo: n for n, repo in enumerate(asked)}
    pooled = sorted(
        (r for shard in results for r in shard),
        key=lambda r: (-r.score, position.get(r.repo, len(asked))),
    )[:limit]
    if not answered:
        return SearchResponse(query, [], [])
    if len(asked) == 1:
        return replace(answered[0], results=pooled)
    return SearchResponse(
        query=answered[0].query,
        results=pooled,
        runs=[run for response in answered for run in response.runs],
        warnings=[w for response in answered for w in response.warnings],
        low_confidence=all(response.low_confidence for response in answered),
        query_kind=answered[0].query_kind,
    )
