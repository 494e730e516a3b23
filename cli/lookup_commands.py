"""``engine defs`` and ``engine refs``: definitions and references in the search result shape."""

from __future__ import annotations

from typing import Any

from engine.index.home import Home, validate_slug
from engine.index.opening import open_index
from engine.index.store import ChunkStore
from engine.search.searcher import clean_query
from engine.signal import OpenOptions, SignalPlugin


def location_json(repo: str, store: ChunkStore, location: Any) -> dict[str, Any]:
    """A SymbolLocation as a search result: the definition's chunk, or the reference line."""
    chunk = store.chunks([location.chunk_id]).get(location.chunk_id) if location.chunk_id else None
    start, end, content = location.start_line, location.end_line, ""
    if location.role == "reference":
        start = end = location.line
        if chunk is not None and chunk.start_line <= location.line <= chunk.end_line:
            content = chunk.text.split("\n")[location.line - chunk.start_line]
    elif chunk is not None:
        start, end, content = chunk.start_line, chunk.end_line, chunk.text
    return {
        "repo": repo,
        "filePath": location.path,
        "startLine": start,
        "endLine": end,
        "symbolName": location.symbol,
        "content": content,
        "role": location.role,
        "line": location.line,
        "kind": location.kind,
        "enclosing": location.enclosing,
        "exact": location.exact,
        "source": location.source,
    }


def lookup(
    home: Home,
    plugins: dict[str, SignalPlugin],
    slug: str,
    text: str,
    *,
    references: bool,
    limit: int,
) -> dict[str, Any]:
    from signals.symbol.lookup import find_definitions, find_references

    opened = open_index(home, validate_slug(slug), plugins, OpenOptions(home=home.root))
    try:
        if references:
            found = find_references(opened.generation, opened.store, text, limit)
        else:
            found = find_definitions(opened.generation, text, limit)
        results = [location_json(slug, opened.store, loc) for loc in found]
    finally:
        opened.close()
    return {"query": clean_query(text), "results": results, "total": len(results)}
