"""The on-disk symbol table: one SQLite file per generation, read-only once published.

SQLite because a cold CLI query must open it in about a millisecond and touch only what the
query needs: exact and prefix lookups use the index on the lower-cased name, each query
part reads one postings row (its definition ids as a packed int32 blob), and the per-
definition numbers ranking needs (name weight, part count, prior) are three packed arrays
read once at open. Definition ids are dense (0..N-1) so they index those arrays.

Tables: ``defs`` (one row per definition: SCIP symbol, readable name, name, its parts, kind,
path, 1-based lines, enclosing chunk id, reference count, source), ``postings`` (part ->
definition ids, for name parts and context parts), ``arrays``, ``refs`` (every reference to a
defined symbol: path, 1-based line, enclosing chunk id) and ``meta`` (format version, count).
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from engine.errors import IndexCorrupt, IndexIncompatible
from signals.symbol.names import context_parts, name_parts, qualified_key
from signals.symbol.scoring import idf, prior

TABLE_FILE = "symbols.sqlite"
# SQLite's page cache for a reader, in KiB (default 2,000): the table is immutable once
# published and its pages stay in the OS's page cache; as engine/index/store.py's
# READ_CACHE_KIB, which has the measurement.
READ_CACHE_KIB = 64
TABLE_VERSION = 2  # 2: readable names in engine.qualified's scheme
NAME_FIELD = "n"  # postings of the definitions' own name parts
CONTEXT_FIELD = "c"  # postings of their context parts (enclosing names, path)

TREE_SITTER = "tree-sitter"  # the ``source`` of rows from the engine's own index


@dataclass(frozen=True, slots=True)
class SymbolRecord:
    symbol: str  # the SCIP symbol string
    readable: str  # e.g. "toy.greeter.Greeter.greet" (see names.py for the engine's rule)
    name: str  # the definition's own name, e.g. "greet"
    kind: str  # "function", "method", "class", ... or a SCIP descriptor kind ("type", "term")
    path: str  # repository-relative, '/' separated
    start_line: int  # 1-based inclusive: the whole definition when the index knows it
    end_line: int  # 1-based inclusive
    name_line: int  # 1-based line of the name
    chunk_id: int | None  # the smallest stored chunk containing name_line; None: no chunk
    references: int  # references to this symbol in the indexes (0 when an index has none)
    source: str  # the source that owns the file: "scip-python", "tree-sitter", ...


@dataclass(frozen=True, slots=True)
class ReferenceRecord:
    symbol: str
    path: str
    line: int  # 1-based
    chunk_id: int | None


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE defs (
    id INTEGER PRIMARY KEY,
    symbol TEXT NOT NULL,
    readable TEXT NOT NULL,
    name TEXT NOT NULL,
    name_lower TEXT NOT NULL,
    parts TEXT NOT NULL,  -- the name's identifier parts, space-separated, for people and tools
    qual_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    name_line INTEGER NOT NULL,
    chunk_id INTEGER,
    refs INTEGER NOT NULL,
    source TEXT NOT NULL
);
CREATE TABLE postings (
    part TEXT NOT NULL, field TEXT NOT NULL, df INTEGER NOT NULL, ids BLOB NOT NULL,
    PRIMARY KEY (part, field)
) WITHOUT ROWID;
CREATE TABLE arrays (name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE refs (
    symbol TEXT NOT NULL, path TEXT NOT NULL, line INTEGER NOT NULL, chunk_id INTEGER
);
"""
# Indexes are made after the bulk insert, which is faster than keeping them up to date.
_INDEXES = """
CREATE INDEX defs_name ON defs(name_lower);
CREATE INDEX defs_qual ON defs(qual_key);
CREATE INDEX defs_symbol ON defs(symbol);
CREATE INDEX refs_symbol ON refs(symbol);
"""
_DEF_COLUMNS = (
    "id, symbol, readable, name, kind, path, start_line, end_line, name_line, chunk_id, refs, "
    "source"
)
_BIG_ENDIAN = sys.byteorder == "big"  # arrays are stored little-endian


def _pack(values: array[Any]) -> bytes:
    if _BIG_ENDIAN:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _unpack(typecode: str, data: bytes) -> array[Any]:
    values: array[Any] = array(typecode)
    values.frombytes(data)
    if _BIG_ENDIAN:
        values.byteswap()
    return values


def write_table(
    path: Path, records: Sequence[SymbolRecord], references: Iterable[ReferenceRecord]
) -> None:
    """Write a new table at ``path`` (replacing any file there)."""
    path.unlink(missing_ok=True)
    count = len(records)
    name_ids: dict[str, list[int]] = defaultdict(list)
    context_ids: dict[str, list[int]] = defaultdict(list)
    parts_of: list[tuple[str, ...]] = []
    for i, record in enumerate(records):
        own = name_parts(record.name)
        parts_of.append(own)
        for part in own:
            name_ids[part].append(i)
        for part in context_parts(record.readable, record.name, record.path):
            context_ids[part].append(i)
    name_weight = array("f", (sum(idf(count, len(name_ids[p])) for p in own) for own in parts_of))
    part_counts = array("H", (min(len(own), 65535) for own in parts_of))
    most = max((r.references for r in records), default=0)
    priors = array("f", (prior(r.kind, r.references, most) for r in records))

    conn = sqlite3.connect(str(path))
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.executescript(_SCHEMA)
        with conn:
            conn.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [("version", str(TABLE_VERSION)), ("count", str(count))],
            )
            conn.executemany(
                "INSERT INTO defs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        i,
                        r.symbol,
                        r.readable,
                        r.name,
                        r.name.lower(),
                        " ".join(parts_of[i]),
                        qualified_key(r.readable),
                        r.kind,
                        r.path,
                        r.start_line,
                        r.end_line,
                        r.name_line,
                        r.chunk_id,
                        r.references,
                        r.source,
                    )
                    for i, r in enumerate(records)
                ),
            )
            for field, postings in ((NAME_FIELD, name_ids), (CONTEXT_FIELD, context_ids)):
                conn.executemany(
                    "INSERT INTO postings VALUES (?, ?, ?, ?)",
                    (
                        (part, field, len(ids), _pack(array("i", ids)))
                        for part, ids in postings.items()
                    ),
                )
            conn.executemany(
                "INSERT INTO arrays VALUES (?, ?)",
                [
                    ("name_weight", _pack(name_weight)),
                    ("part_counts", _pack(part_counts)),
                    ("prior", _pack(priors)),
                ],
            )
            conn.executemany(
                "INSERT INTO refs VALUES (?, ?, ?, ?)",
                ((r.symbol, r.path, r.line, r.chunk_id) for r in references),
            )
            conn.executescript(_INDEXES)
    finally:
        conn.close()


def _record(row: Sequence[Any]) -> tuple[int, SymbolRecord]:
    return int(row[0]), SymbolRecord(*row[1:])


class SymbolTable:
    """Read access to a published symbol table. Safe to share between threads."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self.path = path
        try:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("version") != str(TABLE_VERSION):
                raise IndexIncompatible(
                    f"symbol table {path} has format {meta.get('version')}, this engine reads "
                    f"{TABLE_VERSION}: reindex to rebuild it"
                )
            self.count = int(meta["count"])
            arrays = dict(conn.execute("SELECT name, data FROM arrays").fetchall())
            self.name_weight = _unpack("f", arrays["name_weight"])
            self.part_counts = _unpack("H", arrays["part_counts"])
            self.prior = _unpack("f", arrays["prior"])
        except (sqlite3.DatabaseError, KeyError, ValueError) as err:
            conn.close()
            raise IndexCorrupt(f"symbol table {path} is unreadable ({err}): reindex") from err
        if not len(self.name_weight) == len(self.part_counts) == len(self.prior) == self.count:
            conn.close()
            raise IndexCorrupt(f"symbol table {path} is inconsistent: reindex")

    @classmethod
    def open(cls, directory: Path) -> SymbolTable:
        path = directory / TABLE_FILE
        if not path.is_file():
            raise IndexCorrupt(f"symbol table {path} is missing: reindex to rebuild it")
        uri = f"file:{quote(str(path))}?mode=ro&immutable=1"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            conn.execute(f"PRAGMA cache_size=-{READ_CACHE_KIB}")
        except sqlite3.DatabaseError as err:
            raise IndexCorrupt(f"symbol table {path} is unreadable ({err}): reindex") from err
        return cls(conn, path)

    def close(self) -> None:
        self._conn.close()

    def _all(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def postings(self, parts: Sequence[str]) -> list[tuple[str, str, int, array[int]]]:
        """(part, field, df, ids) for every stored part of ``parts``."""
        found: list[tuple[str, str, int, array[int]]] = []
        for start in range(0, len(parts), 500):
            batch = list(parts[start : start + 500])
            marks = ",".join("?" * len(batch))
            rows = self._all(
                f"SELECT part, field, df, ids FROM postings WHERE part IN ({marks})", batch
            )
            found.extend((str(p), str(f), int(d), _unpack("i", b)) for p, f, d, b in rows)
        return found

    def exact(self, names_lower: Sequence[str]) -> list[tuple[int, str, str, str]]:
        """(id, lower-cased name, qualified key, path) of definitions named in ``names_lower``."""
        found: list[tuple[int, str, str, str]] = []
        for start in range(0, len(names_lower), 500):
            batch = list(names_lower[start : start + 500])
            marks = ",".join("?" * len(batch))
            rows = self._all(
                f"SELECT id, name_lower, qual_key, path FROM defs WHERE name_lower IN ({marks})",
                batch,
            )
            found.extend((int(i), str(n), str(q), str(p)) for i, n, q, p in rows)
        return found

    def prefixed(self, prefix: str, limit: int) -> list[tuple[int, str]]:
        """(id, lower-cased name) of up to ``limit`` definitions whose name extends ``prefix``."""
        rows = self._all(
            "SELECT id, name_lower FROM defs WHERE name_lower > ? AND name_lower < ? "
            "ORDER BY name_lower LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [(int(i), str(n)) for i, n in rows]

    def records(self, ids: Sequence[int]) -> dict[int, SymbolRecord]:
        found: dict[int, SymbolRecord] = {}
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            marks = ",".join("?" * len(batch))
            rows = self._all(f"SELECT {_DEF_COLUMNS} FROM defs WHERE id IN ({marks})", batch)
            found.update(_record(row) for row in rows)
        return found

    def with_symbol(self, symbol: str) -> dict[int, SymbolRecord]:
        rows = self._all(f"SELECT {_DEF_COLUMNS} FROM defs WHERE symbol = ?", (symbol,))
        return dict(_record(row) for row in rows)

    def references(self, symbols: Sequence[str]) -> list[ReferenceRecord]:
        found: list[ReferenceRecord] = []
        for symbol in dict.fromkeys(symbols):
            rows = self._all(
                "SELECT symbol, path, line, chunk_id FROM refs WHERE symbol = ? "
                "ORDER BY path, line",
                (symbol,),
            )
            found.extend(ReferenceRecord(*row) for row in rows)
        return found

    def names(self) -> dict[str, int]:
        """Every definition's own name with how many definitions have it."""
        rows = self._all("SELECT name, count(*) FROM defs GROUP BY name")
        return {str(n): int(c) for n, c in rows}

    def in_file(self, path: str) -> list[SymbolRecord]:
        """The definitions of one file, by start line (a scan: no index on the path)."""
        rows = self._all(
            f"SELECT {_DEF_COLUMNS} FROM defs WHERE path = ? ORDER BY start_line, end_line DESC",
            (path,),
        )
        return [_record(row)[1] for row in rows]

    def records_from(self, source: str) -> list[SymbolRecord]:
        """Every definition the named source provided, in table order."""
        rows = self._all(f"SELECT {_DEF_COLUMNS} FROM defs WHERE source = ? ORDER BY id", (source,))
        return [_record(row)[1] for row in rows]

    def sources(self) -> dict[str, int]:
        """Definitions per source, for tests and diagnostics."""
        rows = self._all("SELECT source, count(*) FROM defs GROUP BY source")
        return {str(s): int(n) for s, n in rows}
