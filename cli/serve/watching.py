"""Keep the indexes the agent server has opened current while their files change.

Each repository the server opens gets one watcher thread running engine/indexing/watch.py's
``Watcher`` (the machinery of ``engine watch``: stat polling, one update per settled burst).
Its update is a ``ReindexJobs`` reindex, the same child process the ``reindex`` tool starts:
searches keep answering from the published generation meanwhile (their results marked moved
or stale by the freshness check) and ``IndexCache`` switches to the new one when it is done.

Bounded: at most one reindex per repository at a time (a reindex already running, the
agent's or this one's, is waited for instead of doubled), at most ``MAX_WATCHED`` watched
repositories, polling cost capped by the watcher's scan budget. A failed scan or reindex is
logged to stderr and retried with a growing pause; it never reaches the server. ``stop``
then ``join`` end every watcher thread on shutdown (``ReindexJobs.close`` in between stops a
reindex a watcher waits for).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from engine.errors import EngineError, RepoNotFound
from engine.index.home import Home
from engine.indexing.walk import MAX_FILE_BYTES
from engine.indexing.watch import Watcher, WatchEvent, WatchOptions, indexed_state, tree_state

log = logging.getLogger(__name__)

MAX_WATCHED = 16  # repositories watched at once; others are answered with stale flags only
# An agent's edit is usually followed by a search within seconds: a short quiet period, and
# polls of about a second (longer for trees that take long to scan, as WatchOptions says).
SERVE_WATCH = WatchOptions(quiet_s=1.0, poll_s=1.0)
REINDEX_WAIT_S = 600.0  # how long one watch update waits for its reindex before polling again
JOIN_S = 5.0  # how long shutdown waits for each watcher thread (they are daemons regardless)


class Reindexer(Protocol):
    """What the watchers need of cli/serve/reindex.py's ``ReindexJobs``."""

    def run(self, slug: str, *, wait_s: float) -> dict[str, Any]: ...

    def wait(self, slug: str, timeout_s: float) -> bool: ...


@dataclass(eq=False)
class _Watch:
    slug: str
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None


class RepoWatchers:
    """One watcher thread per opened repository, up to ``limit``."""

    def __init__(
        self,
        home: Home,
        jobs: Reindexer,
        options: WatchOptions = SERVE_WATCH,
        *,
        limit: int = MAX_WATCHED,
    ) -> None:
        self._home = home
        self._jobs = jobs
        self._options = options
        self._limit = limit
        self._lock = threading.Lock()
        self._watches: dict[str, _Watch] = {}
        self._stopping = False

    def watch(self, slug: str) -> None:
        """Start watching ``slug`` unless it is watched already, or the cap is reached."""
        with self._lock:
            if self._stopping or slug in self._watches:
                return
            if len(self._watches) >= self._limit:
                log.warning(
                    "%s: not watched for changes (already watching %d repositories); its "
                    "results are marked stale after edits until reindex is called",
                    slug,
                    self._limit,
                )
                return
            watch = self._watches[slug] = _Watch(slug)
            watch.thread = threading.Thread(
                target=self._run, args=(watch,), name=f"watch-{slug}", daemon=True
            )
            watch.thread.start()

    def watched(self) -> list[str]:
        with self._lock:
            return [slug for slug, w in self._watches.items() if not w.stop.is_set()]

    def stop(self) -> None:
        """Ask every watcher to stop; returns at once (``join`` waits)."""
        with self._lock:
            self._stopping = True
            watches = list(self._watches.values())
        for watch in watches:
            watch.stop.set()

    def join(self, timeout_s: float = JOIN_S) -> None:
        with self._lock:
            threads = [w.thread for w in self._watches.values() if w.thread is not None]
        for thread in threads:
            thread.join(timeout_s)
            if thread.is_alive():
                log.warning("the watcher %s did not stop in %.0f s", thread.name, timeout_s)

    def _run(self, watch: _Watch) -> None:
        pause = self._options.retry_s
        while not watch.stop.is_set():
            try:
                root = self._home.get(watch.slug).root
                watcher = Watcher(
                    partial(tree_state, root, max_file_bytes=MAX_FILE_BYTES),
                    lambda: indexed_state(self._home, watch.slug),
                    lambda: self._update(watch),
                    self._options,
                )
                log.info("%s: watching %s for changes", watch.slug, root)
                watcher.run(lambda event: self._report(watch, event), watch.stop)
            except RepoNotFound:
                log.info("%s: no longer indexed, stopped watching it", watch.slug)
                watch.stop.set()
            except Exception as exc:  # a scan that failed (the folder went away, a bug)
                if watch.stop.is_set():
                    break
                log.warning(
                    "%s: watching for changes failed (%s: %s); retrying in %.0f s",
                    watch.slug,
                    type(exc).__name__,
                    exc,
                    pause,
                )
                watch.stop.wait(pause)
                pause = min(pause * 2, self._options.max_retry_s)

    def _update(self, watch: _Watch) -> dict[str, Any]:
        """One reindex through the server's jobs; raises ``EngineError`` when it failed."""
        if watch.stop.is_set():
            raise EngineError("the server is stopping")
        try:
            self._home.get(watch.slug)
        except RepoNotFound:
            log.info("%s: no longer indexed, stopped watching it", watch.slug)
            watch.stop.set()
            raise
        outcome = self._jobs.run(watch.slug, wait_s=REINDEX_WAIT_S)
        if outcome.get("status") == "running":
            # Another reindex (the agent's) or ours still going: wait for it, then the
            # watcher compares the tree with what it published.
            self._jobs.wait(watch.slug, REINDEX_WAIT_S)
            return outcome
        if "error" in outcome:
            raise EngineError(str(outcome["error"]))
        return outcome

    def _report(self, watch: _Watch, event: WatchEvent) -> None:
        if watch.stop.is_set():
            return  # a failure while shutting down is the shutdown, not news
        if event.kind == "waiting":
            log.info("%s: %d files changed, reindexing once they settle", watch.slug, event.changed)
        elif event.kind == "updated":
            report = event.report or {}
            log.info(
                "%s: reindexed after a change (%s) in %.2f s",
                watch.slug,
                report.get("generation", report.get("status", "?")),
                event.seconds,
            )
        elif event.kind == "failed":
            log.warning(
                "%s: the reindex after a change failed, will retry: %s", watch.slug, event.error
            )
