"""Worker processes that run one function over many items and outlive a crash on any item.

Chunking runs native parsers (tree-sitter grammars and their hand-written scanners), and a
bug there kills the process with SIGSEGV or SIGABRT: no Python exception, no ``except``. So
items run in worker processes. A worker sends each item's result as soon as it has
it, so when a worker dies the parent knows which item it was running. That item is run
again alone in a fresh worker: if it kills that one too, it is the culprit and gets the
result of ``crashed(item, reason)``; if it then succeeds (a crash that depends on the
address layout, or damage left by an earlier item) its result is kept. Items after it in
the dead worker's batch go back to the queue, and no other worker is disturbed.

A process starts its workers once: idle ones are kept (``shared_pool``, ~42 MiB each) for
the next run, so ``engine watch`` pays the start-up (0.2-0.3 s: a Python start and the
chunker's imports) on its first update only, not on every one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Pipe, wait
from typing import Any, Generic, TypeVar

from engine.errors import EngineError

T = TypeVar("T")
R = TypeVar("R")

# An item is the culprit once it has killed this many workers, the last time running alone.
CRASHES_TO_BLAME = 2
CLOSE_TIMEOUT_S = 5.0


def describe_exit(exitcode: int | None) -> str:
    """How a worker ended, for a person: "SIGSEGV", "exit code 3"."""
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


# A worker is a plain ``python -c`` child, not a multiprocessing one: that would import the
# parent's ``__main__`` again, which runs a script without a main guard a second time (and
# an indexing script then waits forever on its own repository's writer lock).
_BOOT = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"  # Ctrl-C is the parent's to handle
    "from multiprocessing.connection import Connection\n"
    "conn = Connection(int(sys.argv[1]))\n"
    "sys.path[:] = conn.recv()\n"
    "from engine.workerpool import _serve\n"
    "_serve(conn)\n"
)
_READY = -1  # the index of a worker's first message, sent once it has started


@dataclass(eq=False)
class _Worker:
    process: subprocess.Popen[bytes]
    conn: Connection
    running: deque[int] = field(default_factory=deque)  # item indices sent, not yet answered
    started: bool = False  # it said _READY: a death from now on is an item's doing


class _Failed:
    """A Python exception the function raised in the worker: re-raised in the parent."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _serve(conn: Connection) -> None:
    """A worker's main loop: (function, [(index, item), ...]) in, one (index, result) out per
    item, in order. Ends on None or when the parent goes away."""
    conn.send((_READY, None))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        function, batch = message
        for index, item in batch:
            try:
                result = function(item)
            except Exception as exc:  # a Python bug is the caller's to raise, not a crash
                result = _Failed(exc)
            conn.send((index, result))


class WorkerPool(Generic[T, R]):
    """Worker processes, kept idle between runs for the next one; thread-safe."""

    def __init__(self, batch_items: int = 16) -> None:
        self.batch_items = batch_items
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def run(
        self,
        function: Callable[[T], R],
        items: Sequence[T],
        *,
        workers: int,
        crashed: Callable[[T, str], R],
    ) -> Iterator[R]:
        """Yield ``function(item)`` for every item, in order, computed in ``workers`` worker
        processes; ``crashed(item, reason)`` for an item that kills its worker every time.

        ``function`` and the items must pickle (a module-level function, or a partial of one).
        """
        if not items:
            return
        queue: deque[int] = deque(range(len(items)))
        alone: deque[int] = deque()  # items that killed a worker: rerun one at a time
        crashes: dict[int, int] = {}
        results: dict[int, R] = {}
        batches = -(-len(items) // self.batch_items)
        active = self._checkout(max(1, min(workers, batches)))
        done = 0
        try:
            while done < len(items):
                for worker in active:
                    if worker.running:
                        continue
                    if alone:
                        indices = [alone.popleft()]
                    elif queue:
                        indices = [
                            queue.popleft() for _ in range(min(self.batch_items, len(queue)))
                        ]
                    else:
                        continue
                    worker.running.extend(indices)
                    worker.conn.send((function, [(i, items[i]) for i in indices]))
                # A worker that dies closes its end of the pipe: its connection turns ready too.
                # Some worker is always running here: every item not yet done is queued (and an
                # idle worker took it above), running, or answered.
                ready = wait([w.conn for w in active if w.running])
                for worker in [w for w in active if w.conn in ready]:
                    if self._receive(worker, results):
                        continue
                    reason = self._bury(worker)
                    if not worker.started:  # no item's fault, and every new worker would fail
                        raise EngineError(
                            f"a chunking worker process failed to start ({reason}; its error "
                            "is on stderr) — check that this Python can run "
                            "`python -c 'import engine.workerpool'`"
                        )
                    if worker.running:
                        suspect = worker.running.popleft()  # answers come in order
                        crashes[suspect] = crashes.get(suspect, 0) + 1
                        if crashes[suspect] >= CRASHES_TO_BLAME:
                            results[suspect] = crashed(items[suspect], reason)
                        else:
                            alone.append(suspect)
                        queue.extendleft(reversed(worker.running))
                    active[active.index(worker)] = self._start()
                while done in results:
                    yield results.pop(done)
                    done += 1
        finally:
            self._checkin(active)

    def close(self) -> None:
        """Stop the idle workers."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            self._stop(worker)

    def _receive(self, worker: _Worker, results: dict[int, R]) -> bool:
        """Take every answer the worker has sent; False once it is gone (end of file)."""
        while worker.conn.poll():
            try:
                index, result = worker.conn.recv()
            except (EOFError, OSError):
                return False
            if index == _READY:
                worker.started = True
                continue
            if isinstance(result, _Failed):
                raise result.error
            worker.running.remove(index)
            results[index] = result
        return True

    def _bury(self, worker: _Worker) -> str:
        try:
            worker.process.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:  # its pipe broke but it lives on: make sure it ends
            worker.process.kill()
            worker.process.wait()
        worker.conn.close()
        return describe_exit(worker.process.returncode)

    def _start(self) -> _Worker:
        # A fresh interpreter, not fork: the parent may hold threads and open indexes.
        parent_end, child_end = Pipe()
        process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(child_end.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # the parent's stdout may carry JSON or a protocol
            pass_fds=[child_end.fileno()],
        )
        child_end.close()  # the parent's copy: without closing it a dead worker gives no EOF
        parent_end.send(sys.path)  # the workers import what the parent can (tests' fakes too)
        return _Worker(process, parent_end)

    def _checkout(self, count: int) -> list[_Worker]:
        with self._lock:
            if self._pid != os.getpid():  # a forked child must not share its parent's workers
                self._idle, self._pid = [], os.getpid()
            taken: list[_Worker] = []
            while self._idle and len(taken) < count:
                worker = self._idle.pop()
                if worker.process.poll() is None:
                    taken.append(worker)
        return taken + [self._start() for _ in range(count - len(taken))]

    def _checkin(self, workers: list[_Worker]) -> None:
        for worker in workers:
            if worker.running or worker.process.poll() is not None:
                # Stopped early (the consumer went away, or an error): its answers are stale.
                worker.process.kill()
                self._bury(worker)
                continue
            with self._lock:
                self._idle.append(worker)

    def _stop(self, worker: _Worker) -> None:
        with contextlib.suppress(OSError):  # already gone
            worker.conn.send(None)
        self._bury(worker)


@functools.cache
def shared_pool() -> WorkerPool[Any, Any]:
    """The process's pool, made on first use; its idle workers end with the process (they
    read the end of their pipe)."""
    return WorkerPool()
