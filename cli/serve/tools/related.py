"""findRelated: the code around one location, by meaning and by use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from cli.output import response_json
from cli.serve.tools.answer import checked_budget, fit
from cli.serve.tools.common import Budget, Repo, ToolContext, repo_slug
from cli.serve.tools.files import FilePath, relative_path
from engine.errors import UsageError
from engine.index.store import ChunkStore
from engine.types import VECTOR, Chunk

if TYPE_CHECKING:
    from engine.context.expansion import DefinitionSite

MAX_ANCHOR_CHARS = 4_000  # of the anchor's code, embedded as the query for similar code

FIND_RELATED = (
    "Given a location (a file and a line, e.g. from a search result or the code you are "
    "editing), get the code related to it: code that does something similar elsewhere "
    '(relation "similar", from embeddings), the definitions it uses ("uses": the helpers '
    'and types it calls, resolved by symbol) and the places that use it ("usedBy": its '
    "callers). Use it to find the other places a change must also touch, or an existing "
    "helper to reuse, without guessing names to grep for.\n\nReturns {repo, filePath, line, "
    'anchor (the chunk at that line), results: [{relation, ...a search result}], "total", '
    '"tokens", "budget", "warning"?}.'
)


def _anchor(chunks: list[Chunk], line: int) -> Chunk | None:
    """The smallest chunk holding ``line``."""
    holding = [c for c in chunks if c.start_line <= line <= c.end_line]
    return min(holding, key=lambda c: c.end_line - c.start_line) if holding else None


def _overlaps(item: dict[str, Any], chunk: Chunk) -> bool:
    return bool(
        item["filePath"] == chunk.path
        and item["startLine"] <= chunk.end_line
        and chunk.start_line <= item["endLine"]
    )


def find_related(
    context: ToolContext,
    repo: Repo,
    path: FilePath,
    line: Annotated[int, Field(ge=1, description="A line inside the code of interest, 1-based.")],
    limit: Annotated[
        int, Field(ge=1, le=50, description="At most this many of each relation.")
    ] = 5,
    budget: Budget = None,
) -> dict[str, Any]:
    from engine.context.expansion import used_definitions
    from signals.symbol.resolver import SymbolResolver

    slug = repo_slug(repo)
    rel = relative_path(path)
    tokens = checked_budget(budget)
    warnings: list[str] = []
    with context.indexes.use(slug) as opened:
        anchor = _anchor(opened.store.chunks_in_file(rel), line)
        if anchor is None:
            known = rel in opened.store.files()
            raise UsageError(
                f"no indexed code at {rel}:{line}"
                + ("" if known else " — the file is not in the index (check the path or reindex)")
            )
        signals = [VECTOR] if VECTOR in opened.searcher.signals else None
        if signals is None:
            warnings.append("the vector signal is off: similar code found by words instead")
        response = opened.searcher.search(
            anchor.text[:MAX_ANCHOR_CHARS], limit=limit + 5, signals=signals
        )
        similar = [
            {**item, "relation": "similar"}
            for item in response_json(response)["results"]
            if not _overlaps(item, anchor)
        ][:limit]
        warnings.extend(response.warnings)
        resolver = SymbolResolver(opened)
        try:
            if resolver.warning:
                warnings.append(resolver.warning)
            uses = [
                _site_json(slug, opened.store, c.site, "uses")
                for c in used_definitions([anchor], resolver)
                if not (
                    c.site.path == anchor.path
                    and anchor.start_line <= c.site.start_line <= anchor.end_line
                )
            ][:limit]
            own = [
                site
                for sites in resolver.definitions_named(
                    [anchor.name] if anchor.name else []
                ).values()
                for site in sites
                if site.path == anchor.path
                and anchor.start_line <= site.start_line <= anchor.end_line
            ]
            used_by = [
                {
                    "relation": "usedBy",
                    "repo": slug,
                    "filePath": ref.path,
                    "startLine": ref.line,
                    "endLine": ref.line,
                    "symbolName": ref.enclosing,
                    "content": _line_of(opened.store, ref.path, ref.line),
                }
                for site in own[:1]
                for ref in resolver.references(site)
                if not (
                    ref.path == anchor.path and anchor.start_line <= ref.line <= anchor.end_line
                )
            ][:limit]
        finally:
            resolver.close()
    envelope: dict[str, Any] = {
        "repo": slug,
        "filePath": rel,
        "line": line,
        "anchor": {
            "startLine": anchor.start_line,
            "endLine": anchor.end_line,
            "symbolName": anchor.qualified_name,
            "kind": anchor.kind,
        },
    }
    if warnings:
        envelope["warning"] = "; ".join(dict.fromkeys(warnings))
    answer = fit(
        envelope,
        "results",
        [*similar, *uses, *used_by],
        tokens,
        more=False,
        next_cursor=lambda taken: "",
    )
    answer.pop("nextCursor", None)  # each relation is capped by limit: ask for more instead
    return answer


def _site_json(repo: str, store: ChunkStore, site: DefinitionSite, relation: str) -> dict[str, Any]:
    chunk = store.chunks([site.chunk_id]).get(site.chunk_id) if site.chunk_id else None
    content = ""
    if (
        chunk is not None
        and chunk.start_line <= site.start_line
        and site.end_line <= chunk.end_line
    ):
        lines = chunk.text.split("\n")
        content = "\n".join(
            lines[site.start_line - chunk.start_line : site.end_line - chunk.start_line + 1]
        )
    elif chunk is not None:
        content = chunk.text
    return {
        "relation": relation,
        "repo": repo,
        "filePath": site.path,
        "startLine": site.start_line,
        "endLine": site.end_line,
        "symbolName": site.symbol,
        "kind": site.kind,
        "content": content,
    }


def _line_of(store: ChunkStore, path: str, line: int) -> str:
    for chunk in store.chunks_in_file(path):
        if chunk.start_line <= line <= chunk.end_line:
            return str(chunk.text.split("\n")[line - chunk.start_line])
    return ""
