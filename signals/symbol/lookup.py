"""Where a symbol is defined and where it is used, for the CLI's definition/reference commands.

Both functions take the generation folder (``OpenIndex.generation``) and read the symbol
signal's table in ``<generation>/symbol``. References come from the SCIP indexes when a real
indexer (or the user's index) described the symbol; for a symbol only the engine's tree-sitter
index knows, or a name no table row has, they are found by scanning the stored chunks for the
name as a whole identifier and carry ``exact=False``.

References are ordered callers first: those inside a function or method chunk, then the
others (module code, class bodies, files without chunks), each group by path and line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engine.errors import SignalUnavailable
from engine.search.searcher import clean_query
from engine.signal import ChunkSource
from engine.terms import identifiers
from engine.types import SYMBOL, Chunk
from scip.errors import ScipError
from scip.symbols import descriptor_name, parse_symbol
from signals.symbol.query_terms import dotted_key
from signals.symbol.ranking import rank
from signals.symbol.table import TABLE_FILE, TREE_SITTER, ReferenceRecord, SymbolRecord, SymbolTable

Role = Literal["definition", "reference"]
TEXT_SOURCE = "text"  # the source of a reference found by name matching
_CALLABLE_KINDS = frozenset({"function", "method"})


@dataclass(frozen=True, slots=True)
class SymbolLocation:
    """A definition or a reference. Lines are 1-based and inclusive; paths repo-relative."""

    symbol: str  # the readable name, e.g. "toy.greeter.greet"; for an unknown name, the name
    role: Role
    path: str
    line: int  # the definition's name line, or the line of the reference
    start_line: int  # the whole definition, or the chunk enclosing the reference
    end_line: int
    kind: str  # the definition's kind; for a reference its chunk's kind ("" without a chunk)
    chunk_id: int | None  # the enclosing chunk; None when the file has no chunk there
    enclosing: str  # for a reference, its chunk's qualified name ("" at module level)
    exact: bool  # False for a reference found by matching the name alone
    source: str  # the index that said so ("scip-python", "tree-sitter", ...) or "text"


def _open(generation: Path) -> SymbolTable:
    directory = generation / SYMBOL
    if not (directory / TABLE_FILE).is_file():
        raise SignalUnavailable(
            f"the symbol signal has no table in {generation} — reindex the repository"
        )
    return SymbolTable.open(directory)


def _definition(record: SymbolRecord) -> SymbolLocation:
    return SymbolLocation(
        symbol=record.readable,
        role="definition",
        path=record.path,
        line=record.name_line,
        start_line=record.start_line,
        end_line=record.end_line,
        kind=record.kind,
        chunk_id=record.chunk_id,
        enclosing="",
        exact=True,
        source=record.source,
    )


def _scip_symbol(text: str) -> bool:
    """True for a whole SCIP symbol (``scip-python python toy 0.1 `toy.greeter`/greet().``)."""
    if " " not in text.strip():
        return False
    try:
        parse_symbol(text.strip())
    except ScipError:
        return False
    return True


def find_definitions(generation: Path, name: str, limit: int = 20) -> list[SymbolLocation]:
    """Definitions for ``name``: a name, a dotted path (``Greeter.greet``), a SCIP symbol.

    Exact matches first (the name, case-insensitive, or the end of the qualified name), then
    fuzzy ones (prefixes, shared name parts) in the symbol signal's ranking order.
    """
    name = clean_query(name)
    table = _open(generation)
    try:
        if _scip_symbol(name):
            found = table.with_symbol(name.strip())
            if found:
                return [_definition(r) for _, r in sorted(found.items())][:limit]
        ranked = rank(table, name, limit)
        records = table.records([r.definition_id for r in ranked])
        return [_definition(records[r.definition_id]) for r in ranked]
    finally:
        table.close()


def _resolve(table: SymbolTable, text: str) -> dict[int, SymbolRecord]:
    """The definitions ``text`` names exactly: a SCIP symbol, a dotted path or a name."""
    text = text.strip()
    if _scip_symbol(text):
        found = table.with_symbol(text)
        if found:
            return found
    key = dotted_key(text)
    last = key.rsplit(".", 1)[-1]
    ids = [
        i
        for i, _, qual, _ in table.exact([last])
        if "." not in key or qual == key or qual.endswith("." + key)
    ]
    return table.records(ids)


def _searched_name(text: str) -> str:
    text = text.strip()
    if _scip_symbol(text):
        return descriptor_name(text)
    return identifiers(text)[-1] if identifiers(text) else text


def find_references(
    generation: Path, store: ChunkSource, symbol_or_name: str, limit: int = 50
) -> list[SymbolLocation]:
    """The definitions of a symbol, then its references, callers first (see module docstring)."""
    symbol_or_name = clean_query(symbol_or_name)
    table = _open(generation)
    try:
        targets = _resolve(table, symbol_or_name)
        indexed = [r for r in targets.values() if r.source != TREE_SITTER]
        references = table.references([r.symbol for r in indexed])
    finally:
        table.close()
    definitions = [_definition(r) for _, r in sorted(targets.items())]
    by_symbol = {r.symbol: r for r in targets.values()}
    readable = {r.readable for r in targets.values()}
    chunks = store.chunks(sorted({r.chunk_id for r in references if r.chunk_id is not None}))
    found = [_reference(r, by_symbol[r.symbol], chunks) for r in references]
    if len(indexed) < len(targets) or not targets:
        # Some definition has no index that records its references: match its name instead.
        names = {r.name for r in targets.values()} or {_searched_name(symbol_or_name)}
        label = next(iter(readable)) if len(readable) == 1 else ""
        skip = {(r.path, r.name_line) for r in targets.values()}
        skip |= {(r.path, r.line) for r in found}
        found += _name_matches(store.iter_chunks(), names, label, skip)
    found.sort(key=lambda r: (r.kind not in _CALLABLE_KINDS, r.path, r.line))
    return [*definitions, *found][:limit]


def _reference(
    record: ReferenceRecord, target: SymbolRecord, chunks: Mapping[int, Chunk]
) -> SymbolLocation:
    chunk = chunks.get(record.chunk_id) if record.chunk_id is not None else None
    return SymbolLocation(
        symbol=target.readable,
        role="reference",
        path=record.path,
        line=record.line,
        start_line=chunk.start_line if chunk else record.line,
        end_line=chunk.end_line if chunk else record.line,
        kind=chunk.kind if chunk else "",
        chunk_id=chunk.id if chunk else None,
        enclosing=chunk.qualified_name if chunk else "",
        exact=True,
        source=target.source,
    )


def _name_matches(
    chunks: Iterable[Chunk], names: set[str], label: str, skip: set[tuple[str, int]]
) -> list[SymbolLocation]:
    """Lines of ``chunks`` where one of ``names`` occurs as a whole identifier."""
    found: list[SymbolLocation] = []
    seen = set(skip)
    for chunk in chunks:
        if not any(name in chunk.text for name in names):
            continue
        for offset, text in enumerate(chunk.text.split("\n")):
            if not any(name in text for name in names):
                continue
            line = chunk.start_line + offset
            if (chunk.path, line) in seen or not names.intersection(identifiers(text)):
                continue
            seen.add((chunk.path, line))
            found.append(
                SymbolLocation(
                    symbol=label or next(n for n in names if n in text),
                    role="reference",
                    path=chunk.path,
                    line=line,
                    start_line=chunk.start_line,
                    end_line=chunk.end_line,
                    kind=chunk.kind,
                    chunk_id=chunk.id,
                    enclosing=chunk.qualified_name,
                    exact=False,
                    source=TEXT_SOURCE,
                )
            )
    return found
