"""Index a repository: walk, read, chunk, store, build every signal, publish a generation.

An update is incremental: files whose size and mtime are unchanged are not read, files whose
content hash is unchanged are not re-chunked, and signals receive only the chunks added and
the ids removed. Fast signals (lexical, symbol) are published first so that search works as
soon as chunking is done, with a slow signal's quick first tier when it has one (the vector
signal's static vectors, ``TieredBuilder``); slow ones (embedding) follow in a second
generation. Either
generation is published atomically; an interrupted run leaves the previous one in place.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from engine.chunking.chunker import CHUNKER_VERSION
from engine.errors import BuildAborted, IndexCorrupt, IndexIncompatible, UsageError
from engine.index.generations import (
    MANIFEST,
    collect_garbage,
    current_generation,
    link_tree,
    next_generation,
    publish,
    writer_lock,
)
from engine.index.health import signal_damage, store_change, store_stamp
from engine.index.home import Home, RepoEntry
from engine.index.manifest import Manifest, SignalState, read_manifest, write_manifest
from engine.index.store import STORE_FILE, ChunkStore, FileRecord, FileRows
from engine.index.write_failures import is_write_refused, write_failures_explained
from engine.indexing.build_progress import PROGRESS_FILE, ProgressFile
from engine.indexing.freshness import is_racy
from engine.indexing.git_changes import GitSnapshot, Vouched, snapshot, vouched_since
from engine.indexing.job_sources import StoreDefinitions, StoreSource
from engine.indexing.parallel_chunking import ChunkedFile, FileTask, chunk_files
from engine.indexing.streaming import Streams
from engine.indexing.walk import MAX_FILE_BYTES, WalkedFile, walk
from engine.signal import (
    BuildJob,
    BuildReport,
    ConfiguredBuilder,
    IndexOptions,
    ProgressFn,
    SignalBuilder,
    SignalPlugin,
    TieredBuilder,
    no_progress,
)
from engine.types import Chunk

MAX_PROBLEMS = 200  # per-file problems kept in the manifest; the count is always complete
INSERT_BATCH_CHUNKS = 2_000  # chunked files are written to the store in batches of about this


@dataclass
class _Changes:
    """What one update changed in the store, as the signal builders need it."""

    added: list[Chunk] = field(default_factory=list)
    removed_ids: list[int] = field(default_factory=list)
    removed_paths: list[str] = field(default_factory=list)  # deleted or changed files
    changed_paths: list[str] = field(default_factory=list)  # added or changed files
    records_changed: bool = False  # stat data or the refused list changed, chunks maybe not
    # The store was built from empty: ``added`` is every chunk in it, in id order.
    complete: bool = False
    # Signal name -> chunk id -> what the signal's analyzer gave for an added chunk.
    analyses: dict[str, dict[int, Any]] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.added or self.removed_ids or self.removed_paths or self.records_changed)


@dataclass
class IndexReport:
    """What one ``engine index``/``reindex`` run did, for the summary and ``--json``."""

    repo: str
    root: str
    generation: str = ""
    files_indexed: int = 0  # files in the index after the run
    files_added: int = 0
    files_changed: int = 0
    files_removed: int = 0
    files_unchanged: int = 0
    chunks: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    ignore_lines_skipped: int = 0  # lines of ignore files that are not valid patterns
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the builders' BuildReport.warnings
    stage_seconds: dict[str, float] = field(default_factory=dict)
    signals: dict[str, SignalState] = field(default_factory=dict)
    full_rebuild: bool = False
    up_to_date: bool = False  # nothing changed: no new generation was written


def source_commit(root: Path) -> str:
    """The git commit the work tree is at, or "" when it is not a git work tree."""
    if not (root / ".git").exists():
        return ""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _publish(entry: RepoEntry, generation: Path, manifest: Manifest, report: IndexReport) -> None:
    """Write the manifest (with the closed store's stamp), publish the generation and note it
    in the report."""
    manifest = replace(manifest, store_stamp=store_stamp(generation / STORE_FILE))
    # The build's progress is over; a later build writes its own in its own generation.
    (generation / PROGRESS_FILE).unlink(missing_ok=True)
    write_manifest(generation, manifest)
    publish(entry.directory, generation)
    report.generation = generation.name
    report.signals = dict(manifest.signals)


def _add_files(
    store: ChunkStore, files: Sequence[ChunkedFile], changes: _Changes, streams: Streams
) -> None:
    """Write chunked files to the store; note their chunks and analyses in ``changes`` and
    hand the chunks to the ``streams``."""
    if not files:
        return
    added = store.add_files(
        [
            FileRows(
                FileRecord(f.path, f.content_hash, f.language, f.size_bytes, f.mtime_ns),
                f.chunks,
                f.definitions,
            )
            for f in files
        ]
    )
    changes.added += added
    streams.add(files, added)
    first = 0
    for f in files:
        ids = [c.id for c in added[first : first + len(f.chunks)]]
        first += len(f.chunks)
        for name, results in f.analyses.items():
            if name in streams:
                continue  # the stream has them already
            changes.analyses.setdefault(name, {}).update(zip(ids, results, strict=False))


def _attempt(run: Callable[[], BuildReport | None]) -> tuple[BuildReport | None, str]:
    """One signal's build: (its report, "") or (None, why it failed).

    A refused write or an abort is not one signal's failure (every later write fails too, or
    the user asked to stop): it propagates, and the previous generation stays current.
    """
    try:
        return run(), ""
    except Exception as exc:
        if is_write_refused(exc) or isinstance(exc, BuildAborted):
            raise
        return None, f"{type(exc).__name__}: {exc}"


class Indexer:
    def __init__(
        self,
        home: Home,
        plugins: Mapping[str, SignalPlugin],
        options: IndexOptions,
        progress: ProgressFn = no_progress,
    ) -> None:
        self.home = home
        self.plugins = plugins
        self.options = options
        self.progress = progress
        self._builders: list[SignalBuilder] | None = None

    def builders(self) -> list[SignalBuilder]:
        """The signal builders, made on first use and kept: a long-lived indexer (``engine
        watch``) then loads the embedding model once, not on every update."""
        if self._builders is None:
            self._builders = [p.make_builder(self.options) for p in self.plugins.values()]
        return self._builders

    def index(
        self, slug: str, root: Path, *, wait: bool = False, full: bool = False
    ) -> IndexReport:
        """Register ``root`` under ``slug`` (if new) and bring its index up to date."""
        root = root.expanduser()
        if not root.exists():
            raise UsageError(f"{root} does not exist — give the path of a repository folder")
        if not root.is_dir():
            raise UsageError(f"{root} is a file — give the path of a repository folder")
        root = root.resolve()
        existing = self.home.list()
        for entry in existing:
            if entry.slug == slug and entry.root != root:
                raise UsageError(
                    f"{slug} is already registered for {entry.root} — choose another --name, "
                    f"or run engine remove {slug} first"
                )
        with write_failures_explained(slug):
            entry = self.home.register(slug, root)
            with writer_lock(entry.directory, wait=wait, slug=slug):
                return self._update(entry, full=full)

    def reindex(self, slug: str, *, wait: bool = False, full: bool = False) -> IndexReport:
        entry = self.home.get(slug)
        if not entry.root.is_dir():
            raise UsageError(
                f"{entry.root}, the folder {slug} was indexed from, is gone — index it again "
                f"from its new place with engine index PATH --name {slug}"
            )
        with write_failures_explained(slug), writer_lock(entry.directory, wait=wait, slug=slug):
            return self._update(entry, full=full)

    # --- the update itself ------------------------------------------------------------------

    def _previous(
        self, entry: RepoEntry, full: bool, report: IndexReport
    ) -> tuple[Path | None, Manifest]:
        """The generation to start from and its manifest, or (None, ``Manifest()``) for a
        clean build.

        Damage ``engine.index.health`` finds is repaired here, and named in the report's
        problems: a chunk store changed since it was published means a clean build (no row
        of it can be trusted, and the signals were built from the rows before the change); a
        signal whose folder fails its check is marked not ready, so that it is built again
        from the store while the others update as usual.
        """
        clean = None, Manifest()
        if full:
            return clean
        try:
            previous = current_generation(entry.directory)
            if previous is None:
                return clean
            manifest = read_manifest(previous)
        except (IndexCorrupt, IndexIncompatible):
            return clean  # rebuild from scratch rather than trust a broken index
        if manifest.chunker_version != CHUNKER_VERSION:
            return clean
        try:
            store = ChunkStore.open_readonly(previous / STORE_FILE)
        except IndexCorrupt:
            return clean  # a missing or damaged store: rebuild rather than copy it
        try:
            changed = store_change(store, manifest)
        finally:
            store.close()
        if changed:
            report.problems.append(f"{STORE_FILE}: {changed}; rebuilt from the files")
            return clean
        damaged = signal_damage(previous, manifest, self.plugins)
        for name, why in damaged.items():
            report.problems.append(f"{name} signal: {why}; rebuilt from the chunk store")
        states = {
            **manifest.signals,
            **{name: SignalState(False, False, f"damaged: {why}") for name, why in damaged.items()},
        }
        return previous, replace(manifest, signals=states)

    def _update(self, entry: RepoEntry, *, full: bool) -> IndexReport:
        report = IndexReport(repo=entry.slug, root=str(entry.root))
        collect_garbage(entry.directory)
        previous, manifest = self._previous(entry, full, report)
        report.full_rebuild = previous is None

        started = time.perf_counter()
        # Before any file is read, so that the recorded state never claims a later one.
        git = snapshot(entry.root)
        vouched = vouched_since(entry.root, manifest, git) if previous is not None else None
        report.stage_seconds["git"] = time.perf_counter() - started

        started = time.perf_counter()
        self.progress("walking", 0, 0)
        # Before the walk stats any file: a file modified after this is racy next time.
        scanned_at_ns = time.time_ns()
        walked = walk(entry.root, max_file_bytes=MAX_FILE_BYTES)
        skipped: Counter[str] = Counter(str(s.reason) for s in walked.skipped)
        report.ignore_lines_skipped = len(walked.bad_ignore_lines)
        report.problems.extend(bad.describe() for bad in walked.bad_ignore_lines)
        report.stage_seconds["walk"] = time.perf_counter() - started

        builders = self.builders()
        generation = next_generation(entry.directory)
        streams = Streams()
        forward = self.progress
        # For `engine status`, which cannot see an unpublished generation otherwise (a first
        # index of a large repository runs for minutes before anything is published).
        self.progress = ProgressFile(generation, forward)
        try:
            store_path = generation / STORE_FILE
            if previous is not None:
                shutil.copyfile(previous / STORE_FILE, store_path)
            store = ChunkStore.open_writable(store_path)
            try:
                if previous is None:  # a build from empty: index while chunking
                    fast = [b for b in builders if not b.slow]
                    streams = Streams.start(fast, generation, self.progress)
                started = time.perf_counter()
                changes = self._sync_store(
                    store,
                    walked.files,
                    report,
                    skipped,
                    vouched,
                    streams,
                    Path(walked.root),
                    manifest.scanned_at_ns,
                )
                changes.complete = previous is None
                report.stage_seconds["read+chunk"] = time.perf_counter() - started
                report.files_indexed = store.file_count()
                report.chunks = store.chunk_count()
                report.skipped = dict(sorted(skipped.items()))
                if (
                    previous is not None
                    and changes.empty()
                    and self._all_synced(manifest)
                    and not self._settings_changed(builders, manifest)
                ):
                    store.close()
                    shutil.rmtree(generation)
                    report.generation = previous.name
                    report.signals = dict(manifest.signals)
                    report.up_to_date = True
                    return report
                # Before the builders run: the problems kept are the walk's and the reader's.
                fields = self._manifest(entry, store, report, scanned_at_ns, git)
                states = self._run_builders(
                    [b for b in builders if not b.slow],
                    store,
                    entry,
                    generation,
                    previous,
                    manifest,
                    changes,
                    report,
                    streams,
                )
                for builder in builders:
                    if builder.slow:
                        states[builder.name] = self._first_tier(
                            builder, store, entry, generation, previous, manifest, changes, report
                        ) or self._carry_forward(builder.name, generation, previous, manifest)
                new_manifest = replace(fields, signals=states)
            finally:
                store.close()
            _publish(entry, generation, new_manifest, report)
        except BaseException:
            streams.abort()
            shutil.rmtree(generation, ignore_errors=True)
            raise
        finally:
            self.progress = forward

        # A first tier that is complete (``BuildReport.complete``) needs no slow build.
        slow = [b for b in builders if b.slow and not new_manifest.signal(b.name).synced]
        if slow:
            self._slow_phase(
                slow, entry, generation, new_manifest, previous, manifest, changes, report
            )
        collect_garbage(entry.directory)
        return report

    def _settings_changed(self, builders: Sequence[SignalBuilder], manifest: Manifest) -> bool:
        """True when a builder was given settings other than those its signal was built with."""
        return any(
            isinstance(b, ConfiguredBuilder) and b.settings_changed(manifest.signal(b.name).meta)
            for b in builders
        )

    def _all_synced(self, manifest: Manifest) -> bool:
        """True when every registered signal is built and in step with the store."""
        return all(
            manifest.signal(name).ready and manifest.signal(name).synced for name in self.plugins
        )

    def _sync_store(
        self,
        store: ChunkStore,
        files: Sequence[WalkedFile],
        report: IndexReport,
        skipped: Counter[str],
        vouched: Vouched | None = None,
        streams: Streams | None = None,
        root: Path | None = None,
        scanned_at_ns: int = 0,
    ) -> _Changes:
        """Bring the store in line with the walked files; return what changed.

        A file whose stat changed is read unless git ``vouched`` for its content; so is a
        file whose stat is unchanged but racy (``is_racy``: modified too shortly before the
        scan at ``scanned_at_ns`` that recorded it for the stat to prove anything).
        """
        streams = streams if streams is not None else Streams()
        root_str = str(root) if root is not None else ""
        known = store.files()
        refused_before = store.unindexed()
        refused: dict[str, tuple[str, int, int]] = {}
        changes = _Changes()
        kept: set[str] = set()
        tasks: list[FileTask] = []
        stats: dict[str, tuple[int, int]] = {}
        for walked in files:
            stat = stats[walked.path] = (walked.size_bytes, walked.mtime_ns)
            record = known.get(walked.path)
            if (
                record is not None
                and (record.size_bytes, record.mtime_ns) == stat
                and not is_racy(record.mtime_ns, scanned_at_ns)
            ):
                kept.add(walked.path)
                report.files_unchanged += 1
                continue
            if (
                record is not None
                and vouched is not None
                and vouched.covers(walked.path, record.mtime_ns)
            ):
                store.touch_file(walked.path, *stat)
                changes.records_changed = True
                kept.add(walked.path)
                report.files_unchanged += 1
                continue
            before = refused_before.get(walked.path)
            if record is None and before is not None and before[1:] == stat:
                refused[walked.path] = before
                skipped[before[0]] += 1
                continue
            known_hash = record.content_hash if record else ""
            tasks.append(FileTask(walked.path, str(walked.abs_path), known_hash, root_str))
        total = len(tasks)
        self.progress("chunking", 0, total)
        analyzers = {n: p.analyze for n, p in self.plugins.items() if p.analyze is not None}
        results = chunk_files(tasks, max_file_bytes=MAX_FILE_BYTES, analyzers=analyzers)
        pending: list[ChunkedFile] = []
        pending_chunks = 0
        for done, result in enumerate(results, 1):
            if done % 50 == 0:
                self.progress("chunking", done, total)
            path = result.path
            if result.status == "unchanged":
                record = known[path]
                if (record.size_bytes, record.mtime_ns) != (result.size_bytes, result.mtime_ns):
                    store.touch_file(path, result.size_bytes, result.mtime_ns)
                    changes.records_changed = True
                kept.add(path)
                report.files_unchanged += 1
                continue
            if result.status != "chunked":
                skipped[result.status] += 1
                refused[path] = (result.status, *stats[path])
                if result.error:
                    report.problems.append(f"{path}: {result.status} ({result.error})")
                continue
            if result.had_decode_errors:
                report.problems.append(f"{path}: undecodable bytes replaced")
            if path in known:
                changes.removed_ids.extend(store.remove_files([path]))
                changes.removed_paths.append(path)
                report.files_changed += 1
            else:
                report.files_added += 1
            kept.add(path)
            changes.changed_paths.append(path)
            pending.append(result)
            pending_chunks += len(result.chunks)
            if pending_chunks >= INSERT_BATCH_CHUNKS:
                _add_files(store, pending, changes, streams)
                pending, pending_chunks = [], 0
        _add_files(store, pending, changes, streams)
        if refused != refused_before:
            store.set_unindexed(refused)
            changes.records_changed = True
        gone = [path for path in known if path not in kept]
        changes.removed_ids.extend(store.remove_files(gone))
        changes.removed_paths.extend(gone)
        report.files_removed = len(gone)
        report.chunks_added = len(changes.added)
        report.chunks_removed = len(changes.removed_ids)
        self.progress("chunking", total, total)
        return changes

    def _manifest(
        self,
        entry: RepoEntry,
        store: ChunkStore,
        report: IndexReport,
        scanned_at_ns: int,
        git: GitSnapshot | None,
    ) -> Manifest:
        """Everything but the signals' states."""
        manifest = Manifest(
            chunker_version=CHUNKER_VERSION,
            repo=entry.slug,
            root=str(entry.root),
            built_at=datetime.now(UTC).isoformat(timespec="seconds"),
            source_commit=source_commit(entry.root),
            files=report.files_indexed,
            chunks=report.chunks,
            languages=store.language_counts(),
            skipped=report.skipped,
            problems=tuple(report.problems[:MAX_PROBLEMS]),
            scanned_at_ns=scanned_at_ns,
        )
        return git.recorded_in(manifest) if git is not None else manifest

    def _new_job(
        self,
        builder: SignalBuilder,
        store: ChunkStore,
        entry: RepoEntry,
        generation: Path,
        previous: Path | None,
        manifest: Manifest,
        changes: _Changes,
    ) -> BuildJob:
        """The job for ``builder`` in a new, empty folder of ``generation``."""
        directory = generation / builder.name
        directory.mkdir()
        previous_dir = previous / builder.name if previous else None
        previous_state = manifest.signal(builder.name)
        incremental = (
            previous_dir is not None
            and previous_dir.is_dir()
            and previous_state.ready
            and previous_state.synced
        )
        every_chunk = changes.added if changes.complete else None
        source = StoreSource(store, every_chunk)

        def progress(stage: str, done: int, total: int) -> None:
            self.progress(stage, done, total)

        return BuildJob(
            repo_root=entry.root,
            directory=directory,
            previous_dir=previous_dir if incremental else None,
            previous_meta=dict(previous_state.meta) if incremental else {},
            added=changes.added if incremental else list(source.iter_chunks()),
            removed_ids=changes.removed_ids if incremental else [],
            removed_paths=changes.removed_paths if incremental else [],
            definitions=StoreDefinitions(store),
            changed_paths=changes.changed_paths,
            source=source,
            progress=progress,
            analyses=changes.analyses.get(builder.name, {}),
        )

    def _run_builders(
        self,
        builders: Sequence[SignalBuilder],
        store: ChunkStore,
        entry: RepoEntry,
        generation: Path,
        previous: Path | None,
        manifest: Manifest,
        changes: _Changes,
        report: IndexReport,
        streams: Streams | None = None,
    ) -> dict[str, SignalState]:
        """Build each signal (``build``, or ``finish`` of its stream if it has one)."""
        states: dict[str, SignalState] = {}
        streams = streams if streams is not None else Streams()
        for builder in builders:
            directory = generation / builder.name
            if builder.name in streams:
                run: Callable[[], BuildReport] = partial(streams.finish, builder.name)
            else:
                job = self._new_job(builder, store, entry, generation, previous, manifest, changes)
                run = partial(builder.build, job)
            started = time.perf_counter()
            built, error = _attempt(run)
            if built is None:  # one failing signal leaves the others usable
                shutil.rmtree(directory, ignore_errors=True)
                directory.mkdir()
                built = BuildReport(ready=False, message=f"failed: {error}")
                report.problems.append(f"{builder.name} signal: {built.message}")
            seconds = time.perf_counter() - started
            report.stage_seconds[builder.name] = seconds
            report.problems.extend(built.problems[:MAX_PROBLEMS])
            report.warnings.extend(built.warnings)
            states[builder.name] = SignalState(
                ready=built.ready,
                synced=built.ready,
                message=built.message,
                meta=built.meta,
                seconds=round(seconds, 3),
            )
        return states

    def _first_tier(
        self,
        builder: SignalBuilder,
        store: ChunkStore,
        entry: RepoEntry,
        generation: Path,
        previous: Path | None,
        manifest: Manifest,
        changes: _Changes,
        report: IndexReport,
    ) -> SignalState | None:
        """A slow signal's quick first tier, published with the fast signals; None when it
        has none (or it failed: the slow build then runs as before)."""
        if not isinstance(builder, TieredBuilder):
            return None
        job = self._new_job(builder, store, entry, generation, previous, manifest, changes)
        started = time.perf_counter()
        built, error = _attempt(partial(builder.build_first_tier, job))
        if error:
            report.problems.append(f"{builder.name} signal: first tier failed: {error}")
        if built is None or not built.ready:
            shutil.rmtree(job.directory, ignore_errors=True)
            return None
        seconds = time.perf_counter() - started
        report.stage_seconds[f"{builder.name} (first tier)"] = seconds
        report.problems.extend(built.problems[:MAX_PROBLEMS])
        return SignalState(
            ready=True,
            synced=built.complete,
            message=built.message,
            meta=built.meta,
            seconds=round(seconds, 3),
        )

    def _carry_forward(
        self, name: str, generation: Path, previous: Path | None, manifest: Manifest
    ) -> SignalState:
        """Keep a slow signal searchable (slightly stale) while it is being rebuilt."""
        old = manifest.signal(name)
        directory = generation / name
        if previous is not None and old.ready and (previous / name).is_dir():
            link_tree(previous / name, directory)
            return replace(old, synced=False, message="updating")
        directory.mkdir()
        return SignalState(ready=False, synced=False, message="pending")

    def _slow_phase(
        self,
        builders: Sequence[SignalBuilder],
        entry: RepoEntry,
        fast_generation: Path,
        fast_manifest: Manifest,
        previous: Path | None,
        manifest: Manifest,
        changes: _Changes,
        report: IndexReport,
    ) -> None:
        """Build slow signals into one more generation, linked from the one just published."""
        names = {b.name for b in builders}
        generation = next_generation(entry.directory)
        try:
            for child in fast_generation.iterdir():
                if child.name in names or child.name == MANIFEST:
                    continue
                if child.is_dir():
                    link_tree(child, generation / child.name)
                else:
                    os.link(child, generation / child.name)
            store = ChunkStore.open_readonly(generation / STORE_FILE)
            forward = self.progress
            # For `engine status`, which cannot see an unpublished generation otherwise.
            self.progress = ProgressFile(generation, forward)
            try:
                states = self._run_builders(
                    builders, store, entry, generation, previous, manifest, changes, report
                )
            finally:
                self.progress = forward
                store.close()
            for name, state in list(states.items()):
                first = fast_manifest.signal(name)
                if not state.ready and first.ready:
                    # The slow build failed: the first tier (or the carried-forward index)
                    # keeps answering, and the next run tries again (it is not synced).
                    shutil.rmtree(generation / name, ignore_errors=True)
                    link_tree(fast_generation / name, generation / name)
                    states[name] = replace(first, message=f"{first.message}; {state.message}")
            new_manifest = replace(fast_manifest, signals={**fast_manifest.signals, **states})
            _publish(entry, generation, new_manifest, report)
        except BaseException:
            shutil.rmtree(generation, ignore_errors=True)
            raise
