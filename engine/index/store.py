"""The chunk store: one SQLite file per index generation holding files, chunks and definitions.

A published generation is immutable, so readers open it read-only with ``immutable=1`` (no
locks, no journal). A writer works on its own copy inside the generation being built.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from engine.errors import IndexCorrupt
from engine.qualified import package_dirs
from engine.types import Chunk, ChunkDraft, Definition

STORE_FILE = "chunks.sqlite"
# SQLite's page cache for a reader, in KiB (its default is 2,000 per connection). A published
# store is immutable and its pages stay in the OS's page cache, so re-reading one costs a
# pread; with the default a reader kept a heap copy of every page it had read: 7.6 MiB of
# SQLite memory after 60 searches of 7 repositories in one process (4.5 MiB of it the chunk
# stores', which hold result texts), 2.3 MiB with this, no slower (BENCHMARKS.md, cluster
# search: a shard actor of 7 repositories 73.3 -> 68.4 MiB beyond its indexes).
READ_CACHE_KIB = 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    language TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
-- Files the walk listed but the reader or chunker refused (binary content, minified, ...),
-- so that an unchanged one is not read again and does not count as new on disk.
CREATE TABLE IF NOT EXISTS unindexed (
    path TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    language TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    parent TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL,
    signature TEXT NOT NULL,
    docstring TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE TABLE IF NOT EXISTS definitions (
    path TEXT NOT NULL,
    language TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    name_line INTEGER NOT NULL,
    name_start_col INTEGER NOT NULL,
    name_end_col INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS definitions_path ON definitions(path);
"""

_CHUNK_COLUMNS = (
    "id, path, language, kind, name, qualified_name, parent, start_line, end_line, text, "
    "signature, docstring"
)


@dataclass(frozen=True, slots=True)
class FileRecord:
    path: str
    content_hash: str
    language: str
    size_bytes: int
    mtime_ns: int


# A ChunkDraft's and a Definition's fields as plain tuples, in declaration order: the form in
# which chunks travel from the chunking worker processes into SQLite. A tuple pickles about
# ten times faster than a frozen dataclass, and executemany takes it as it is.
ChunkRow = tuple[str, str, str, str, str, str, int, int, str, str, str]
DefinitionRow = tuple[str, str, str, str, str, int, int, int, int, int]


def chunk_row(d: ChunkDraft) -> ChunkRow:
    return (
        d.path,
        d.language,
        d.kind,
        d.name,
        d.qualified_name,
        d.parent,
        d.start_line,
        d.end_line,
        d.text,
        d.signature,
        d.docstring,
    )


def definition_row(d: Definition) -> DefinitionRow:
    return (
        d.path,
        d.language,
        d.kind,
        d.name,
        d.qualified_name,
        d.name_line,
        d.name_start_col,
        d.name_end_col,
        d.start_line,
        d.end_line,
    )


@dataclass(frozen=True, slots=True)
class FileRows:
    """One chunked file as the store takes it."""

    record: FileRecord
    chunks: Sequence[ChunkRow]
    definitions: Sequence[DefinitionRow]


def _chunk(row: tuple[object, ...]) -> Chunk:
    return Chunk(*row)  # type: ignore[arg-type]


class ChunkStore:
    """Reads (and, when opened writable, updates) one generation's chunk store."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self._packages: frozenset[str] | None = None

    @classmethod
    def open_readonly(cls, path: Path) -> ChunkStore:
        if not path.is_file():
            raise IndexCorrupt(f"chunk store {path} is missing")
        uri = f"file:{quote(str(path))}?mode=ro&immutable=1"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            conn.execute(f"PRAGMA cache_size=-{READ_CACHE_KIB}")
            conn.execute("SELECT count(*) FROM files").fetchone()
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(f"chunk store {path} is unreadable ({exc})") from exc
        return cls(conn, path)

    @classmethod
    def open_writable(cls, path: Path) -> ChunkStore:
        try:
            conn = sqlite3.connect(str(path), check_same_thread=False)
            # A generation being built is never read until it is published, and a crash
            # discards it whole; so no journal or per-commit fsync: the publisher fsyncs.
            conn.execute("PRAGMA journal_mode=MEMORY")
            conn.execute("PRAGMA synchronous=OFF")
            conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(f"chunk store {path} is unreadable ({exc})") from exc
        return cls(conn, path)

    def close(self) -> None:
        self._conn.close()

    # --- reading -------------------------------------------------------------------------

    def files(self) -> dict[str, FileRecord]:
        rows = self._conn.execute(
            "SELECT path, content_hash, language, size_bytes, mtime_ns FROM files"
        )
        return {r[0]: FileRecord(*r) for r in rows}

    def file_record(self, path: str) -> FileRecord | None:
        """One file's record (a search checking its result files against the disk)."""
        row = self._conn.execute(
            "SELECT path, content_hash, language, size_bytes, mtime_ns FROM files WHERE path = ?",
            (path,),
        ).fetchone()
        return FileRecord(*row) if row is not None else None

    def unindexed(self) -> dict[str, tuple[str, int, int]]:
        """Refused files: path -> (reason, size_bytes, mtime_ns)."""
        rows = self._conn.execute("SELECT path, reason, size_bytes, mtime_ns FROM unindexed")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def file_count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM files").fetchone()[0])

    def chunk_count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def language_counts(self) -> dict[str, int]:
        rows = self._conn.execute(
            "SELECT language, count(*) FROM files GROUP BY language ORDER BY count(*) DESC"
        )
        return {r[0]: int(r[1]) for r in rows}

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]:
        found: dict[int, Chunk] = {}
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            marks = ",".join("?" * len(batch))
            rows = self._conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE id IN ({marks})", batch
            )
            for row in rows:
                found[row[0]] = _chunk(row)
        return found

    def chunks_in_file(self, path: str) -> list[Chunk]:
        rows = self._conn.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE path = ? ORDER BY start_line", (path,)
        )
        return [_chunk(r) for r in rows]

    def chunk_ids_in_files(self, paths: Iterable[str]) -> list[int]:
        ids: list[int] = []
        for path in paths:
            ids.extend(
                r[0] for r in self._conn.execute("SELECT id FROM chunks WHERE path = ?", (path,))
            )
        return ids

    def iter_chunks(self) -> Iterator[Chunk]:
        cursor = self._conn.execute(f"SELECT {_CHUNK_COLUMNS} FROM chunks ORDER BY id")
        for row in cursor:
            yield _chunk(row)

    def package_dirs(self) -> frozenset[str]:
        """Folders holding an indexed ``__init__.py``: the Python packages, for
        engine.qualified (the store is immutable once published, so this is read once)."""
        if self._packages is None:
            # "_" is LIKE's one-character wildcard: package_dirs keeps the real matches.
            rows = self._conn.execute("SELECT path FROM files WHERE path LIKE '%__init__.py%'")
            self._packages = package_dirs(r[0] for r in rows)
        return self._packages

    def definitions_in_file(self, path: str) -> list[Definition]:
        """The chunker's definitions of one file (whole ranges), by start line, outer first."""
        rows = self._conn.execute(
            "SELECT path, language, kind, name, qualified_name, name_line, name_start_col, "
            "name_end_col, start_line, end_line FROM definitions WHERE path = ? "
            "ORDER BY start_line, end_line DESC, name_line",
            (path,),
        )
        return [Definition(*r) for r in rows]

    def definitions(self) -> list[Definition]:
        rows = self._conn.execute(
            "SELECT path, language, kind, name, qualified_name, name_line, name_start_col, "
            "name_end_col, start_line, end_line FROM definitions ORDER BY path, name_line"
        )
        return [Definition(*r) for r in rows]

    # --- writing (only on a generation being built) --------------------------------------

    def remove_files(self, paths: Iterable[str]) -> list[int]:
        """Delete files with their chunks and definitions; return the removed chunk ids."""
        removed: list[int] = []
        with self._conn:
            for path in paths:
                removed.extend(
                    r[0]
                    for r in self._conn.execute("SELECT id FROM chunks WHERE path = ?", (path,))
                )
                self._conn.execute("DELETE FROM chunks WHERE path = ?", (path,))
                self._conn.execute("DELETE FROM definitions WHERE path = ?", (path,))
                self._conn.execute("DELETE FROM files WHERE path = ?", (path,))
        return removed

    def add_files(self, files: Sequence[FileRows]) -> list[Chunk]:
        """Insert (or replace) files' records, chunks and definitions in one transaction;
        return the chunks in insertion order.

        Chunk ids are the ones AUTOINCREMENT would give row by row: consecutive, starting one
        past the largest id the table ever held. Giving them explicitly lets one executemany
        insert every chunk.
        """
        rows: list[tuple[int, *ChunkRow]] = []
        with self._conn:
            next_id = self._next_chunk_id()
            for file in files:
                rows += ((next_id + i, *row) for i, row in enumerate(file.chunks))
                next_id += len(file.chunks)
            self._conn.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                [
                    (r.path, r.content_hash, r.language, r.size_bytes, r.mtime_ns)
                    for r in (f.record for f in files)
                ],
            )
            self._conn.executemany(
                f"INSERT INTO chunks ({_CHUNK_COLUMNS}) VALUES ({', '.join('?' * 12)})", rows
            )
            self._conn.executemany(
                "INSERT INTO definitions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [row for f in files for row in f.definitions],
            )
        return [_chunk(row) for row in rows]

    def _next_chunk_id(self) -> int:
        row = self._conn.execute(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0), "
            "coalesce((SELECT max(id) FROM chunks), 0))"
        ).fetchone()
        return int(row[0]) + 1

    def set_unindexed(self, refused: dict[str, tuple[str, int, int]]) -> None:
        """Replace the list of refused files."""
        with self._conn:
            self._conn.execute("DELETE FROM unindexed")
            self._conn.executemany(
                "INSERT INTO unindexed VALUES (?, ?, ?, ?)",
                [(path, *info) for path, info in refused.items()],
            )

    def touch_file(self, path: str, size_bytes: int, mtime_ns: int) -> None:
        """Record new stat data for a file whose content did not change."""
        with self._conn:
            self._conn.execute(
                "UPDATE files SET size_bytes = ?, mtime_ns = ? WHERE path = ?",
                (size_bytes, mtime_ns, path),
            )
