"""The symbol signal at query time: ranked definitions, mapped to the chunks that enclose them.

Several definitions can share a chunk (a class header and its attributes): the chunk keeps the
best one's score and symbol. A definition in a file without a stored chunk becomes a
chunkless hit with its location.
"""

from __future__ import annotations

from pathlib import Path

from engine.types import SYMBOL, Hit, Location, Query
from signals.symbol.ranking import rank
from signals.symbol.table import SymbolTable

_WIDEN = 4  # definitions ranked per wanted hit before mapping them to chunks


class SymbolSignal:
    name = SYMBOL
    warning = ""

    def __init__(self, table: SymbolTable) -> None:
        self.table = table

    @classmethod
    def open(cls, directory: Path) -> SymbolSignal:
        return cls(SymbolTable.open(directory))

    def close(self) -> None:
        self.table.close()

    def search(self, query: Query, limit: int) -> list[Hit]:
        if limit < 1:
            return []
        depth = limit * _WIDEN
        while True:
            ranked = rank(self.table, query.text, depth)
            records = self.table.records([r.definition_id for r in ranked])
            hits: list[Hit] = []
            seen: set[object] = set()
            for item in ranked:
                record = records[item.definition_id]
                key: object
                if record.chunk_id is not None:
                    key = record.chunk_id
                    hit = Hit(record.chunk_id, item.score, record.readable)
                else:
                    location = Location(record.path, record.start_line, record.end_line)
                    key = location
                    hit = Hit(None, item.score, record.readable, location)
                if key in seen:
                    continue
                seen.add(key)
                hits.append(hit)
                if len(hits) == limit:
                    return hits
            if len(ranked) < depth:
                return hits  # every match is in
            depth *= _WIDEN
