"""Whether a published generation is still what was published: its chunk store against what
the manifest recorded, each signal's folder through the signal's own ``check``.

A published generation is never written again (engine/index/generations.py), so a
difference is damage or a hand edit. ``engine status`` reports it with the fix; ``engine
reindex`` repairs it: a changed store is rebuilt from the files, a damaged signal from the
store. Both ask only this module, so what status calls damaged is what reindex repairs.
It is cheap enough for every run: a stat, a 100-byte header and two counts for the store,
and the signals' checks, which read headers and load no index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from engine.errors import EngineError
from engine.index.manifest import Manifest
from engine.index.store import ChunkStore
from engine.signal import SignalPlugin

_SQLITE_HEADER_BYTES = 100
_CHANGE_COUNTER = slice(24, 28)  # SQLite's file change counter, big-endian


def store_stamp(path: Path) -> str:
    """What identifies a closed chunk store's bytes without reading them: its size, its mtime
    and SQLite's file change counter, which every write transaction bumps in the
    rollback-journal modes (the store's, and the sqlite3 shell's default). A WAL-mode edit
    leaves the counter but not the size or mtime once it is checkpointed into the file."""
    with path.open("rb") as handle:
        header = handle.read(_SQLITE_HEADER_BYTES)
        info = path.stat()
    counter = int.from_bytes(header[_CHANGE_COUNTER], "big") if len(header) >= 28 else -1
    return f"{info.st_size}:{info.st_mtime_ns}:{counter}"


def store_change(store: ChunkStore, manifest: Manifest) -> str:
    """Why ``store`` (a published generation's, open read-only) is not the store its manifest
    describes; "" when nothing says so.

    The stamp catches any write since publishing, rows edited included, which no count shows;
    the counts stand in for it on an index from before the stamp, and against an edit that
    restored the file's mtime.
    """
    try:
        stamp = store_stamp(store.path)
        files, chunks = store.file_count(), store.chunk_count()
    except OSError as exc:
        return f"it is unreadable ({exc.strerror or exc})"
    except sqlite3.DatabaseError as exc:
        return f"it is unreadable ({exc})"
    if manifest.store_stamp and stamp != manifest.store_stamp:
        return "it was written after the index was published (rows edited or deleted)"
    if (files, chunks) != (manifest.files, manifest.chunks):
        return (
            f"it holds {files} files and {chunks} chunks where the index recorded "
            f"{manifest.files} and {manifest.chunks} (rows deleted or added)"
        )
    return ""


def signal_damage(
    generation: Path, manifest: Manifest, plugins: Mapping[str, SignalPlugin]
) -> dict[str, str]:
    """Why each signal the manifest calls ready could not open, by name: only those that fail
    their plugin's ``check`` (a plugin without one is taken as whole)."""
    found: dict[str, str] = {}
    for name, plugin in plugins.items():
        state = manifest.signal(name)
        if not state.ready or plugin.check is None:
            continue
        try:
            plugin.check(generation / name, state.meta)
        except EngineError as exc:
            found[name] = str(exc)
        except Exception as exc:  # a backend's own error: the signal is as unusable
            found[name] = f"{type(exc).__name__}: {exc}"
    return found
