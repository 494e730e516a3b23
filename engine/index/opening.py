"""Open a repository's published generation for searching: store, signals, warnings."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import (
    EngineError,
    IndexBusy,
    IndexCorrupt,
    IndexIncompatible,
    RepoNotFound,
    UsageError,
)
from engine.index.generations import POINTER, current_generation, writer_busy
from engine.index.home import Home, RepoEntry
from engine.index.manifest import Manifest, read_manifest
from engine.index.store import STORE_FILE, ChunkStore
from engine.search.freshness import FileView
from engine.search.searcher import Searcher
from engine.signal import OpenOptions, Signal, SignalPlugin

OPEN_ATTEMPTS = 3  # a retry happens only when a writer published during the open

# Builds the searcher's view of the files on disk for a generation being opened
# (engine/indexing/freshness.py's ``DiskFiles.of``, which this layer cannot import).
FilesFactory = Callable[[RepoEntry, ChunkStore, Manifest], FileView]


@dataclass
class OpenIndex:
    entry: RepoEntry
    generation: Path
    manifest: Manifest
    store: ChunkStore
    searcher: Searcher
    warnings: list[str] = field(default_factory=list)

    def close(self) -> None:
        self.searcher.close()
        self.store.close()


def rebuild_command(root: Path, slug: str) -> str:
    """The command that rebuilds the index of ``slug`` from nothing but the files on disk."""
    # --full: an update trusts the previous generation's store and signals, and keeps
    # whatever damage they hold.
    return f"engine index {shlex.quote(str(root))} --name {slug} --full"


def rebuild_hint(entry: RepoEntry) -> str:
    """The command that rebuilds a damaged index of ``entry``, as the end of a message."""
    return f"run {rebuild_command(entry.root, entry.slug)} to rebuild it"


def load_manifest(entry: RepoEntry) -> tuple[Path, Manifest]:
    """The published generation of ``entry`` and its manifest; errors name the fix."""
    try:
        generation = current_generation(entry.directory)
        if generation is None:
            if writer_busy(entry.directory):
                raise IndexBusy(
                    f"{entry.slug} is being indexed for the first time and answers once that "
                    f"is done — engine status {entry.slug} shows how far it is"
                )
            raise RepoNotFound(
                f"{entry.slug} is registered but has no finished index yet — run engine "
                f"reindex {entry.slug}"
            )
        return generation, read_manifest(generation)
    except IndexIncompatible as exc:
        raise IndexIncompatible(
            f"the index of {entry.slug}: {exc} — {rebuild_hint(entry)}"
        ) from None
    except IndexCorrupt as exc:
        raise IndexCorrupt(
            f"the index of {entry.slug} is damaged: {exc} — {rebuild_hint(entry)}"
        ) from None


def open_index(
    home: Home,
    slug: str,
    plugins: Mapping[str, SignalPlugin],
    options: OpenOptions,
    *,
    only: Sequence[str] | None = None,
    weights: Mapping[str, float] | None = None,
    k: int | None = None,
    files: FilesFactory | None = None,
) -> OpenIndex:
    """Open the published generation of ``slug`` with every ready signal (or ``only`` those).

    A signal that is not ready or cannot open is left out and named in a warning; the others
    still answer. With ``files``, every search checks its results against the files on disk
    (engine/search/freshness.py); the CLI and the server pass it, evaluation does not.
    """
    unknown = [name for name in only or () if name not in plugins]
    if unknown:
        raise UsageError(
            f"unknown signal(s) {', '.join(unknown)} — choose from {', '.join(plugins)}"
        )
    entry = home.get(slug)
    # A reader that stalls between reading the pointer and opening the files can find its
    # generation collected by writers that published meanwhile: that is not damage, so it
    # opens the newer generation instead of reporting one.
    for attempt in range(1, OPEN_ATTEMPTS + 1):
        pointer = _pointer(entry)
        try:
            opened = _open_published(entry, plugins, options, only, weights, k, files)
        except IndexCorrupt:
            if attempt == OPEN_ATTEMPTS or _pointer(entry) == pointer:
                raise
            continue
        if opened.warnings and attempt < OPEN_ATTEMPTS and _pointer(entry) != pointer:
            opened.close()
            continue
        return opened
    raise AssertionError("unreachable: the last attempt returns or raises")


def _pointer(entry: RepoEntry) -> bytes:
    try:
        return (entry.directory / POINTER).read_bytes()
    except OSError:  # gone, or a folder in its place: current_generation reports which
        return b""


def _open_published(
    entry: RepoEntry,
    plugins: Mapping[str, SignalPlugin],
    options: OpenOptions,
    only: Sequence[str] | None,
    weights: Mapping[str, float] | None,
    k: int | None,
    files: FilesFactory | None = None,
) -> OpenIndex:
    slug = entry.slug
    generation, manifest = load_manifest(entry)
    try:
        store = ChunkStore.open_readonly(generation / STORE_FILE)
    except IndexCorrupt as exc:
        raise IndexCorrupt(f"{exc} — {rebuild_hint(entry)}") from None
    signals: dict[str, Signal] = {}
    warnings: list[str] = []
    for name, plugin in plugins.items():
        if only is not None and name not in only:
            continue
        state = manifest.signal(name)
        if not state.ready:
            why = state.message or "not built"
            warnings.append(
                f"the {name} signal is off for {slug} ({why}) — run engine reindex {slug}"
            )
            continue
        try:
            signals[name] = plugin.open(generation / name, state.meta, options)
        except EngineError as exc:
            warnings.append(f"the {name} signal is off: {exc} — {rebuild_hint(entry)}")
        except Exception as exc:  # a backend's own error: keep the other signals answering
            warnings.append(
                f"the {name} signal is off: {type(exc).__name__}: {exc} — {rebuild_hint(entry)}"
            )
    if not signals:
        store.close()
        if len(warnings) == 1:  # the one signal asked for (``only``): its warning has the fix
            raise IndexCorrupt(warnings[0])
        raise IndexCorrupt(
            f"no signal of {slug} can answer ({'; '.join(warnings)}) — {rebuild_hint(entry)}"
        )
    view = files(entry, store, manifest) if files is not None else None
    searcher = Searcher(slug, store, signals, weights=weights, k=k, warnings=warnings, files=view)
    return OpenIndex(entry, generation, manifest, store, searcher, warnings)
