"""Definitions and references for engine/context, from one generation's symbol table.

``SymbolResolver`` implements engine/context's ``DefinitionResolver`` (and the ``warning`` and
``close`` of ``IndexResolver``) over this signal's table, which the engine may not import;
the composition root hands it to ``engine.context.assembly.context_for``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from engine.errors import EngineError

if TYPE_CHECKING:
    from engine.context.expansion import DefinitionSite, ReferenceSite
    from engine.index.opening import OpenIndex
    from signals.symbol.table import SymbolTable


class SymbolResolver:
    """Definitions and references from one generation's symbol table.

    Without a table (the symbol signal is off) every lookup answers nothing and ``warning``
    says why, so the context still has its primary blocks.
    """

    def __init__(self, opened: OpenIndex) -> None:
        from engine.types import SYMBOL
        from signals.symbol.table import SymbolTable

        self._opened = opened
        self._table: SymbolTable | None = None
        self._imports: dict[str, Mapping[str, str]] = {}
        self.warning = ""
        try:
            self._table = SymbolTable.open(opened.generation / SYMBOL)
        except EngineError as exc:
            self.warning = f"no definitions added: {exc}"

    def close(self) -> None:
        if self._table is not None:
            self._table.close()

    def definitions_named(self, names: Collection[str]) -> Mapping[str, Sequence[DefinitionSite]]:
        from engine.context.expansion import DefinitionSite
        from signals.symbol.names import inner_name
        from signals.symbol.table import TREE_SITTER

        if self._table is None or not names:
            return {}
        wanted = set(names)
        ids = [i for i, *_ in self._table.exact(sorted({n.lower() for n in wanted}))]
        found: dict[str, list[DefinitionSite]] = {}
        for record in self._table.records(ids).values():
            if record.name not in wanted:
                continue  # the table matches names case-insensitively; code does not
            found.setdefault(record.name, []).append(
                DefinitionSite(
                    key=record.symbol,
                    name=record.name,
                    symbol=record.readable,
                    kind=record.kind,
                    path=record.path,
                    start_line=record.start_line,
                    end_line=record.end_line,
                    chunk_id=record.chunk_id,
                    indexed=record.source != TREE_SITTER,
                    symbol_name=inner_name(record.symbol) or record.name,
                )
            )
        return found

    def references(self, site: DefinitionSite) -> Sequence[ReferenceSite]:
        from engine.context.expansion import ReferenceSite
        from signals.symbol.lookup import find_references

        if self._table is None:
            return []
        store = self._opened.store
        if site.indexed:
            records = self._table.references([site.key])
            chunks = store.chunks(sorted({r.chunk_id for r in records if r.chunk_id is not None}))
            found: list[ReferenceSite] = []
            for r in records:
                chunk = chunks.get(r.chunk_id) if r.chunk_id is not None else None
                found.append(
                    ReferenceSite(
                        r.path,
                        r.line,
                        chunk.start_line if chunk else r.line,
                        chunk.end_line if chunk else r.line,
                        chunk.qualified_name if chunk else "",
                        exact=True,
                    )
                )
            return found
        # No index records this definition's uses: lookup matches its name in every chunk.
        return [
            ReferenceSite(
                loc.path, loc.line, loc.start_line, loc.end_line, loc.enclosing, loc.indexed
            )
            for loc in find_references(self._opened.generation, store, site.symbol, limit=500)
            if loc.role == "reference"
        ]

    def module_of(self, path: str) -> str:
        from engine.qualified import module_name

        return module_name(path, self._opened.store.package_dirs())

    def imports_of(self, path: str) -> Mapping[str, str]:
        """The file's imports (signals/symbol/imports.py), read from its stored chunks."""
        from signals.symbol.imports import python_imports

        found = self._imports.get(path)
        if found is None:
            text = "\n".join(c.text for c in self._opened.store.chunks_in_file(path))
            found = self._imports[path] = python_imports(text, path, self.module_of(path))
        return found
