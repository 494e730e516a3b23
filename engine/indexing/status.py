"""The status of an indexed repository: contents, signals and staleness, for CLI and agents."""

from __future__ import annotations

from typing import Any

from engine.errors import IndexCorrupt
from engine.index.home import Home
from engine.index.opening import load_manifest, rebuild_hint
from engine.index.store import STORE_FILE, ChunkStore
from engine.indexing.freshness import staleness
from engine.indexing.walk import MAX_FILE_BYTES


def repo_status(home: Home, slug: str) -> dict[str, Any]:
    """What the index of ``slug`` holds and how fresh it is, as a JSON-ready object."""
    entry = home.get(slug)
    generation, manifest = load_manifest(entry)
    data: dict[str, Any] = {
        "repo": slug,
        "root": str(entry.root),
        "generation": generation.name,
        "builtAt": manifest.built_at or None,
        "sourceCommit": manifest.source_commit or None,
        "files": manifest.files,
        "chunks": manifest.chunks,
        "languages": dict(manifest.languages),
        "skipped": dict(manifest.skipped),
        "signals": {
            name: {
                "ready": state.ready,
                "synced": state.synced,
                "message": state.message,
                **{k: v for k, v in state.meta.items() if k in ("coverage", "sources")},
            }
            for name, state in manifest.signals.items()
        },
    }
    if entry.root.is_dir():
        try:
            store = ChunkStore.open_readonly(generation / STORE_FILE)
        except IndexCorrupt as exc:
            raise IndexCorrupt(f"{exc} — {rebuild_hint(entry)}") from None
        try:
            stale = staleness(
                entry.root,
                store.files(),
                store.unindexed(),
                max_file_bytes=MAX_FILE_BYTES,
                scanned_at_ns=manifest.scanned_at_ns,
            )
        finally:
            store.close()
        data["changedSinceBuild"] = {
            "added": stale.added,
            "modified": stale.modified,
            "removed": stale.removed,
            "total": stale.changed,
        }
    else:
        data["changedSinceBuild"] = None
        data["warning"] = f"{entry.root} is gone"
    return data
