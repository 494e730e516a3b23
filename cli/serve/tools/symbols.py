"""findSymbol, findReferences and fileOutline: code found by name, not by meaning."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cli.output import check_locations, location_json
from cli.serve.tools.answer import checked_budget, decode_cursor, encode_cursor, fit
from cli.serve.tools.common import FRESHNESS, Budget, Cursor, Repo, ToolContext, repo_slug
from engine.search.searcher import clean_query

MAX_DEPTH = 500

LOCATION_FIELDS = (
    "Each result has: repo; filePath; startLine and endLine (1-based, inclusive: for a "
    "definition the whole definition, decorators and doc comment included; for a reference "
    'its line); symbolName (the name within the file, e.g. "Parser.parse"); qualifiedName '
    '(e.g. "pkg.module.Parser.parse" for Python, importable); content (left out with '
    'includeBody=false); role ("definition" or "reference"); line (the line of the name or '
    "of the reference); kind; enclosing (for a reference, the function or class it sits "
    'in); match ("exact": it has the name asked for; "partial": a close name); indexed '
    "(false for a reference found by matching the name as a word, which may be a comment or "
    "another symbol with that name); source (which index said so); symbol (the SCIP symbol)."
)


IncludeBody = Annotated[
    bool, Field(description="Include each definition's code (false: locations only).")
]

FIND_SYMBOL = (
    "Find where something is defined, by name: a function, method, class, interface, struct "
    'or type. Give a plain name ("parse_config"), a dotted path ("Parser.parse") or a SCIP '
    'symbol. Exact name matches come first (match: "exact"), then close ones '
    '("partial"). A name that exists nowhere answers no results and "suggestions": names '
    "that do exist. Prefer this over grep when you know (most of) the name and want its "
    'definition rather than every line that mentions it.\n\nReturns {"query", "results": '
    '[...], "total", "suggestions"?, "tokens", "budget", "nextCursor"?}. '
    + LOCATION_FIELDS
    + FRESHNESS
)


def find_symbol(
    context: ToolContext,
    repo: Repo,
    name: Annotated[str, Field(description="The name, dotted path or SCIP symbol to find.")],
    limit: Annotated[int, Field(ge=1, le=100, description="At most this many per page.")] = 20,
    includeBody: IncludeBody = True,
    budget: Budget = None,
    cursor: Cursor = None,
) -> dict[str, Any]:
    arguments = {
        "repo": repo, "name": name, "limit": limit, "includeBody": includeBody, "budget": budget,
    }  # fmt: skip
    return _lookup(context, "findSymbol", arguments, cursor, references=False)


FIND_REFERENCES = (
    "List where a symbol is used: its definition first, then references inside functions and "
    "methods (the callers), then the rest. Give a name, a dotted path or a SCIP symbol. Use it "
    "before changing a function's signature or behaviour, to find every caller; unlike grep "
    "it knows which occurrences are this symbol when a SCIP index is present (otherwise "
    'references are whole-word matches of the name, source "text").\n\nReturns {"query", '
    '"results": [...], "total", "tokens", "budget", "nextCursor"?}. ' + LOCATION_FIELDS + FRESHNESS
)


def find_references(
    context: ToolContext,
    repo: Repo,
    symbol: Annotated[str, Field(description="The name, dotted path or SCIP symbol.")],
    limit: Annotated[int, Field(ge=1, le=100, description="At most this many per page.")] = 50,
    includeBody: IncludeBody = True,
    budget: Budget = None,
    cursor: Cursor = None,
) -> dict[str, Any]:
    arguments = {
        "repo": repo, "symbol": symbol, "limit": limit, "includeBody": includeBody,
        "budget": budget,
    }  # fmt: skip
    return _lookup(context, "findReferences", arguments, cursor, references=True)


def _lookup(
    context: ToolContext,
    tool: str,
    arguments: dict[str, Any],
    cursor: str | None,
    *,
    references: bool,
) -> dict[str, Any]:
    from signals.symbol.lookup import find_definitions, suggest_names
    from signals.symbol.lookup import find_references as references_of

    offset = decode_cursor(tool, arguments, cursor)
    tokens = checked_budget(arguments["budget"])
    text = arguments["symbol" if references else "name"]
    limit = arguments["limit"]
    slug = repo_slug(arguments["repo"])
    depth = min(offset + limit + 1, MAX_DEPTH)
    data: dict[str, Any] = {"query": clean_query(text)}
    with context.indexes.use(slug) as opened:
        if references:
            found = references_of(opened.generation, opened.store, text, depth)
        else:
            found = find_definitions(opened.generation, text, depth)
        page = [location_json(slug, opened.store, loc) for loc in found[offset : offset + limit]]
        # Against the files on disk, as searches are: moved ones get their current lines.
        warnings = check_locations(page, opened.searcher.files, slug)
        if not found and not references:
            data["suggestions"] = suggest_names(opened.generation, text)
    if warnings:
        data["warning"] = "; ".join(warnings)
    if not arguments["includeBody"]:
        page = [{k: v for k, v in item.items() if k != "content"} for item in page]
    answer = fit(
        data,
        "results",
        page,
        tokens,
        more=len(found) > offset + limit,
        next_cursor=lambda taken: encode_cursor(tool, arguments, offset + taken),
    )
    return answer
