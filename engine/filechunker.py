"""Read and chunk files, in worker processes when there are many.

Parsing is CPU-bound and tree-sitter holds the GIL, so a large build spreads files over one
process per core; a small incremental update stays in-process to avoid start-up cost. The
signals' per-chunk analyses (``SignalPlugin.analyze``: the lexical signal's tokenisation) run
in the same processes, so that they too use every core. Chunks come back as plain tuples
(``engine.store.ChunkRow``), which cross the process boundary far faster than dataclasses.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from engine.chunking import chunk_file
from engine.languages import detect_language
from engine.reading import SourceText, read_source
from engine.signal import ChunkAnalyzer
from engine.store import ChunkRow, DefinitionRow, chunk_row, definition_row

PARALLEL_MIN_FILES = 200  # below this, worker start-up costs more than it saves
BATCH_FILES = 16


@dataclass(frozen=True, slots=True)
class FileTask:
    path: str  # repository-relative
    abs_path: str
    known_hash: str  # the stored content hash, "" when the file is new


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    """What reading and chunking one file gave. ``status`` says which fields are set."""

    path: str
    status: str  # "chunked", "unchanged" (same hash), or a reason the file was refused
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

    source = read_source(Path(task.abs_path), max_file_bytes=max_file_bytes)
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


def _batch(
    tasks: Sequence[FileTask], max_file_bytes: int, analyzers: Mapping[str, ChunkAnalyzer]
) -> list[ChunkedFile]:
    return [read_and_chunk(t, max_file_bytes, analyzers) for t in tasks]


def chunk_files(
    tasks: Sequence[FileTask],
    *,
    max_file_bytes: int,
    workers: int | None = None,
    analyzers: Mapping[str, ChunkAnalyzer] | None = None,
) -> Iterator[ChunkedFile]:
    """Yield one ChunkedFile per task, in task order.

    ``analyzers`` (signal name -> ``SignalPlugin.analyze``) run on each chunked file's chunks.
    """
    analyzers = dict(analyzers or {})
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if workers < 2 or len(tasks) < PARALLEL_MIN_FILES:
        for task in tasks:
            yield read_and_chunk(task, max_file_bytes, analyzers)
        return
    batches = [tasks[i : i + BATCH_FILES] for i in range(0, len(tasks), BATCH_FILES)]
    # spawn, not fork: the parent may hold threads and open indexes.
    context = multiprocessing.get_context("spawn")
    n = len(batches)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        for results in pool.map(_batch, batches, [max_file_bytes] * n, [analyzers] * n):
            yield from results
