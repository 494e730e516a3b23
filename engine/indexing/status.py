"""The status of an indexed repository: contents, signals and staleness, for CLI and agents."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import IndexCorrupt, IndexIncompatible
from engine.index.generations import current_generation, writer_busy
from engine.index.health import signal_damage, store_change
from engine.index.home import Home
from engine.index.opening import load_manifest, rebuild_hint
from engine.index.store import STORE_FILE, ChunkStore
from engine.indexing.build_progress import read_progress
from engine.indexing.freshness import staleness
from engine.indexing.walk import MAX_FILE_BYTES
from engine.signal import SignalPlugin


def _nothing_published(repo_dir: Path) -> bool:
    try:
        return current_generation(repo_dir) is None
    except (IndexCorrupt, IndexIncompatible):
        return False  # a damaged pointer: load_manifest names the fix


def repo_status(
    home: Home, slug: str, plugins: Mapping[str, SignalPlugin] | None = None
) -> dict[str, Any]:
    """What the index of ``slug`` holds and how fresh it is, as a JSON-ready object.

    The counts are the store's own, not the manifest's, so rows deleted behind the index's
    back are not counted. ``damaged`` lists what ``engine.index.health`` finds (a store
    changed since publishing, a signal whose files fail its check) and ``fix`` names the
    command that repairs it: ``engine reindex``, whose health check is the same one.
    Signals are checked only when their ``plugins`` are given.
    """
    entry = home.get(slug)
    if writer_busy(entry.directory) and _nothing_published(entry.directory):
        # A first index still being built: nothing to count yet, only how far it got.
        return {
            "repo": slug,
            "root": str(entry.root),
            "generation": None,
            "building": read_progress(entry.directory, None) or {},
            "firstBuild": True,
        }
    generation, manifest = load_manifest(entry)
    try:
        store = ChunkStore.open_readonly(generation / STORE_FILE)
    except IndexCorrupt as exc:
        raise IndexCorrupt(f"{exc} — {rebuild_hint(entry)}") from None
    try:
        damaged: list[str] = []
        changed = store_change(store, manifest)
        if changed:
            damaged.append(f"the chunk store: {changed}")
        broken = signal_damage(generation, manifest, plugins) if plugins else {}
        damaged += [f"the {name} signal: {why}" for name, why in broken.items()]
        data: dict[str, Any] = {
            "repo": slug,
            "root": str(entry.root),
            "generation": generation.name,
            "builtAt": manifest.built_at or None,
            "sourceCommit": manifest.source_commit or None,
            "files": store.file_count(),
            "chunks": store.chunk_count(),
            "languages": store.language_counts(),
            "skipped": dict(manifest.skipped),
            "signals": {
                name: {
                    "ready": state.ready and name not in broken,
                    "synced": state.synced,
                    "message": f"damaged: {broken[name]}" if name in broken else state.message,
                    **({"damaged": True} if name in broken else {}),
                    **{
                        k: v
                        for k, v in state.meta.items()
                        if k in ("coverage", "sources", "tier", "vectors", "tiers", "embedder")
                    },
                }
                for name, state in manifest.signals.items()
            },
        }
        building = read_progress(entry.directory, generation)
        if building is not None:  # a slow phase (embedding) is running, or was killed
            data["building"] = building
        if changed:
            data["storeDamaged"] = changed
        if damaged:
            data["damaged"] = damaged
            data["fix"] = f"engine reindex {slug}"
        if entry.root.is_dir():
            stale = staleness(
                entry.root,
                store.files(),
                store.unindexed(),
                max_file_bytes=MAX_FILE_BYTES,
                scanned_at_ns=manifest.scanned_at_ns,
            )
            data["changedSinceBuild"] = {
                "added": stale.added,
                "modified": stale.modified,
                "removed": stale.removed,
                "total": stale.changed,
            }
        else:
            data["changedSinceBuild"] = None
            data["warning"] = f"{entry.root} is gone"
    finally:
        store.close()
    return data
