"""Where a symbol is defined and where it is used, for ``engine defs``/``refs`` and the agent tools.

Both functions take the generation folder (``OpenIndex.generation``) and read the symbol
signal's table in ``<generation>/symbol``.

Definitions: the *exact* matches come first, each marked ``match="exact"``: the definitions
whose own name is the name asked for (case-sensitive), whose qualified name is the dotted
path asked for or ends with it at a ``.`` (``Flask.url_for``, ``flask.app.Flask.url_for``),
or whose SCIP symbol is the one asked for. A ``Class.member`` that no definition has resolves
to the member the class inherits (inheritance.py), which is exact too. After them come the
symbol signal's ranked matches (prefixes, shared name parts), marked ``match="partial"``,
and only when something matched exactly: a name that exists nowhere answers an empty list,
and ``suggest_names`` says what was perhaps meant.

References come from the SCIP indexes when a real indexer (or the user's index) described
the symbol; for a symbol only the engine's tree-sitter index knows, or a name no table row
has, they are found by scanning the stored chunks for the name as a whole identifier and
carry ``indexed=False`` and ``match="partial"`` (the same name may be another symbol's).

References are ordered callers first: those inside a function or method chunk, then the
others (module code, class bodies, files without chunks), each group by path and line.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engine.errors import SignalUnavailable
from engine.search.ranking.options import DEFAULT_RANKING
from engine.search.ranking.priors import path_prior
from engine.search.searcher import clean_query
from engine.signal import ChunkSource
from engine.terms import identifiers
from engine.types import SYMBOL, Chunk
from scip.errors import ScipError
from scip.symbols import descriptor_name, parse_symbol
from signals.symbol.inheritance import inherited
from signals.symbol.names import inner_name
from signals.symbol.outline import OutlineEntry, file_outline
from signals.symbol.ranking import rank
from signals.symbol.table import TABLE_FILE, TREE_SITTER, ReferenceRecord, SymbolRecord, SymbolTable

__all__ = [
    "OutlineEntry",
    "SymbolLocation",
    "file_outline",
    "find_definitions",
    "find_references",
    "suggest_names",
]

Role = Literal["definition", "reference"]
Match = Literal["exact", "partial"]
TEXT_SOURCE = "text"  # the source of a reference found by name matching
_CALLABLE_KINDS = frozenset({"function", "method"})
# "Did you mean": names at least this similar (difflib's ratio) to the one asked for.
SUGGESTION_CUTOFF = 0.6


@dataclass(frozen=True, slots=True)
class SymbolLocation:
    """A definition or a reference. Lines are 1-based and inclusive; paths repo-relative."""

    symbol: str  # the qualified name (engine.qualified), e.g. "toy.greeter.Greeter.greet"
    role: Role
    path: str
    line: int  # the definition's name line, or the line of the reference
    start_line: int  # the whole definition, or the chunk enclosing the reference
    end_line: int
    kind: str  # the definition's kind; for a reference its chunk's kind ("" without a chunk)
    chunk_id: int | None  # the enclosing chunk; None when the file has no chunk there
    enclosing: str  # for a reference, its chunk's qualified name ("" at module level)
    indexed: bool  # True when an index says so; False for a reference matched by name alone
    source: str  # the index that said so ("scip-python", "tree-sitter", ...) or "text"
    match: Match = "exact"  # see the module docstring
    symbol_name: str = ""  # the name within the file, e.g. "Greeter.greet"
    scip_symbol: str = ""  # the definition's SCIP symbol ("" for a name match)


def _open(generation: Path) -> SymbolTable:
    directory = generation / SYMBOL
    if not (directory / TABLE_FILE).is_file():
        raise SignalUnavailable(
            f"the symbol signal has no table in {generation} — reindex the repository"
        )
    return SymbolTable.open(directory)


def _definition(record: SymbolRecord, match: Match = "exact") -> SymbolLocation:
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
        indexed=True,
        source=record.source,
        match=match,
        symbol_name=inner_name(record.symbol) or record.name,
        scip_symbol=record.symbol,
    )


def find_definitions(
    generation: Path, name: str, limit: int = 20, *, partial: bool = True
) -> list[SymbolLocation]:
    """Definitions for ``name``: a name, a dotted path (``Greeter.greet``), a SCIP symbol.

    Exact matches first, then (with ``partial``) the ranked partial ones; nothing at all when
    nothing matches exactly (see the module docstring).
    """
    name = clean_query(name)
    table = _open(generation)
    try:
        exact = _resolve(table, name, generation)
        if not exact:
            return []
        found = [_definition(r) for _, r in _exact_order(exact, name)][:limit]
        if partial and len(found) < limit:
            ranked = rank(table, name, limit + len(exact))
            ids = [r.definition_id for r in ranked if r.definition_id not in exact]
            records = table.records(ids)
            found += [_definition(records[i], "partial") for i in ids][: limit - len(found)]
        return found
    finally:
        table.close()


def suggest_names(generation: Path, text: str, limit: int = 5) -> list[str]:
    """Names of definitions that ``text`` perhaps meant ("did you mean"), best first.

    For ``Owner.member`` where ``member`` exists under other owners, those (``Flask.url_for``,
    ``url_for``); then names close in spelling (difflib's ratio, case-insensitive); then names
    sharing word parts with ``text`` in the symbol signal's ranking order.
    """
    wanted = _normal(clean_query(text).strip())
    last = wanted.rsplit(".", 1)[-1]
    if limit < 1 or not last:
        return []
    table = _open(generation)
    try:
        found: dict[str, None] = {}
        if "." in wanted:
            same = table.records([i for i, *_ in table.exact([last.lower()])])
            for _, record in _exact_order(same, last):
                found[inner_name(record.symbol) or record.name] = None
        spellings: dict[str, tuple[int, str]] = {}
        for name, count in table.names().items():
            lower = name.lower()
            if abs(len(lower) - len(last)) <= max(2, len(last) // 2):
                best = spellings.get(lower)
                if best is None or count > best[0]:
                    spellings[lower] = (count, name)
        cutoff = SUGGESTION_CUTOFF
        for close in difflib.get_close_matches(last.lower(), spellings, limit * 2, cutoff):
            found[spellings[close][1]] = None
        ranked = rank(table, text, limit * 2)
        records = table.records([r.definition_id for r in ranked])
        for item in ranked:
            found[records[item.definition_id].name] = None
    finally:
        table.close()
    found.pop(text.strip(), None)
    return list(found)[:limit]


def _exact_order(found: Mapping[int, SymbolRecord], text: str) -> list[tuple[int, SymbolRecord]]:
    """The whole qualified name first, then code before tests, used before unused, by place."""
    whole = _normal(text.strip())
    return sorted(
        found.items(),
        key=lambda item: (
            _normal(item[1].readable) != whole,
            path_prior(item[1].path, DEFAULT_RANKING)[1] == "test",
            -item[1].references,
            item[1].path,
            item[1].name_line,
        ),
    )


def _normal(text: str) -> str:
    """Every separator a ``.``, case kept: the form dotted names are compared in."""
    return text.replace("::", ".").replace("/", ".").replace("#", ".")


def _scip_symbol(text: str) -> bool:
    """True for a whole SCIP symbol (``scip-python python toy 0.1 `toy.greeter`/greet().``)."""
    if " " not in text.strip():
        return False
    try:
        parse_symbol(text.strip())
    except ScipError:
        return False
    return True


def _resolve(table: SymbolTable, text: str, generation: Path) -> dict[int, SymbolRecord]:
    """The definitions ``text`` names exactly: a SCIP symbol, a dotted path or a name."""
    text = text.strip()
    if _scip_symbol(text):
        found = table.with_symbol(text)
        if found:
            return found
    wanted = _normal(text)
    if not wanted or any(c.isspace() for c in wanted):
        return {}
    last = wanted.rsplit(".", 1)[-1]
    records = table.records([i for i, *_ in table.exact([last.lower()])])
    found = {
        i: r
        for i, r in records.items()
        if r.name == last
        and (
            "." not in wanted
            or _normal(r.readable) == wanted
            or _normal(r.readable).endswith("." + wanted)
        )
    }
    if not found and "." in wanted:
        found = inherited(table, generation, wanted)
    return found


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
        targets = _resolve(table, symbol_or_name, generation)
        indexed = [r for r in targets.values() if r.source != TREE_SITTER]
        references = table.references([r.symbol for r in indexed])
    finally:
        table.close()
    definitions = [_definition(r) for _, r in _exact_order(targets, symbol_or_name)]
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
        indexed=True,
        source=target.source,
        symbol_name=inner_name(target.symbol) or target.name,
        scip_symbol=target.symbol,
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
                    indexed=False,
                    source=TEXT_SOURCE,
                    match="partial",
                    symbol_name=label or next(n for n in names if n in text),
                )
            )
    return found
