"""Feeding a build from empty to the signals that take their chunks as the files are chunked.

A signal whose builder is a ``StreamingBuilder`` (the lexical one) gets each batch of chunks
as soon as the store has given it ids, so that its indexing runs while the chunking workers
are still busy instead of after them. A stream that fails is dropped and its error kept for
``finish``, which raises it where a failing ``build`` would have raised; a full disk stops
the whole run at once, since every later write would fail too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.index.write_failures import is_write_refused
from engine.indexing.parallel_chunking import ChunkedFile
from engine.signal import BuildReport, ChunkStream, ProgressFn, SignalBuilder, StreamingBuilder
from engine.types import Chunk


class Streams:
    """The open streams of one generation being built, by signal name."""

    def __init__(self) -> None:
        self._open: dict[str, ChunkStream] = {}
        self._failed: dict[str, Exception] = {}

    @classmethod
    def start(
        cls, builders: Sequence[SignalBuilder], generation: Path, progress: ProgressFn
    ) -> Streams:
        """Open a stream for every streaming builder, each in its folder of ``generation``."""
        streams = cls()
        try:
            for builder in builders:
                if not isinstance(builder, StreamingBuilder):
                    continue
                directory = generation / builder.name
                directory.mkdir()
                try:
                    streams._open[builder.name] = builder.start_stream(directory, progress)
                except Exception as exc:
                    streams._fail(builder.name, exc)
        except BaseException:
            streams.abort()
            raise
        return streams

    def __contains__(self, name: object) -> bool:
        return name in self._open or name in self._failed

    def add(self, files: Sequence[ChunkedFile], chunks: Sequence[Chunk]) -> None:
        """``chunks``: the chunks of ``files``, in order, as the store just stored them."""
        for name, stream in list(self._open.items()):
            analyses: list[Any] = []
            for f in files:
                found = f.analyses.get(name)
                if found is None or len(found) != len(f.chunks):
                    found = [None] * len(f.chunks)
                analyses += found
            try:
                stream.add(chunks, analyses)
            except Exception as exc:
                self._fail(name, exc)

    def finish(self, name: str) -> BuildReport:
        """Complete the stream of signal ``name``; raise what made it fail, if it did."""
        failure = self._failed.pop(name, None)
        if failure is not None:
            raise failure
        return self._open.pop(name).finish()

    def abort(self) -> None:
        """Stop every stream not finished yet (the run failed or was interrupted)."""
        for stream in self._open.values():
            with contextlib.suppress(Exception):
                stream.abort()
        self._open.clear()

    def _fail(self, name: str, exc: Exception) -> None:
        stream = self._open.pop(name, None)
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.abort()
        if is_write_refused(exc):
            raise exc
        self._failed[name] = exc
