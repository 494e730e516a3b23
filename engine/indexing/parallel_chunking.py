"""Read and chunk files in worker processes, which a crash of the parser cannot take down.

Chunking runs native code (tree-sitter grammars), whose bugs kill a process outright or never
return; in the indexing process that would end or stall the whole run, or ``engine watch``.
So files are always chunked in worker processes (engine.indexing.workerpool, a pebble pool): a file
that kills its worker twice comes back with status ``chunking-crashed``, one that runs past
engine.indexing.workerpool.TIMEOUT_S twice with ``chunking-timeout``, and the run goes on.
The workers
stay warm between runs, so an ``engine watch`` update pays the trip of its files' chunks
through a pipe (about 3 ms for a 630-line file, on updates that take 300-500 ms), not a new
process (0.2-0.25 s).
Parsing is CPU-bound and tree-sitter holds the GIL, so a large build spreads files over one
process per core; a small update needs only one (but uses the pool a build made). The
signals' per-chunk analyses (``SignalPlugin.analyze``: the lexical signal's tokenisation) run
in the same processes, so that they too use every core. Chunks come back as plain tuples
(``engine.index.store.ChunkRow``), which cross the process boundary far faster than dataclasses.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.chunking.chunker import chunk_file
from engine.index.store import ChunkRow, DefinitionRow, chunk_row, definition_row
from engine.indexing.source_file import SourceText, read_source
from engine.indexing.workerpool import Failure, WorkerPool, shared_pool
from engine.languages import detect_language
from engine.signal import ChunkAnalyzer

PARALLEL_MIN_FILES = 200  # below this, starting a second worker costs more than it saves
CRASHED = "chunking-crashed"
TIMED_OUT = "chunking-timeout"


@dataclass(frozen=True, slots=True)
class FileTask:
    path: str  # repository-relative
    abs_path: str
    known_hash: str  # the stored content hash, "" when the file is new
    root: str = ""  # the repository root: no link below it is followed on the way to the file


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    """What reading and chunking one file gave. ``status`` says which fields are set."""

    path: str
    status: str  # "chunked", "unchanged" (same hash), or a reason the file was refused
    # (one is CRASHED: chunking it killed the worker process, running alone, twice; one is
    # TIMED_OUT: chunking it ran past engine.indexing.workerpool.TIMEOUT_S, twice)
    content_hash: str = ""
    language: str = ""
    size_bytes: int = 0
    mtime_ns: int = 0
    had_decode_errors: bool = False
    chunks: Sequence[ChunkRow] = ()
    definitions: Sequence[DefinitionRow] = ()
    # Signal name -> what its analyzer gave, one result per chunk; a signal is missing when
    # its analyzer failed on this file (its builder then analyses the chunks itself).
    analyses: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    error: str = ""


def read_and_chunk(
    task: FileTask, max_file_bytes: int, analyzers: Mapping[str, ChunkAnalyzer] | None = None
) -> ChunkedFile:
    from pathlib import Path

    source = read_source(
        Path(task.abs_path),
        max_file_bytes=max_file_bytes,
        beneath=Path(task.root) if task.root else None,
    )
    if not isinstance(source, SourceText):
        return ChunkedFile(task.path, str(source.reason))
    common = {
        "content_hash": source.content_hash,
        "size_bytes": source.size_bytes,
        "mtime_ns": source.mtime_ns,
        "had_decode_errors": source.had_decode_errors,
    }
    if task.known_hash and task.known_hash == source.content_hash:
        return ChunkedFile(task.path, "unchanged", **common)  # type: ignore[arg-type]
    language = detect_language(task.path)
    if language is None:
        return ChunkedFile(task.path, "unknown-type")
    try:
        chunked = chunk_file(task.path, source.text, language)
    except Exception as exc:  # a chunker bug on one file must not stop the run
        return ChunkedFile(task.path, "chunking-failed", error=f"{type(exc).__name__}: {exc}")
    analyses: dict[str, Sequence[Any]] = {}
    for name, analyze in (analyzers or {}).items():
        try:
            analyses[name] = analyze(chunked.chunks)
        except Exception:  # the signal's builder analyses these chunks again and reports
            continue
    return ChunkedFile(
        task.path,
        "chunked",
        language=language,
        chunks=[chunk_row(d) for d in chunked.chunks],
        definitions=[definition_row(d) for d in chunked.definitions],
        analyses=analyses,
        **common,  # type: ignore[arg-type]
    )


class ChunkFn(Protocol):
    """What a worker runs on one file: ``read_and_chunk``, or a test's stand-in."""

    def __call__(
        self, task: FileTask, max_file_bytes: int, analyzers: Mapping[str, ChunkAnalyzer] | None
    ) -> ChunkedFile: ...


def chunk_files(
    tasks: Sequence[FileTask],
    *,
    max_file_bytes: int,
    workers: int | None = None,
    analyzers: Mapping[str, ChunkAnalyzer] | None = None,
    chunker: ChunkFn = read_and_chunk,
    pool: WorkerPool[FileTask, ChunkedFile] | None = None,
) -> Iterator[ChunkedFile]:
    """Yield one ChunkedFile per task, in task order.

    ``analyzers`` (signal name -> ``SignalPlugin.analyze``) run on each chunked file's chunks.
    ``chunker`` and the analyzers must be module-level functions: they run in the workers.
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if len(tasks) < PARALLEL_MIN_FILES:
        workers = 1
    job = functools.partial(chunker, max_file_bytes=max_file_bytes, analyzers=dict(analyzers or {}))
    pool = pool if pool is not None else shared_pool()
    yield from pool.run(job, tasks, workers=max(1, workers), failed=_failed)


def _failed(task: FileTask, failure: Failure) -> ChunkedFile:
    if failure.kind == "timed-out":
        return ChunkedFile(
            task.path,
            TIMED_OUT,
            error=f"chunking this file ran {failure.detail}, twice; it stays out of the index "
            "until it changes",
        )
    return ChunkedFile(
        task.path,
        CRASHED,
        error=f"the parser crashed ({failure.detail}) on this file, twice; it stays out of the "
        "index until it changes",
    )
