"""Context for agents: the search's best code plus the definitions it uses, in one token budget.

``assemble_context`` runs the one ranking path (``Searcher.search``), packs the best results
as **primary** blocks into most of the budget, then spends the rest on **expanded** blocks:
the definitions those primary chunks use (engine/context/expansion.py), best first. Optionally
it lists the **tests** that reference the primary definitions. Rules:

- Lines are never cut: a block is its full code, else its first lines (signature), else (for
  primary blocks only) its location, exactly as engine/search/budget.py packs search results.
- No region appears twice: an expanded definition overlapping a primary block or an earlier
  expanded one is skipped.
- Unused expansion budget goes back to the primary blocks (a second packing pass), so a
  query whose code uses nothing worth showing loses nothing by asking for context.
- ``tokens`` never exceeds ``budget``; ``dropped`` lists what did not fit.

The engine knows symbols only through ``DefinitionResolver`` (signals/symbol/resolver.py
implements it over the symbol signal's table) and counts tokens with the ``TokenCounter`` it
is handed: ``cli`` wires both in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, cast

from engine.context.expansion import (
    Candidate,
    DefinitionResolver,
    DefinitionSite,
    ReferenceSite,
    used_definitions,
)
from engine.context.related_tests import RelatedTest, related_tests
from engine.errors import UsageError
from engine.index.opening import OpenIndex
from engine.search.budget import LOCATION_TOKENS, TokenCounter, pack, signature_of
from engine.search.ranking.options import DEFAULT_RANKING, RankingOptions
from engine.search.searcher import ChunkReader
from engine.types import SYMBOL, Chunk, Result, SearchResponse

__all__ = [
    "DEFAULT_EXPANSION_SHARE",
    "AssembledContext",
    "Block",
    "ContextSearcher",
    "DefinitionResolver",
    "DefinitionSite",
    "IndexResolver",
    "ReferenceSite",
    "RelatedTest",
    "build_context",
    "context_for",
    "context_json",
]

# Share of the budget kept for the definitions the primary code uses. Of 0, 0.1, 0.2 and 0.3,
# 0.2 had the best mean recall over the jinja, ky, urfave-cli and engine-self datasets at 2k
# and 4k tokens and was within 0.002 of the best at 1k (python -m eval.context_metric).
DEFAULT_EXPANSION_SHARE = 0.2
# Search results considered for the primary blocks: enough to fill the budget when the
# expansion leaves some unused (about one result per TOKENS_PER_RESULT), at least MIN_LIMIT.
MIN_LIMIT = 10
MAX_LIMIT = 50
TOKENS_PER_RESULT = 150
MAX_EXPANDED = 12  # expansion candidates considered; the rest are not worth listing
MAX_TESTS = 8

Detail = Literal["full", "signature", "location"]


class ContextSearcher(Protocol):
    """What the context needs of ``engine.search.searcher.Searcher``."""

    @property
    def repo(self) -> str: ...

    def search(
        self, text: str, *, limit: int = ..., ranking: RankingOptions | None = ...
    ) -> SearchResponse: ...


# A context packs code to read, so several neighbouring definitions of one file are welcome
# (search answers list distinct files first; see engine/search/ranking/rerank.py).
CONTEXT_RANKING = replace(DEFAULT_RANKING, max_per_file=3)


@dataclass(frozen=True, slots=True)
class Block:
    """One block of the context: a result as packed, and for an expanded one who uses it."""

    result: Result  # content as shown: the full code, its first lines, or "" (location)
    detail: Detail
    used_by: tuple[Result, ...] = ()  # expanded blocks: the primary results that use it


@dataclass(frozen=True, slots=True)
class Dropped:
    role: Literal["primary", "expanded", "test"]
    path: str
    start_line: int
    end_line: int
    symbol_name: str


@dataclass
class AssembledContext:
    """An assembled context; ``context_json`` is its contract."""

    query: str
    repo: str
    budget_tokens: int
    expansion_share: float
    tokenizer: str
    used_tokens: int = 0
    primary: list[Block] = field(default_factory=list)
    expanded: list[Block] = field(default_factory=list)
    tests: list[RelatedTest] | None = None  # None: not asked for
    tests_found: int = 0  # before the MAX_TESTS cut and the budget
    dropped: list[Dropped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    low_confidence: bool = False


def block_tokens(block: Block, count: TokenCounter) -> int:
    """What a block costs, as engine/search/budget.py counts it: its code plus the location line."""
    return LOCATION_TOKENS + (count(block.result.content) if block.result.content else 0)


def _overlaps(a: Result, b: Result) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def _expanded_result(repo: str, candidate: Candidate, chunk: Chunk, users: int) -> Result:
    """The definition's lines within its chunk: a constant's line, not its module's chunk."""
    site = candidate.site
    start = max(chunk.start_line, site.start_line)
    end = min(chunk.end_line, site.end_line)
    if start > end:  # the index's range misses the chunk: show the chunk
        start, end = chunk.start_line, chunk.end_line
    lines = chunk.text.split("\n")[start - chunk.start_line : end - chunk.start_line + 1]
    return Result(
        repo=repo,
        path=site.path,
        start_line=start,
        end_line=end,
        symbol_name=site.symbol_name or site.name,
        qualified_name=site.symbol,
        content="\n".join(lines),
        score=round(len(candidate.used_by) / max(1, users), 4),
        sources=(SYMBOL,),
        chunk_id=chunk.id,
        language=chunk.language,
        kind=site.kind,
    )


def _pack_expansion(
    results: Sequence[Result], budget_tokens: int, count: TokenCounter
) -> tuple[list[tuple[Result, Detail]], list[Result]]:
    """Full code, else the signature, else leave it out: a bare location of a helper is noise."""
    kept: list[tuple[Result, Detail]] = []
    left: list[Result] = []
    used = 0
    for r in results:
        full = count(r.content) + LOCATION_TOKENS
        if used + full <= budget_tokens:
            kept.append((r, "full"))
            used += full
            continue
        signature = signature_of(r)
        cost = count(signature) + LOCATION_TOKENS
        if signature and used + cost <= budget_tokens:
            end = min(r.end_line, r.start_line + signature.count("\n"))
            kept.append((replace(r, content=signature, end_line=end), "signature"))
            used += cost
            continue
        left.append(r)
    return kept, left


def _primary_blocks(
    results: Sequence[Result], budget_tokens: int, count: TokenCounter
) -> list[Block]:
    packed = pack(results, max(0, budget_tokens), count)
    return [
        Block(r, cast(Detail, detail))
        for r, detail in zip(packed.results, packed.details, strict=True)
    ]


def default_limit(budget_tokens: int) -> int:
    return max(MIN_LIMIT, min(MAX_LIMIT, budget_tokens // TOKENS_PER_RESULT))


def build_context(
    searcher: ContextSearcher,
    store: ChunkReader,
    resolver: DefinitionResolver,
    query: str,
    *,
    budget_tokens: int,
    expansion_share: float = DEFAULT_EXPANSION_SHARE,
    include_tests: bool = False,
    limit: int | None = None,
    counter: tuple[TokenCounter, str],
) -> AssembledContext:
    """Search, pack the primary blocks, expand with used definitions (module docstring)."""
    if budget_tokens < 1:
        raise UsageError("the budget must be at least 1 token")
    if not 0.0 <= expansion_share < 1.0:
        raise UsageError("the expansion share must be at least 0 and below 1, e.g. 0.3")
    count, tokenizer = counter
    response = searcher.search(
        query, limit=limit or default_limit(budget_tokens), ranking=CONTEXT_RANKING
    )
    results = response.results
    context = AssembledContext(
        query=response.query,
        repo=searcher.repo,
        budget_tokens=budget_tokens,
        expansion_share=expansion_share,
        tokenizer=tokenizer,
        warnings=list(response.warnings),
        low_confidence=response.low_confidence,
    )
    reserve = int(budget_tokens * expansion_share)
    primary = _primary_blocks(results, budget_tokens - reserve, count)
    # The code the reader sees (full or signature) is what the expansion explains.
    shown = [r for r, b in zip(results, primary, strict=False) if b.detail != "location"]
    chunks = store.chunks([r.chunk_id for r in shown if r.chunk_id is not None])
    users = [
        (r, chunks[r.chunk_id]) for r in shown if r.chunk_id is not None and r.chunk_id in chunks
    ]

    remaining = budget_tokens - _tokens(primary, count)
    test_tokens = 0
    if include_tests:
        found = related_tests([chunk for _, chunk in users], resolver)
        context.tests_found = len(found)
        # Past MAX_TESTS the list is cut, not dropped: only the cut list competes for budget.
        found = found[:MAX_TESTS]
        fits = max(0, min(len(found), remaining // LOCATION_TOKENS))
        context.tests = found[:fits]
        context.dropped += [
            Dropped("test", t.path, t.start_line, t.end_line, t.enclosing) for t in found[fits:]
        ]
        test_tokens = LOCATION_TOKENS * fits

    expanded, left = _expand(
        searcher.repo,
        store,
        resolver,
        users,
        results[: len(primary)],
        remaining - test_tokens,
        count,
    )
    if len(primary) < len(results) or any(b.detail != "full" for b in primary):
        # What the expansion did not use goes back to the primary blocks.
        primary = _primary_blocks(
            results, budget_tokens - test_tokens - _tokens(expanded, count), count
        )
        packed = results[: len(primary)]
        expanded = [b for b in expanded if not any(_overlaps(b.result, r) for r in packed)]
    context.primary = primary
    context.expanded = expanded
    context.used_tokens = _tokens(primary, count) + _tokens(expanded, count) + test_tokens
    context.dropped = [
        *(
            Dropped("primary", r.path, r.start_line, r.end_line, r.symbol_name)
            for r in results[len(primary) :]
        ),
        *(Dropped("expanded", r.path, r.start_line, r.end_line, r.symbol_name) for r in left),
        *context.dropped,
    ]
    return context


def _tokens(blocks: Sequence[Block], count: TokenCounter) -> int:
    return sum(block_tokens(b, count) for b in blocks)


def _expand(
    repo: str,
    store: ChunkReader,
    resolver: DefinitionResolver,
    users: Sequence[tuple[Result, Chunk]],
    primary: Sequence[Result],
    budget_tokens: int,
    count: TokenCounter,
) -> tuple[list[Block], list[Result]]:
    """Expanded blocks that fit ``budget_tokens``, and the candidates that did not.

    ``users`` pairs each shown primary result (as searched, not as packed) with its stored
    chunk, in rank order; ``primary`` is every packed primary result, which no expanded block
    may overlap.
    """
    if not users:
        return [], []
    candidates = used_definitions([chunk for _, chunk in users], resolver)
    chunks = store.chunks([c.site.chunk_id for c in candidates if c.site.chunk_id is not None])
    taken = list(primary)
    chosen: list[Result] = []
    used_by: dict[tuple[str, int], tuple[Result, ...]] = {}
    for candidate in candidates:
        chunk = chunks.get(candidate.site.chunk_id) if candidate.site.chunk_id is not None else None
        if chunk is None:
            continue  # no stored code to show
        result = _expanded_result(repo, candidate, chunk, len(users))
        if any(_overlaps(result, t) for t in taken):
            continue
        taken.append(result)
        chosen.append(result)
        used_by[(result.path, result.start_line)] = tuple(users[i][0] for i in candidate.used_by)
        if len(chosen) >= MAX_EXPANDED:
            break
    kept, left = _pack_expansion(chosen, max(0, budget_tokens), count)
    blocks = [Block(r, detail, used_by[(r.path, r.start_line)]) for r, detail in kept]
    return blocks, left


def _block_json(block: Block) -> dict[str, Any]:
    data: dict[str, Any] = block.result.contract_json()
    data["language"] = block.result.language
    data["detail"] = block.detail
    if block.used_by:
        data["usedBy"] = [
            {
                "filePath": r.path,
                "startLine": r.start_line,
                "endLine": r.end_line,
                "symbolName": r.symbol_name,
            }
            for r in block.used_by
        ]
    return data


def context_json(context: AssembledContext) -> dict[str, Any]:
    """The JSON contract of ``engine context --json`` and of the agent tool."""
    data: dict[str, Any] = {
        "query": context.query,
        "repo": context.repo,
        "budget": context.budget_tokens,
        "tokens": context.used_tokens,
        "tokenizer": context.tokenizer,
        "expansionShare": context.expansion_share,
        "primary": [_block_json(b) for b in context.primary],
        "expanded": [_block_json(b) for b in context.expanded],
    }
    if context.tests is not None:
        data["tests"] = [
            {
                "filePath": t.path,
                "line": t.line,
                "startLine": t.start_line,
                "endLine": t.end_line,
                "symbolName": t.enclosing,
                "tests": list(t.tests),
                "exact": t.exact,
            }
            for t in context.tests
        ]
        data["testsFound"] = context.tests_found
    data["dropped"] = [
        {
            "role": d.role,
            "filePath": d.path,
            "startLine": d.start_line,
            "endLine": d.end_line,
            "symbolName": d.symbol_name,
        }
        for d in context.dropped
    ]
    if context.warnings:
        data["warning"] = "; ".join(dict.fromkeys(context.warnings))
    if context.low_confidence:
        data["lowConfidence"] = True
    return data


class IndexResolver(DefinitionResolver, Protocol):
    """A ``DefinitionResolver`` over one open index, closed once the context is built."""

    @property
    def warning(self) -> str:
        """Why lookups answer nothing (e.g. no symbol table); "" when they work."""
        ...

    def close(self) -> None: ...


def context_for(
    opened: OpenIndex,
    open_resolver: Callable[[OpenIndex], IndexResolver],
    query: str,
    budget_tokens: int,
    *,
    counter: tuple[TokenCounter, str],
    expansion_share: float | None = None,
    include_tests: bool = False,
    limit: int | None = None,
) -> dict[str, Any]:
    """The context JSON object for an open index: what ``engine context`` and the agent tool
    return. ``open_resolver`` gives the definitions (signals/symbol's ``SymbolResolver``)."""
    resolver = open_resolver(opened)
    try:
        data = context_json(
            build_context(
                opened.searcher,
                opened.store,
                resolver,
                query,
                budget_tokens=budget_tokens,
                expansion_share=(
                    DEFAULT_EXPANSION_SHARE if expansion_share is None else expansion_share
                ),
                include_tests=include_tests,
                limit=limit,
                counter=counter,
            )
        )
    finally:
        resolver.close()
    if resolver.warning:
        data["warning"] = "; ".join(filter(None, [data.get("warning"), resolver.warning]))
    return data
