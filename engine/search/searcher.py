"""The one ranking path: send a query to every signal in parallel, fuse, map hits to chunks.

The CLI, the agent tool and the evaluation harness all search through ``Searcher.search``.
"""

from __future__ import annotations

import fnmatch
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Protocol, runtime_checkable

from engine.errors import UsageError
from engine.search.confidence import low_confidence
from engine.search.definitions import DefinitionSource, qualified_names, whole_definitions
from engine.search.freshness import FileView, checked
from engine.search.fusion import DEFAULT_K, Fused, reciprocal_rank_fusion
from engine.search.ranking.definitions import continues_definition
from engine.search.ranking.mentions import FRAME, Mentions, mention_strength, same_file
from engine.search.ranking.options import DEFAULT_RANKING, RankingOptions
from engine.search.ranking.rerank import RankQuery, rerank
from engine.search.routing import ROUTES, QueryKind, Route, query_kind, tier_weights
from engine.signal import Signal, TieredSignal
from engine.types import (
    Chunk,
    Contribution,
    Filters,
    Location,
    Query,
    QueryVector,
    Result,
    SearchResponse,
    SignalRun,
)

MAX_QUERY_CHARS = 20_000  # longer text (a pasted log) is cut; the head carries the question
MIN_DEPTH = 50  # how many hits each signal is asked for, at least


def depth_for(limit: int, ranking: RankingOptions) -> int:
    """How many hits each signal is asked for: enough to fill ``ranking.candidates``."""
    return max(limit * 3, MIN_DEPTH, ranking.candidates)


class ChunkReader(Protocol):
    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]: ...


def clean_query(text: str) -> str:
    """Query text as the signals receive it: control characters and lone surrogates (which
    UTF-8 cannot encode, so no backend can take them) become spaces; cut to MAX_QUERY_CHARS."""
    clean = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in text)
    return clean[:MAX_QUERY_CHARS]


def _matches(chunk: Chunk | None, location: Location | None, filters: Filters) -> bool:
    path = chunk.path if chunk else (location.path if location else "")
    if filters.path_globs and not any(
        fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, f"{glob.rstrip('/')}/*")
        for glob in filters.path_globs
    ):
        return False
    if chunk is None:
        return not filters.languages and not filters.kinds
    if filters.languages and chunk.language not in filters.languages:
        return False
    return not (filters.kinds and chunk.kind not in filters.kinds)


def _chunk_result(
    repo: str, chunk: Chunk, score: float, contributions: tuple[Contribution, ...]
) -> Result:
    return Result(
        repo=repo,
        path=chunk.path,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        symbol_name=chunk.qualified_name or chunk.name,
        content=chunk.text,
        score=round(score, 4),
        sources=tuple(c.signal for c in contributions),
        chunk_id=chunk.id,
        language=chunk.language,
        kind=chunk.kind,
        contributions=contributions,
        name=chunk.name,
        continued=continues_definition(chunk.kind, chunk.signature, chunk.text),
    )


@runtime_checkable
class FileReader(Protocol):
    """engine.index.store.ChunkStore: a file's chunks, for the mentioned definitions."""

    def chunks_in_file(self, path: str) -> list[Chunk]: ...


class Searcher:
    """Searches one repository's published index with a set of named signals."""

    def __init__(
        self,
        repo: str,
        store: ChunkReader,
        signals: Mapping[str, Signal],
        *,
        weights: Mapping[str, float] | None = None,
        k: int | None = None,
        warnings: Sequence[str] = (),
        ranking: RankingOptions = DEFAULT_RANKING,
        files: FileView | None = None,
    ) -> None:
        self.repo = repo
        self.store = store
        self.signals = dict(signals)
        # None: route by query kind (engine/search/routing.py); given: fixed for every query.
        self.weights = dict(weights) if weights is not None else None
        self.k = k
        self.warnings = list(warnings)
        self.ranking = ranking
        # What the indexed files hold now: every answer is checked against it (freshness.py).
        # None (evaluation, which replays fixed trees): results are taken as indexed.
        self.files = files
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _executor(self) -> ThreadPoolExecutor:
        # Created on first use (a one-shot CLI query with one signal needs none), under a
        # lock because the agent tool searches from several threads at once.
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=max(1, len(self.signals)), thread_name_prefix="signal"
                )
            return self._pool

    def select(self, names: Sequence[str] | None) -> dict[str, Signal]:
        if names is None:
            return dict(self.signals)
        unknown = [n for n in names if n not in self.signals]
        if unknown:
            ready = ", ".join(self.signals) or "none"
            raise UsageError(
                f"signal(s) {', '.join(unknown)} not available for {self.repo} (ready: {ready})"
            )
        return {n: self.signals[n] for n in names}

    def run_signals(
        self, query: Query, depth: int, names: Sequence[str] | None = None
    ) -> list[SignalRun]:
        """Ask each selected signal for ``depth`` hits, in parallel; failures become data."""
        chosen = self.select(names)

        def timed(signal: Signal) -> SignalRun:
            start = time.perf_counter()
            tier = signal.tier if isinstance(signal, TieredSignal) else ""
            try:
                hits = signal.search(query, depth)
            except Exception as exc:  # one broken signal must not sink the query
                elapsed = (time.perf_counter() - start) * 1000
                return SignalRun(signal.name, [], elapsed, f"{type(exc).__name__}: {exc}", tier)
            return SignalRun(signal.name, hits, (time.perf_counter() - start) * 1000, tier=tier)

        if len(chosen) == 1:
            return [timed(next(iter(chosen.values())))]
        futures: list[Future[SignalRun]] = [
            self._executor().submit(timed, s) for s in chosen.values()
        ]
        return [f.result() for f in futures]

    def search(
        self,
        text: str,
        *,
        limit: int = 10,
        signals: Sequence[str] | None = None,
        filters: Filters | None = None,
        ranking: RankingOptions | None = None,
        vectors: Sequence[QueryVector] = (),
    ) -> SearchResponse:
        """``vectors``: the query's embeddings, made by the caller (a cluster's router, which
        embeds once for every shard) from ``clean_query(text)``; the vector signal then
        embeds nothing itself (engine/types.py's ``QueryVector``)."""
        if limit < 1:
            raise UsageError("limit must be at least 1")
        clean = clean_query(text)
        if not clean.strip():
            raise UsageError("the query is empty — say what code you are looking for")
        query = Query(clean, filters or Filters(), tuple(vectors))
        runs = self.run_signals(query, depth_for(limit, ranking or self.ranking), signals)
        kind = query_kind(clean)
        results = self.rank_runs(query, runs, limit, ranking or self.ranking)
        warnings = list(self.warnings)
        if self.files is not None:
            results, stale = checked(results, self.files, self.repo)
            warnings.extend(stale)
        for name in signals or self.signals:
            signal = self.signals.get(name)
            if signal is not None and signal.warning:
                warnings.append(signal.warning)
        warnings.extend(
            f"{run.signal} signal failed: {run.error} — if this repeats, its index may be "
            f"damaged: engine reindex {self.repo} --full rebuilds it"
            for run in runs
            if run.error
        )
        return SearchResponse(
            clean,
            results,
            runs,
            warnings,
            low_confidence=low_confidence(
                runs, results, identifier_query=kind == "identifier", text=clean
            ),
            query_kind=kind,
        )

    def rank_runs(
        self,
        query: Query,
        runs: Sequence[SignalRun],
        limit: int,
        ranking: RankingOptions,
        routes: Mapping[QueryKind, Route] = ROUTES,
    ) -> list[Result]:
        """The second half of ``search``: route by query kind, fuse, re-rank.

        Evaluation replays saved runs through it (with other ``routes`` when tuning them) to
        score a ranking change without asking the signals again.
        """
        kind = query_kind(query.text)
        chosen = routes[kind]
        if ranking.max_per_file is None:
            ranking = replace(ranking, max_per_file=chosen.max_per_file)
        weights = self.weights if self.weights is not None else tier_weights(chosen.weights, runs)
        answered = [run.signal for run in runs if not run.error]
        if answered and all(weights.get(name, 1.0) == 0 for name in answered):
            # Only signals this kind of query leaves out were asked (`--signals symbol` with
            # a question): their own order is the answer, not a tie of zeros.
            weights = dict.fromkeys(answered, 1.0)
        return self.rank(
            runs,
            query.filters,
            limit,
            ranking,
            weights=weights,
            k=self.k if self.k is not None else chosen.k,
            query=RankQuery.of(
                query.text, identifier_query=kind == "identifier", long=kind == "long"
            ),
        )

    def rank(
        self,
        runs: Sequence[SignalRun],
        filters: Filters,
        limit: int,
        ranking: RankingOptions,
        *,
        weights: Mapping[str, float] | None = None,
        k: int | None = None,
        query: RankQuery | None = None,
    ) -> list[Result]:
        """Fuse the signals' runs, map hits to chunks, apply the ranking stage.

        ``weights`` and ``k`` override the searcher's own, for tuning them offline.
        """
        fused = reciprocal_rank_fusion(
            {run.signal: run.hits for run in runs if not run.error},
            weights if weights is not None else (self.weights or {}),
            k=k if k is not None else (self.k or DEFAULT_K),
        )
        candidates = self._results(fused, filters, max(limit * 4, ranking.candidates))
        # Qualified names and whole definitions come from the store (a fake may have none).
        if isinstance(self.store, DefinitionSource):
            candidates = qualified_names(candidates, self.store)
        ranked = rerank(candidates, ranking, limit, query)
        if query is not None and query.mentions and ranking.mention_files > 0:
            extra = self._mentioned(ranked, candidates, query.mentions, ranking)
            if extra:
                if isinstance(self.store, DefinitionSource):
                    extra = qualified_names(extra, self.store)
                ranked = rerank([*candidates, *extra], ranking, limit, query)
        if isinstance(self.store, DefinitionSource):
            return whole_definitions(ranked, self.store)
        return ranked

    def _mentioned(
        self,
        ranked: Sequence[Result],
        candidates: Sequence[Result],
        mentions: Mentions,
        ranking: RankingOptions,
    ) -> list[Result]:
        """The chunks not yet candidates that hold a frame's line, or that in the ranking's
        first files define a name the query mentions, each at a share of its file's best
        fused score (engine/search/ranking/mentions.py)."""
        if not isinstance(self.store, FileReader):
            return []
        known = {r.chunk_id for r in candidates if r.chunk_id is not None}
        best: dict[str, float] = {}
        for r in candidates:
            best[r.path] = max(best.get(r.path, 0.0), r.score)
        top = max(best.values(), default=0.0)
        extra: list[Result] = []

        def add(chunk: Chunk, strength: float, base: float) -> None:
            score = base * ranking.mention_share * strength
            # Found by the ranking stage, not a signal: tagged and explained as "mentions"
            # (raw: the strength of the match; rank: its place among the stage's additions).
            why = Contribution("mentions", len(extra) + 1, strength, ranking.mention_share, score)
            extra.append(_chunk_result(self.repo, chunk, score, (why,)))
            known.add(chunk.id)

        read: dict[str, list[Chunk]] = {}  # each file's chunks, read once per query

        def chunks_in(path: str) -> list[Chunk]:
            if path not in read:
                assert isinstance(self.store, FileReader)
                read[path] = self.store.chunks_in_file(path)
            return read[path]

        for frame in mentions.frames:
            path = self._frame_file(frame.path, best, chunks_in)
            if path is None:
                continue
            holding = [c for c in chunks_in(path) if c.start_line <= frame.line <= c.end_line]
            if holding:
                chunk = min(holding, key=lambda c: c.end_line - c.start_line)
                if chunk.id not in known:
                    add(chunk, FRAME, best.get(path, top))
        for path in list(dict.fromkeys(r.path for r in ranked))[: ranking.mention_files]:
            for chunk in chunks_in(path):
                if chunk.id in known:
                    continue
                strength = mention_strength(chunk.name, chunk.qualified_name, mentions)
                if strength <= 0:
                    continue
                if continues_definition(chunk.kind, chunk.signature, chunk.text):
                    continue
                add(chunk, strength, best.get(path, 0.0))
        return extra

    @staticmethod
    def _frame_file(
        frame_path: str,
        candidates: Mapping[str, float],
        chunks_in: Callable[[str], list[Chunk]],
    ) -> str | None:
        """The indexed file a trace's path names: a candidate's path that it ends like, else
        the longest of its trailing paths (two parts or more) that holds chunks."""
        for path in candidates:
            if same_file(frame_path, path):
                return path
        parts = frame_path.replace("\\", "/").removeprefix("./").lstrip("/").split("/")
        for start in range(len(parts) - 1):
            path = "/".join(parts[start:])
            if chunks_in(path):
                return path
        return None

    def _results(self, fused: list[Fused], filters: Filters, limit: int) -> list[Result]:
        results: list[Result] = []
        # Chunks are read from the store a window at a time, best first: usually the first
        # ``limit`` fused keys fill the list, and the rest (up to 3x as many) are never read.
        chunks: dict[int, Chunk] = {}
        fetched = 0
        for position, item in enumerate(fused):
            if position >= fetched:
                window = fused[fetched : fetched + limit]
                chunks.update(self.store.chunks([f.key for f in window if isinstance(f.key, int)]))
                fetched += len(window)
            chunk = chunks.get(item.key) if isinstance(item.key, int) else None
            location = item.key if isinstance(item.key, Location) else None
            if chunk is None and location is None:
                continue  # a signal still knows a chunk the store no longer has
            if not _matches(chunk, location, filters):
                continue
            sources = tuple(c.signal for c in item.contributions)
            if chunk is not None:
                results.append(_chunk_result(self.repo, chunk, item.score, item.contributions))
            elif location is not None:
                results.append(
                    Result(
                        repo=self.repo,
                        path=location.path,
                        start_line=location.start_line,
                        end_line=location.end_line,
                        symbol_name=item.symbol,
                        qualified_name=item.symbol,
                        content="",
                        score=round(item.score, 4),
                        sources=sources,
                        contributions=item.contributions,
                    )
                )
            if len(results) >= limit:
                break
        return results
