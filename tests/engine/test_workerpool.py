"""engine/workerpool.py: results in order, workers kept warm, and a crashing item blamed
only when it kills a worker running alone."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from engine.errors import EngineError
from engine.workerpool import WorkerPool, describe_exit


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


def blamed(item: int, reason: str) -> int:
    return -item if reason == "SIGSEGV" else -1000


@pytest.fixture
def pool() -> Iterator[WorkerPool[int, int]]:
    made: WorkerPool[int, int] = WorkerPool(batch_items=4)
    yield made
    made.close()


def test_results_come_in_item_order_from_several_workers(pool: WorkerPool[int, int]) -> None:
    items = list(range(50))
    assert list(pool.run(square, items, workers=2, crashed=blamed)) == [i * i for i in items]


def test_workers_stay_warm_between_runs(pool: WorkerPool[int, int]) -> None:
    first = set(pool.run(pid_of_worker, list(range(20)), workers=2, crashed=blamed))
    second = set(pool.run(pid_of_worker, list(range(20)), workers=2, crashed=blamed))
    assert len(first) == 2 and second == first
    assert os.getpid() not in first


def test_an_item_that_kills_its_worker_is_blamed_and_the_others_are_done(
    pool: WorkerPool[int, int],
) -> None:
    # Item 7 sits in the batch 4..7, behind three items, with items after it in the queue.
    results = list(pool.run(dies_on_seven, list(range(12)), workers=2, crashed=blamed))
    assert results == [0, 1, 2, 3, 4, 5, 6, -7, 8, 9, 10, 11]
    # The pool is still usable, with fresh workers in place of the dead ones.
    assert list(pool.run(square, [1, 2, 3], workers=2, crashed=blamed)) == [1, 4, 9]


def test_a_python_exception_is_raised_in_the_caller(pool: WorkerPool[int, int]) -> None:
    with pytest.raises(ValueError, match="a Python bug"):
        list(pool.run(raises_on_three, list(range(8)), workers=1, crashed=blamed))
    assert list(pool.run(square, [5], workers=1, crashed=blamed)) == [25]


def test_a_run_abandoned_early_leaves_the_pool_usable(pool: WorkerPool[int, int]) -> None:
    results = pool.run(square, list(range(40)), workers=2, crashed=blamed)
    assert next(results) == 0
    results.close()  # the workers still busy with this run are stopped, not reused
    assert list(pool.run(square, list(range(6)), workers=2, crashed=blamed)) == [
        0,
        1,
        4,
        9,
        16,
        25,
    ]


def test_no_items_give_no_results(pool: WorkerPool[int, int]) -> None:
    assert list(pool.run(square, [], workers=2, crashed=blamed)) == []


def test_exit_descriptions() -> None:
    assert describe_exit(-signal.SIGSEGV) == "SIGSEGV"
    assert describe_exit(-signal.SIGABRT) == "SIGABRT"
    assert describe_exit(3) == "exit code 3"


def test_a_worker_that_cannot_start_is_an_error_not_a_crash_of_an_item(
    pool: WorkerPool[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.workerpool

    monkeypatch.setattr(engine.workerpool, "_BOOT", "raise SystemExit(3)")
    with pytest.raises(EngineError, match="failed to start \\(exit code 3"):
        list(pool.run(square, [1, 2], workers=1, crashed=blamed))
