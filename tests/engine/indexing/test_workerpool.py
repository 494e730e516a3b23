"""engine/indexing/workerpool.py: results in order, workers kept warm, and an item that crashes or
stalls its worker blamed only when it does so running alone."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from engine.errors import EngineError
from engine.indexing.workerpool import Failure, WorkerPool, describe_exit


def square(item: int) -> int:
    return item * item


def pid_of_worker(item: int) -> int:
    return os.getpid()


def dies_on_seven(item: int) -> int:
    """A native crash (segfault) on item 7; items are module-level so workers can import us."""
    if item == 7:
        os.kill(os.getpid(), signal.SIGSEGV)
    return item


def raises_on_three(item: int) -> int:
    if item == 3:
        raise ValueError("a Python bug, not a crash")
    return item


def stalls_on_two(item: int) -> int:
    """A parser that never returns, on item 2."""
    if item == 2:
        time.sleep(600)
    return item


def blamed(item: int, failure: Failure) -> int:
    return -item if failure == Failure("crashed", "SIGSEGV") else -1000


@pytest.fixture
def pool() -> Iterator[WorkerPool[int, int]]:
    made: WorkerPool[int, int] = WorkerPool(batch_items=4)
    yield made
    made.close()


def test_results_come_in_item_order_from_several_workers(pool: WorkerPool[int, int]) -> None:
    items = list(range(50))
    assert list(pool.run(square, items, workers=2, failed=blamed)) == [i * i for i in items]


def test_workers_stay_warm_between_runs(pool: WorkerPool[int, int]) -> None:
    first = set(pool.run(pid_of_worker, list(range(20)), workers=2, failed=blamed))
    workers = {child.pid for child in multiprocessing.active_children()}
    second = set(pool.run(pid_of_worker, list(range(20)), workers=2, failed=blamed))
    # Which worker takes which batch is up to the pool; that none was started is not.
    assert first | second <= workers
    assert {child.pid for child in multiprocessing.active_children()} == workers
    assert os.getpid() not in first


def test_an_item_that_kills_its_worker_is_blamed_and_the_others_are_done(
    pool: WorkerPool[int, int],
) -> None:
    # Item 7 sits in the batch 4..7, behind three items, with items after it in the queue.
    results = list(pool.run(dies_on_seven, list(range(12)), workers=2, failed=blamed))
    assert results == [0, 1, 2, 3, 4, 5, 6, -7, 8, 9, 10, 11]
    # The pool is still usable, with fresh workers in place of the dead ones.
    assert list(pool.run(square, [1, 2, 3], workers=2, failed=blamed)) == [1, 4, 9]


def test_a_python_exception_is_raised_in_the_caller(pool: WorkerPool[int, int]) -> None:
    with pytest.raises(ValueError, match="a Python bug"):
        list(pool.run(raises_on_three, list(range(8)), workers=1, failed=blamed))
    assert list(pool.run(square, [5], workers=1, failed=blamed)) == [25]


def test_a_run_abandoned_early_leaves_the_pool_usable(pool: WorkerPool[int, int]) -> None:
    results = pool.run(square, list(range(40)), workers=2, failed=blamed)
    # Abandoning a run means closing its generator, which is what a caller's `break` does.
    assert isinstance(results, Generator)
    assert next(results) == 0
    results.close()  # the workers still busy with this run are stopped, not reused
    assert list(pool.run(square, list(range(6)), workers=2, failed=blamed)) == [
        0,
        1,
        4,
        9,
        16,
        25,
    ]


def test_no_items_give_no_results(pool: WorkerPool[int, int]) -> None:
    assert list(pool.run(square, [], workers=2, failed=blamed)) == []


def test_exit_descriptions() -> None:
    assert describe_exit(-signal.SIGSEGV) == "SIGSEGV"
    assert describe_exit(-signal.SIGABRT) == "SIGABRT"
    assert describe_exit(3) == "exit code 3"


def test_an_item_that_stalls_its_worker_is_blamed_and_the_others_are_done() -> None:
    # The one test that depends on time: a 1 s limit against a 600 s sleep.
    pool: WorkerPool[int, int] = WorkerPool(batch_items=4, timeout_s=1.0)
    failures: list[Failure] = []

    def timed_out(item: int, failure: Failure) -> int:
        failures.append(failure)
        return -item

    try:
        results = list(pool.run(stalls_on_two, list(range(6)), workers=2, failed=timed_out))
        assert results == [0, 1, -2, 3, 4, 5]
        assert failures == [Failure("timed-out", "over 1 s")]
        assert list(pool.run(square, [3], workers=1, failed=blamed)) == [9]
    finally:
        pool.close()


def cannot_start() -> None:
    raise SystemExit(3)


def test_a_worker_that_cannot_start_is_an_error_not_a_crash_of_an_item(
    pool: WorkerPool[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pebble

    def broken(workers: int) -> pebble.ProcessPool:
        spawn = multiprocessing.get_context("spawn")
        return pebble.ProcessPool(max_workers=workers, initializer=cannot_start, context=spawn)

    monkeypatch.setattr(pool, "_start", broken)
    with pytest.raises(EngineError, match="worker processes failed"):
        list(pool.run(square, [1, 2], workers=1, failed=blamed))


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_the_shared_pool_stops_its_workers_when_the_process_exits() -> None:
    script = (
        "from engine.indexing.workerpool import shared_pool\n"
        "from tests.engine.indexing.test_workerpool import blamed, pid_of_worker\n"
        "pids = set(shared_pool().run(pid_of_worker, list(range(40)), workers=2, failed=blamed))\n"
        "print(*pids)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).parents[3],
        capture_output=True,
        text=True,
        check=True,
    )
    pids = [int(pid) for pid in done.stdout.split()]
    assert pids
    for pid in pids:  # stopped and reaped before the process ended, not left to outlive it
        assert "spawn_main" not in _cmdline(pid)
    assert "Traceback" not in done.stderr


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
