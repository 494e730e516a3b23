"""engine/indexing/parallel_chunking.py: chunks and signal analyses come back from worker
processes, in task
order, and a file that crashes or stalls the parser is reported without stopping the
others."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import engine.indexing.parallel_chunking
from engine.index.store import chunk_row
from engine.indexing.parallel_chunking import (
    CRASHED,
    TIMED_OUT,
    ChunkedFile,
    FileTask,
    chunk_files,
    read_and_chunk,
)
from engine.indexing.workerpool import TIMEOUT_S, WorkerPool
from engine.signal import ChunkAnalyzer
from engine.types import ChunkDraft


def names(drafts: Sequence[ChunkDraft]) -> list[str]:
    """A ChunkAnalyzer: module-level, so that worker processes can import it."""
    return [f"{d.path}:{d.name}" for d in drafts]


def failing(drafts: Sequence[ChunkDraft]) -> list[str]:
    raise ValueError("analyzer bug")


def tasks(root: Path, count: int) -> list[FileTask]:
    found = []
    for i in range(count):
        path = root / f"m{i}.py"
        path.write_text(f"def first{i}():\n    return 1\n\n\ndef second{i}():\n    return 2\n")
        found.append(FileTask(f"m{i}.py", str(path), ""))
    return found


@pytest.mark.parametrize("workers", [1, 2])
def test_chunks_come_with_their_analyses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(engine.indexing.parallel_chunking, "PARALLEL_MIN_FILES", 1)
    analyzers = {"names": names, "broken": failing}
    results = list(
        chunk_files(tasks(tmp_path, 3), max_file_bytes=10_000, workers=workers, analyzers=analyzers)
    )
    assert [r.path for r in results] == ["m0.py", "m1.py", "m2.py"]
    for i, result in enumerate(results):
        assert result.status == "chunked"
        assert [row[3] for row in result.chunks] == [f"first{i}", f"second{i}"]
        assert [row[3] for row in result.definitions] == [f"first{i}", f"second{i}"]
        # A failing analyzer leaves its signal out; the others' results are kept.
        assert dict(result.analyses) == {"names": [f"m{i}.py:first{i}", f"m{i}.py:second{i}"]}


def test_rows_are_the_drafts_fields_in_order() -> None:
    draft = ChunkDraft("a.py", "python", "class", "A", "A", "", 1, 3, "class A:\n  x=1", "class A:")
    assert chunk_row(draft) == (
        "a.py",
        "python",
        "class",
        "A",
        "A",
        "",
        1,
        3,
        "class A:\n  x=1",
        "class A:",
        "",
    )
    assert ChunkDraft(*chunk_row(draft)) == draft  # type: ignore[arg-type]


def test_a_refused_file_has_no_chunks(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"\x00\x01binary")
    [result] = chunk_files(
        [FileTask("blob.py", str(tmp_path / "blob.py"), "")], max_file_bytes=10_000
    )
    assert result == ChunkedFile("blob.py", "binary")


# --- a file that crashes the parser ------------------------------------------------------


def crashing(
    task: FileTask, max_file_bytes: int, analyzers: Mapping[str, ChunkAnalyzer] | None
) -> ChunkedFile:
    """read_and_chunk, except that a file named crash*.py dies in native code, as a segfault
    of a tree-sitter scanner does, and a file named once*.py does so only the first time
    (a marker file beside it remembers), and a file named stall*.py never finishes, as a
    parser caught in a loop."""
    name = Path(task.abs_path).name
    marker = Path(task.abs_path + ".crashed")
    if name.startswith("once") and not marker.exists():
        marker.touch()
        os.kill(os.getpid(), signal.SIGSEGV)
    if name.startswith("crash"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if name.startswith("stall"):
        time.sleep(600)
    return read_and_chunk(task, max_file_bytes, analyzers)


def with_files(root: Path, names_: Sequence[str]) -> list[FileTask]:
    found = []
    for name in names_:
        (root / name).write_text(f"def in_{name.replace('.', '_')}():\n    return 1\n")
        found.append(FileTask(name, str(root / name), ""))
    return found


def chunk_with_a_fresh_pool(
    tasks: list[FileTask], *, timeout_s: float = TIMEOUT_S, **options: Any
) -> list[ChunkedFile]:
    """chunk_files through the crashing chunker, on a pool of its own, closed afterwards."""
    pool: WorkerPool[FileTask, ChunkedFile] = WorkerPool(timeout_s=timeout_s)
    try:
        return list(
            chunk_files(tasks, max_file_bytes=10_000, chunker=crashing, pool=pool, **options)
        )
    finally:
        pool.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_that_kills_the_parser_is_reported_and_the_rest_is_chunked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(engine.indexing.parallel_chunking, "PARALLEL_MIN_FILES", 1)
    files = [f"m{i}.py" for i in range(40)]
    files[21] = "crash.py"  # in the middle of the second batch of 16
    results = chunk_with_a_fresh_pool(
        with_files(tmp_path, files), workers=workers, analyzers={"names": names}
    )
    assert [r.path for r in results] == files
    crashed = results[21]
    assert (crashed.status, crashed.chunks) == (CRASHED, ())
    assert "SIGSEGV" in crashed.error and "twice" in crashed.error
    for result in results[:21] + results[22:]:
        assert result.status == "chunked"
        assert [row[3] for row in result.chunks] == [f"in_{result.path.replace('.', '_')}"]
        assert list(result.analyses) == ["names"]


def test_a_file_that_crashes_once_is_chunked_on_its_second_try(tmp_path: Path) -> None:
    results = chunk_with_a_fresh_pool(with_files(tmp_path, ["a.py", "once.py", "b.py"]))
    assert [(r.path, r.status) for r in results] == [
        ("a.py", "chunked"),
        ("once.py", "chunked"),
        ("b.py", "chunked"),
    ]
    assert (tmp_path / "once.py.crashed").exists()  # it did crash the first time


def test_a_file_that_never_finishes_is_reported_and_the_rest_is_chunked(tmp_path: Path) -> None:
    # The one test here that depends on time: a 1 s limit against a 600 s sleep.
    results = chunk_with_a_fresh_pool(
        with_files(tmp_path, ["a.py", "stall.py", "b.py"]), timeout_s=1.0
    )
    assert [(r.path, r.status) for r in results] == [
        ("a.py", "chunked"),
        ("stall.py", TIMED_OUT),
        ("b.py", "chunked"),
    ]
    assert results[1].error.startswith("chunking this file ran over 1 s, twice")
