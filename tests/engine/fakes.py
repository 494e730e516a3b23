"""In-repo fakes of engine interfaces, for tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from engine.indexing.workerpool import Failure, WorkerPool

T = TypeVar("T")
R = TypeVar("R")


class InProcessPool(WorkerPool[T, R]):
    """A WorkerPool that runs every item in this process, for tests that patch a function
    the workers would run (a monkeypatch never reaches a worker process). It isolates
    nothing: a native crash here ends the test run."""

    def run(
        self,
        function: Callable[[T], R],
        items: Sequence[T],
        *,
        workers: int,
        failed: Callable[[T, Failure], R],
    ) -> Iterator[R]:
        for item in items:
            yield function(item)
