"""Run one function over many items in pebble worker processes, and blame the item that kills
or stalls its worker.

Chunking runs native parsers (tree-sitter grammars and their hand-written scanners), and a
bug there kills the process with SIGSEGV or SIGABRT: no Python exception, no ``except``; a
parser that loops forever never returns at all. So items run in a ``pebble.ProcessPool``, in
batches, one task per batch: a batch whose worker dies (``ProcessExpired``) or runs past the
timeout is run again one item per task, and an item that then fails alone is the culprit and
gets ``failed(item, failure)``. An item that succeeds alone (a crash that depends on the
address layout, or damage left by an earlier item) keeps its result. pebble replaces the
dead or stopped worker; no other worker is disturbed.

A process starts its workers once: the pool is kept (``shared_pool``, ~42 MiB a worker) for
the next run, so ``engine watch`` pays the start-up (0.2-0.3 s: a Python start and the
chunker's imports) on its first update only, and it is stopped at exit.

Workers are spawned (see ``WorkerPool._start``), so each imports the parent's ``__main__``
module under another name: a script that indexes needs ``if __name__ == "__main__":``, as
multiprocessing always asks. Without one, the script fails with an EngineError, or, when
it queues for the writer lock (``wait=True``), waits on itself for good. engine's own entry
points (the console script, ``python -m`` modules, pytest) all have the guard.
"""

from __future__ import annotations

import atexit
import functools
import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pebble import ProcessExpired, ProcessFuture, ProcessPool

from engine.errors import EngineError

T = TypeVar("T")
R = TypeVar("R")

BATCH_ITEMS = 16
# A backstop for a parser that never returns, far above anything real: parsing gives up by
# itself after engine.chunking.parsing.PARSE_BUDGET_S (2 s + 4 s/MB: 10 s for the largest file
# indexed, 2 MB). One task (a batch, or one item alone) may run this long before its worker
# is stopped; a batch that does is run again one item per task, so only an item that takes
# this long by itself is blamed.
TIMEOUT_S = 120.0


def describe_exit(exitcode: int | None) -> str:
    """How a worker ended, for a person: "SIGSEGV", "exit code 3"."""
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


@dataclass(frozen=True, slots=True)
class Failure:
    """Why an item has no result: it killed its worker (``detail`` is how the worker ended,
    e.g. "SIGSEGV"), or it ran past the timeout (``detail`` says how long that was)."""

    kind: Literal["crashed", "timed-out"]
    detail: str


def _run_batch(function: Callable[[T], R], batch: Sequence[T]) -> list[R]:
    return [function(item) for item in batch]


class WorkerPool(Generic[T, R]):
    """A pebble process pool kept between runs, made (or made bigger) on first need."""

    def __init__(self, batch_items: int = BATCH_ITEMS, timeout_s: float = TIMEOUT_S) -> None:
        self.batch_items = batch_items
        self.timeout_s = timeout_s
        self._pool: ProcessPool | None = None
        self._workers = 0
        self._runs = 0  # runs under way, from any thread
        self._lock = threading.Lock()

    def run(
        self,
        function: Callable[[T], R],
        items: Sequence[T],
        *,
        workers: int,
        failed: Callable[[T, Failure], R],
    ) -> Iterator[R]:
        """Yield ``function(item)`` for every item, in order, computed in at least ``workers``
        worker processes; ``failed(item, failure)`` for an item that crashes or stalls its
        worker when run alone. A Python exception from ``function`` is raised here.

        ``function`` and the items must pickle (a module-level function, or a partial of one).
        """
        if not items:
            return
        batches = [
            range(start, min(start + self.batch_items, len(items)))
            for start in range(0, len(items), self.batch_items)
        ]
        pool = self._checkout(max(1, workers))
        futures: list[ProcessFuture[list[R]]] = []
        alone: list[ProcessFuture[R]] = []
        try:
            futures = [
                self._schedule(pool, _run_batch, function, [items[i] for i in b]) for b in batches
            ]
            for batch, future in zip(batches, futures, strict=True):
                if _failure(future, self.timeout_s) is None:
                    yield from future.result()
                    continue
                alone = [self._schedule(pool, function, items[i]) for i in batch]
                for i, single in zip(batch, alone, strict=True):
                    failure = _failure(single, self.timeout_s)
                    yield single.result() if failure is None else failed(items[i], failure)
        finally:
            # Left early (the consumer went away, or an error): pebble stops the workers still
            # busy with this run's tasks and starts fresh ones.
            for pending in futures + alone:
                pending.cancel()  # type: ignore[no-untyped-call]  # pebble leaves it bare
            with self._lock:
                self._runs -= 1

    def close(self) -> None:
        """Stop the workers."""
        with self._lock:
            pool, self._pool, self._workers = self._pool, None, 0
        if pool is not None:
            _stop(pool)

    def _schedule(self, pool: ProcessPool, function: Callable[..., Any], *args: Any) -> Any:
        try:
            return pool.schedule(function, args=args, timeout=self.timeout_s)
        except RuntimeError as error:  # the pool broke, see _failure
            raise _broken(error) from error

    def _checkout(self, workers: int) -> ProcessPool:
        with self._lock:
            pool = self._pool
            self._runs += 1
            if pool is not None and pool.active and (self._workers >= workers or self._runs > 1):
                return pool  # big enough, or in use by another run: a smaller pool will do
            self._pool, self._workers = self._start(workers), workers
        if pool is not None:  # too small and idle, or broken
            _stop(pool)
        return self._pool

    @staticmethod
    def _start(workers: int) -> ProcessPool:
        # spawn: a fresh interpreter per worker. Never fork: the parent holds threads (pebble's
        # own, the server's, FAISS's and onnxruntime's) and open indexes, which a forked child
        # would inherit mid-use. Not forkserver either: its workers are forks of one process,
        # so all share its address layout, and an item whose crash depends on the layout would
        # crash its retry too; the server is also one global per process, shared with any
        # other multiprocessing user. A spawned worker imports the parent's __main__ module
        # under another name, so a script that indexes needs the usual main guard.
        return ProcessPool(max_workers=workers, context=multiprocessing.get_context("spawn"))


def _stop(pool: ProcessPool) -> None:
    pool.stop()  # type: ignore[no-untyped-call]  # pebble leaves it unannotated
    pool.join()


def _failure(future: ProcessFuture[Any], timeout_s: float) -> Failure | None:
    """Wait for the task; how its worker failed, or None (a result, or a Python exception
    that ``future.result()`` raises)."""
    error = future.exception()
    if isinstance(error, TimeoutError):  # past its timeout: pebble stopped its worker
        return Failure("timed-out", f"over {timeout_s:g} s")
    if isinstance(error, ProcessExpired):
        return Failure("crashed", describe_exit(error.exitcode))
    if isinstance(error, BrokenProcessPool):
        raise _broken(error) from error
    return None


def _broken(error: BaseException) -> EngineError:
    return EngineError(
        f"the chunking worker processes failed ({error}; their error is on stderr) — check "
        "that this Python can run `python -c 'import engine.indexing.workerpool'`"
    )


@functools.cache
def shared_pool() -> WorkerPool[Any, Any]:
    """The process's pool, made on first use and stopped at exit."""
    pool: WorkerPool[Any, Any] = WorkerPool()
    atexit.register(pool.close)
    return pool
