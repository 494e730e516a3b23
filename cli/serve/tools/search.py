"""semanticSearch and assembleContext: code that answers a question."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import Annotated, Any

import orjson
from pydantic import Field

from cli.output import response_json
from cli.serve.tools.answer import (
    MAX_BUDGET,
    MIN_BUDGET,
    checked_budget,
    decode_cursor,
    encode_cursor,
    fit,
)
from cli.serve.tools.common import (
    FRESHNESS,
    Budget,
    Cursor,
    Kind,
    Lang,
    Limit,
    PathFilter,
    ToolContext,
    kinds,
    languages,
    repo_names,
    repo_slug,
    strings,
)
from engine.errors import RepoNotFound, UsageError
from engine.search.excerpt import DEFAULT_EXCERPT_LINES, excerpt, excerpt_json
from engine.search.federation import merge
from engine.search.tokens import agent_counter
from engine.types import Filters, Result, SearchResponse

MAX_DEPTH = 200  # results a query can page through
ALL_REPOS = "*"

SEMANTIC_SEARCH = (
    """\
Search indexed code and get back the code that answers a question: file path, exact line \
range, enclosing symbol and the source text, best match first.

Prefer this over grep/find when you do not know the exact names to look for: \
natural-language or conceptual questions ("where are failed requests retried?", "how is \
the config file parsed?"), behaviour described in words, an error message or log line, a \
half-remembered identifier, or when you want the few most relevant places ranked instead of \
every textual match. It fuses several signals (BM25 over identifiers and code, semantic \
embeddings, symbol definitions), so exact identifiers work too. Use grep when you need every \
literal occurrence of a known string. repo may be one repository, a list, or "*" for every \
indexed one.

Returns {"query", "results": [...], "total", "tokens", "budget", "nextCursor"?, "warning"?, \
"lowConfidence"?}. Each result has: repo; filePath (relative to the repository root, \
'/'-separated); startLine and endLine (1-based, inclusive line numbers in that file); \
symbolName (the enclosing definition, e.g. "Parser.parse", or "" for module-level code); \
content (exactly those lines); score (0 to 1, higher is more relevant); sources (which \
signals ranked it: "lexical", "vector", "symbol"); alsoIn (only when the same code appears \
verbatim in other files). A long chunk comes as the lines of it that match best: "detail": \
"excerpt", startLine/endLine/content are those lines, "chunk" the whole chunk's range and \
"header" its first line (wholeChunks=true gives whole chunks). "detail": "signature" means \
content holds only the first lines of the range and "location" that it was left out, to \
stay within the token budget: read the range with readRange before editing it. "warning" \
says when a signal is off or degraded, or files changed since they were indexed, and how to \
fix it. "lowConfidence": true means nothing matched well: treat the results as leads and \
rephrase or grep. Failures come back as {"error": "..."} with the fix."""
    + FRESHNESS
)


def _focused(item: dict[str, Any], result: Result, query: str) -> dict[str, Any]:
    """A long result as the lines of it that match the query best (engine/search/excerpt.py)."""
    cut = excerpt(result, query)
    return item if cut is None else excerpt_json(item, cut)


def _repos(context: ToolContext, repo: str | list[str]) -> list[str]:
    names = strings(repo)
    if not names:
        raise RepoNotFound("repo is empty — give a repository name from listRepos, or '*'")
    if names == (ALL_REPOS,):
        every = repo_names(context.home)
        if not every:
            raise UsageError("no repository is indexed yet — run: engine index PATH --name SLUG")
        return every
    if len(names) == 1 and "," in names[0]:
        names = strings(names[0].split(","))
    return list(dict.fromkeys(repo_slug(name) for name in names))


def _search_here(
    context: ToolContext, slugs: list[str], query: str, depth: int, filters: Filters
) -> SearchResponse:
    """Each repository's warm index in this process, merged as local federation does."""
    with ExitStack() as stack:
        responses = [
            stack.enter_context(context.indexes.use(slug)).searcher.search(
                query, limit=depth, filters=filters
            )
            for slug in slugs
        ]
        response = responses[0] if len(responses) == 1 else merge(responses, depth)
    return response


def semantic_search(
    context: ToolContext,
    repo: Annotated[
        str | list[str],
        Field(
            description="Repository name (slug) as listed by listRepos, a list of them, or "
            "'*' for every indexed repository."
        ),
    ],
    query: Annotated[
        str,
        Field(
            description="What you are looking for, in words or identifiers, e.g. 'where is "
            "the retry delay computed' or 'parse_config'."
        ),
    ],
    limit: Limit = 10,
    lang: Lang = None,
    path: PathFilter = None,
    kind: Kind = None,
    budget: Budget = None,
    cursor: Cursor = None,
    wholeChunks: Annotated[
        bool,
        Field(
            description="Show each result's whole chunk (a definition can run to hundreds of "
            f"lines) instead of the {DEFAULT_EXCERPT_LINES} lines of it that match the query best."
        ),
    ] = False,
) -> dict[str, Any]:
    arguments = {
        "repo": repo, "query": query, "limit": limit, "lang": lang, "path": path,
        "kind": kind, "budget": budget, "wholeChunks": wholeChunks,
    }  # fmt: skip
    offset = decode_cursor("semanticSearch", arguments, cursor)
    tokens = checked_budget(budget)
    slugs = _repos(context, repo)
    filters = Filters(languages=languages(lang), path_globs=strings(path), kinds=kinds(kind))
    depth = min(offset + limit + 1, MAX_DEPTH)
    if offset >= MAX_DEPTH:
        raise UsageError(f"a search pages through at most {MAX_DEPTH} results")
    if context.cluster is not None:
        response = context.cluster(slugs, query, depth, filters)
    else:
        response = _search_here(context, slugs, query, depth, filters)
    data = response_json(response)
    everything = data.pop("results")
    data.pop("total", None)
    page = everything[offset : offset + limit]
    if not wholeChunks:
        page = [
            _focused(item, r, query)
            for item, r in zip(page, response.results[offset:], strict=False)
        ]
    if len(slugs) > 1:
        data["repos"] = slugs
    answer = fit(
        data,
        "results",
        page,
        tokens,
        more=len(everything) > offset + limit and offset + limit < MAX_DEPTH,
        next_cursor=lambda taken: encode_cursor("semanticSearch", arguments, offset + taken),
    )
    return answer


ASSEMBLE_CONTEXT = (
    "Get, in one call and within a token budget, the code that answers a question together "
    "with the definitions that code uses (the types and helpers it calls), so you do not have "
    "to guess them or search again. Most of the budget goes to the best search results, the "
    "rest to those definitions; code is never cut mid-line and no region appears twice. Use "
    "it before editing unfamiliar code, instead of a search followed by several reads. With "
    "tests=true it also lists the tests that exercise the answer (found through references)."
    '\n\nReturns {"primary": [...], "expanded": [...], "tokens", "budget", "dropped", ...}: '
    'results in the semanticSearch shape, plus "detail" (full, signature or location) and, for '
    'expanded ones, "usedBy". "tokens" counts the whole answer.' + FRESHNESS
)

_CONTEXT_ATTEMPTS = 4


def assemble_context(
    context: ToolContext,
    repo: Annotated[
        str, Field(description="Repository name (slug) as listed by listRepos, e.g. 'my-app'.")
    ],
    query: Annotated[str, Field(description="What you are about to work on, in words.")],
    budget: Annotated[
        int,
        Field(
            ge=MIN_BUDGET,
            le=MAX_BUDGET,
            description="Token budget for the whole answer (cl100k_base).",
        ),
    ] = 4000,
    tests: Annotated[bool, Field(description="Also list related tests.")] = False,
) -> dict[str, Any]:
    from engine.context.assembly import context_for
    from signals.symbol.resolver import SymbolResolver

    slug = repo_slug(repo)
    counter = agent_counter()
    code_budget = budget
    with context.indexes.use(slug) as opened:
        for _ in range(_CONTEXT_ATTEMPTS):
            # The builder budgets the code; the JSON around it (paths, names, keys, what was
            # dropped) costs more, so list fewer dropped regions, then shrink the code budget,
            # until the whole answer fits.
            data = context_for(
                opened, SymbolResolver, query, code_budget, counter=counter, include_tests=tests
            )
            data["budget"] = budget
            data["tokens"] = _fit_dropped(data, budget, counter[0])
            if data["tokens"] <= budget or code_budget <= 100:
                return data
            code_budget = max(100, int(code_budget * budget / data["tokens"] * 0.9))
    return data


def _fit_dropped(data: dict[str, Any], budget: int, count: Callable[[str], int]) -> int:
    """Leave listed dropped regions out (counting them in droppedTotal) until the answer fits
    or none is listed; returns the answer's tokens."""
    dropped = data["dropped"]
    tokens = count(orjson.dumps(data).decode())
    if tokens <= budget or not dropped:
        return tokens
    data["droppedTotal"] = len(dropped)
    while dropped and tokens > budget:
        del dropped[len(dropped) // 2 :]  # halve the list: few recounts on a long one
        tokens = count(orjson.dumps(data).decode())
    return tokens
