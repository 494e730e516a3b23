"""Warm indexes for the agent server: one open generation per repository, swapped on publish.

Opening an index (and, once the vector signal is registered, loading its model) costs far
more than a search, so the server keeps each repository's ``OpenIndex`` between calls. Every
call reads the repository's ``CURRENT`` pointer (one small file) and, when a reindex has
published a newer generation, opens it and retires the old one. A retired index is closed
when the last call still using it finishes, so a swap never pulls files out from under a
search in flight.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engine.errors import RepoNotFound
from engine.index.generations import current_generation
from engine.index.home import Home
from engine.index.opening import FilesFactory, OpenIndex, open_index
from engine.indexing.freshness import DiskFiles
from engine.signal import OpenOptions, SignalPlugin

log = logging.getLogger(__name__)

Opener = Callable[[str], OpenIndex]

WARM_UP_QUERY = "main"  # any text: the first search creates pools and touches every file


@dataclass(eq=False)
class _Slot:
    opened: OpenIndex
    users: int = 0  # calls currently searching this generation
    retired: bool = False  # a newer generation replaced it; close once users reaches 0


class IndexCache:
    """Thread-safe cache of open indexes, keyed by repository slug."""

    def __init__(
        self,
        home: Home,
        plugins: Mapping[str, SignalPlugin],
        *,
        opener: Opener | None = None,
        on_open: Callable[[str], None] | None = None,
        files: FilesFactory | None = DiskFiles.of,
    ) -> None:
        self.home = home
        self._on_open = on_open  # called with the slug when a repository is first opened
        # Every answer is checked against the files on disk (engine/search/freshness.py);
        # None only for tests of generation consistency, which compare with the index alone.
        self._files = files
        self.plugins = plugins  # the registered signals, also for status checks
        self._opener = opener or self._open
        self._lock = threading.Lock()  # guards _slots and every slot's counters
        self._opening: dict[str, threading.Lock] = {}  # one opener per repository at a time
        self._slots: dict[str, _Slot] = {}
        self._closed = False

    def _open(self, slug: str) -> OpenIndex:
        opened = open_index(
            self.home,
            slug,
            self.plugins,
            OpenOptions(home=self.home.root),
            files=self._files,
        )
        try:
            # One search while no other call can see this index: loads models and creates
            # the searcher's thread pool before concurrent calls race to do it.
            opened.searcher.search(WARM_UP_QUERY, limit=1)
        except Exception:
            log.warning("warm-up search of %s failed", slug, exc_info=True)
        return opened

    @contextmanager
    def use(self, slug: str) -> Iterator[OpenIndex]:
        """The repository's published generation, open, for the duration of one call."""
        try:
            entry = self.home.get(slug)
        except RepoNotFound:
            self._retire(slug)  # removed while the server ran
            raise
        slot = self._acquire(slug, current_generation(entry.directory))
        try:
            yield slot.opened
        finally:
            self._release(slot)

    def generation(self, slug: str) -> Path | None:
        """The generation the cache holds open for ``slug`` (None when not loaded)."""
        with self._lock:
            slot = self._slots.get(slug)
            return slot.opened.generation if slot else None

    def _take(self, slug: str, generation: Path | None) -> _Slot | None:
        """The cached slot when it is the published generation, with one more user."""
        with self._lock:
            slot = self._slots.get(slug)
            if slot is None or generation is None or slot.opened.generation != generation:
                return None
            slot.users += 1
            return slot

    def _take_current(self, slug: str) -> _Slot | None:
        """The cached slot whatever its generation, with one more user."""
        with self._lock:
            slot = self._slots.get(slug)
            if slot is not None:
                slot.users += 1
            return slot

    def _acquire(self, slug: str, generation: Path | None) -> _Slot:
        slot = self._take(slug, generation)
        if slot is not None:
            return slot
        with self._lock:
            if self._closed:
                raise RuntimeError("the index cache is closed")
            opening = self._opening.setdefault(slug, threading.Lock())
        if not opening.acquire(blocking=False):
            # Another call is opening the new generation (which can take a second with a
            # model to load): answer from the previous one meanwhile instead of waiting.
            slot = self._take_current(slug)
            if slot is not None:
                return slot
            opening.acquire()
        try:
            # Another call may have opened it while this one waited.
            slot = self._take(slug, generation)
            if slot is not None:
                return slot
            opened = self._opener(slug)
            slot = _Slot(opened, users=1)
            with self._lock:
                old = self._slots.get(slug)
                self._slots[slug] = slot
        finally:
            opening.release()
        if old is not None:
            log.info(
                "%s: serving %s (was %s)",
                slug,
                opened.generation.name,
                old.opened.generation.name,
            )
            self._retire_slot(old)
        else:
            log.info("%s: opened %s", slug, opened.generation.name)
            if self._on_open is not None:
                try:
                    self._on_open(slug)
                except Exception:  # e.g. a watcher that cannot start: searches go on
                    log.exception("after opening %s", slug)
        return slot

    def refresh(self, slug: str) -> None:
        """Open the published generation now (after a reindex), so no search waits for it."""
        try:
            with self.use(slug):
                pass
        except Exception:
            log.warning("could not open the new index of %s", slug, exc_info=True)

    def _release(self, slot: _Slot) -> None:
        with self._lock:
            slot.users -= 1
            close = slot.retired and slot.users == 0
        if close:
            slot.opened.close()

    def _retire_slot(self, slot: _Slot) -> None:
        with self._lock:
            slot.retired = True
            close = slot.users == 0
        if close:
            slot.opened.close()

    def _retire(self, slug: str) -> None:
        with self._lock:
            slot = self._slots.pop(slug, None)
        if slot is not None:
            self._retire_slot(slot)

    def close(self) -> None:
        """Retire every index; each closes now or when its last call finishes."""
        with self._lock:
            self._closed = True
            slots = list(self._slots.values())
            self._slots.clear()
        for slot in slots:
            self._retire_slot(slot)
