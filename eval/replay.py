"""Saved signal runs, replayed through the ranking stage without the index they came from.

A swebench-dev pass reindexes a checkout per base commit (hours for sympy's 77), so a ranking
idea scored the live way costs a pass. Instead a pass can save, per instance, each query's
signal runs (asked ``SAVE_DEPTH`` deep, so a deeper-candidates idea is a cut of them) with
every chunk they name, the whole files the runs rank first and the definitions of every file
they touch: all the ranking stage reads of the store. ``Searcher.rank_runs`` over a
``ReplayStore`` then ranks exactly as it did live, in milliseconds.

One gzip'd JSON file per instance, ``<id>.json.gz``.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from engine.types import Chunk, Definition, Hit, Location, SignalRun

SAVE_DEPTH = 200  # hits saved per signal: a replay may cut them to any depth up to this
WHOLE_FILES = 30  # per signal, the first this many distinct files are saved whole
FORMAT = 1


class ReplayMiss(LookupError):
    """A ranking feature asked for a file the pass did not save whole."""


class SourceStore(Protocol):
    """What a pass reads from the live chunk store (engine.index.store.ChunkStore)."""

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]: ...

    def chunks_in_file(self, path: str) -> list[Chunk]: ...

    def definitions_in_file(self, path: str) -> list[Definition]: ...

    def package_dirs(self) -> frozenset[str]: ...


@dataclass(frozen=True, slots=True)
class SavedQuery:
    variant: str  # the text variant's name ("as-is", "code")
    text: str  # the query as the signals received it
    runs: list[SignalRun]


class ReplayStore:
    """The chunk store as one pass saw it: the chunks its runs named, some files whole."""

    def __init__(
        self,
        chunks: Mapping[int, Chunk],
        whole_files: Iterable[str],
        definitions: Mapping[str, list[Definition]],
        packages: frozenset[str],
        *,
        strict: bool = True,
    ) -> None:
        """``strict``: a file not saved whole raises ReplayMiss; otherwise it reads as a file
        without chunks and is listed in ``missed`` (a stack frame's path is looked up by its
        trailing parts, most of which name no file)."""
        self.strict = strict
        self.missed: set[str] = set()
        self._chunks = dict(chunks)
        self._whole = frozenset(whole_files)
        self._definitions = dict(definitions)
        self._packages = packages

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]:
        return {i: self._chunks[i] for i in ids if i in self._chunks}

    def chunks_in_file(self, path: str) -> list[Chunk]:
        if path not in self._whole:
            if not self.strict:
                self.missed.add(path)
                return []
            raise ReplayMiss(f"{path} was not saved whole (only the runs' first files are)")
        return sorted(
            (c for c in self._chunks.values() if c.path == path), key=lambda c: c.start_line
        )

    def definitions_in_file(self, path: str) -> list[Definition]:
        return list(self._definitions.get(path, ()))

    def package_dirs(self) -> frozenset[str]:
        return self._packages


def _first_files(run: SignalRun, chunks: Mapping[int, Chunk], n: int) -> list[str]:
    files: dict[str, None] = {}
    for hit in run.hits:
        chunk = chunks.get(hit.chunk_id) if hit.chunk_id is not None else None
        path = chunk.path if chunk else (hit.location.path if hit.location else None)
        if path is not None:
            files[path] = None
            if len(files) >= n:
                break
    return list(files)


def snapshot(store: SourceStore, queries: Sequence[SavedQuery], **meta: Any) -> dict[str, Any]:
    """Everything ``queries``' replay reads of ``store``, as JSON-ready data."""
    ids = sorted(
        {h.chunk_id for q in queries for run in q.runs for h in run.hits if h.chunk_id is not None}
    )
    chunks = dict(store.chunks(ids))
    whole = list(
        dict.fromkeys(
            path
            for q in queries
            for run in q.runs
            for path in _first_files(run, chunks, WHOLE_FILES)
        )
    )
    for path in whole:
        chunks.update((c.id, c) for c in store.chunks_in_file(path))
    touched = {c.path for c in chunks.values()} | {
        h.location.path for q in queries for run in q.runs for h in run.hits if h.location
    }
    return {
        "format": FORMAT,
        **meta,
        "queries": [
            {"variant": q.variant, "text": q.text, "runs": [_run_json(r) for r in q.runs]}
            for q in queries
        ],
        "chunks": [asdict(c) for c in chunks.values()],
        "wholeFiles": whole,
        "definitions": {
            p: [asdict(d) for d in store.definitions_in_file(p)] for p in sorted(touched)
        },
        "packages": sorted(store.package_dirs()),
    }


def _run_json(run: SignalRun) -> dict[str, Any]:
    return {
        "signal": run.signal,
        "latencyMs": run.latency_ms,
        "error": run.error,
        "tier": run.tier,
        "hits": [
            [h.chunk_id, h.score, h.symbol, asdict(h.location) if h.location else None]
            for h in run.hits
        ],
    }


def _run(data: Mapping[str, Any]) -> SignalRun:
    hits = [
        Hit(chunk_id, score, symbol, Location(**location) if location else None)
        for chunk_id, score, symbol, location in data["hits"]
    ]
    return SignalRun(data["signal"], hits, data["latencyMs"], data["error"], data["tier"])


def save(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` to ``path`` through a temporary sibling, so a stopped pass leaves no
    half file."""
    tmp = path.with_name(path.name + ".partial")
    tmp.write_bytes(gzip.compress(orjson.dumps(data), compresslevel=6))
    tmp.replace(path)


@dataclass(frozen=True, slots=True)
class Saved:
    meta: dict[str, Any]
    queries: list[SavedQuery]
    store: ReplayStore


def load(path: Path, *, strict: bool = True) -> Saved:
    data = orjson.loads(gzip.decompress(path.read_bytes()))
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: replay format {data.get('format')}, expected {FORMAT}")
    chunks = {c["id"]: Chunk(**c) for c in data["chunks"]}
    definitions = {p: [Definition(**d) for d in ds] for p, ds in data["definitions"].items()}
    store = ReplayStore(
        chunks, data["wholeFiles"], definitions, frozenset(data["packages"]), strict=strict
    )
    queries = [
        SavedQuery(q["variant"], q["text"], [_run(r) for r in q["runs"]]) for q in data["queries"]
    ]
    meta = {
        k: v
        for k, v in data.items()
        if k not in {"queries", "chunks", "wholeFiles", "definitions", "packages"}
    }
    return Saved(meta, queries, store)


def cut(runs: Sequence[SignalRun], depth: int) -> list[SignalRun]:
    """The runs as a signal asked ``depth`` deep would have returned them."""
    return [SignalRun(r.signal, r.hits[:depth], r.latency_ms, r.error, r.tier) for r in runs]
