"""The embedding cache: document vectors keyed by (model id, sha256 of the document text).

One SQLite file per model under ``$ENGINE_HOME/cache/``, shared by every repository, so an
unchanged chunk is embedded once: across generations, renames, moves and rebuilt indexes.
Callers write each batch as soon as it is computed and every ``put_many`` commits, so an
interrupted build (Ctrl-C, SIGKILL) loses at most the batch in flight. WAL mode plus a busy
timeout let two indexing processes read and write the same file at once.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from signals.vector.embedder import FloatMatrix

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 60_000
_LOOKUP_BATCH = 500  # stays under SQLite's default limit of host parameters per statement


def cache_path(home: Path, model_id: str) -> Path:
    digest = hashlib.sha256(model_id.encode()).hexdigest()[:16]
    return home / "cache" / f"embeddings-{digest}.sqlite"


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


_DAMAGED = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _set_aside(path: Path) -> None:
    """Rename a damaged cache out of the way (kept for inspection) with its WAL files."""
    path.replace(path.with_name(f"{path.name}.damaged-{int(time.time())}"))
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


class EmbeddingCache:
    """Vectors of one model. Not thread-safe: use one instance per thread."""

    def __init__(self, path: Path, model_id: str, dim: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._dim = dim
        try:
            self._open(path, model_id, dim)
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", None) not in _DAMAGED:
                raise
            self._db.close()
            # A damaged file (the disk's doing: WAL survives crashes of this program) holds
            # nothing that cannot be computed again, and every build would fail on it.
            _set_aside(path)
            self._open(path, model_id, dim)

    def _open(self, path: Path, model_id: str, dim: int) -> None:
        self._db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self._db.execute("PRAGMA journal_mode = WAL")
        # NORMAL in WAL mode can lose the last commits on power loss, never consistency;
        # a lost vector is just computed again.
        self._db.execute("PRAGMA synchronous = NORMAL")
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS vectors"
                " (key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID"
            )
            for name, value in (
                ("schema", str(SCHEMA_VERSION)),
                ("model_id", model_id),
                ("dim", str(dim)),
            ):
                self._db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (name, value))
        stored = dict(self._db.execute("SELECT name, value FROM meta").fetchall())
        if stored != {"schema": str(SCHEMA_VERSION), "model_id": model_id, "dim": str(dim)}:
            self._db.close()
            raise ValueError(f"{path} caches another model or format: {stored}")

    @property
    def dim(self) -> int:
        return self._dim

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys``; rows of the wrong size are treated as absent."""
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _LOOKUP_BATCH):
            part = unique[start : start + _LOOKUP_BATCH]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({marks})", part
            ).fetchall()
            for key, blob in rows:
                if len(blob) == self._dim * 4:
                    found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def present(self, keys: Iterable[bytes]) -> set[bytes]:
        """The keys among ``keys`` that have a vector, without reading the vectors (a cluster
        build asks this of millions of texts at once)."""
        found: set[bytes] = set()
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _LOOKUP_BATCH):
            part = unique[start : start + _LOOKUP_BATCH]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT key FROM vectors WHERE key IN ({marks}) AND length(vector) = ?",
                [*part, self._dim * 4],
            ).fetchall()
            found.update(bytes(key) for (key,) in rows)
        return found

    def put_many(self, keys: Sequence[bytes], vectors: FloatMatrix) -> None:
        """Store and commit; an existing entry for a key is kept (it holds the same vector)."""
        rows = [
            (key, np.ascontiguousarray(vectors[i], dtype=np.float32).tobytes())
            for i, key in enumerate(keys)
        ]
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", rows)

    def count(self) -> int:
        (n,) = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        return int(n)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
