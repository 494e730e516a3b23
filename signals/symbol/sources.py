"""Where the symbol signal's SCIP indexes come from, in priority order.

1. ``user-file``: the index the user gave (``IndexOptions.scip_file``);
2. ``repo-index``: an ``index.scip`` at the repository root;
3. ``scip-python`` / ``scip-typescript``: the real indexers that are installed, when
   ``IndexOptions.scip_indexer == "auto"``; a language already fully covered by 1-2 is not
   indexed again;
4. ``tree-sitter``: the engine's own index (see emitter.py), for every file none of the above
   covers. The builder adds it last.

A source that fails (unreadable, truncated or empty file; an indexer that crashes, times out
or writes nothing) becomes a message and a problem line; the other sources are still used.

Real indexers are slow (minutes on a big repository), so an update reruns one only when a file
it reads changed; otherwise the previous generation's copy of its index is hard-linked (never
written to). A run that failed is not retried until such a file changes either: a timeout
would only repeat itself.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from engine.signal import BuildJob, IndexOptions
from scip.errors import ScipError
from scip.indexers import (
    EXTENSIONS,
    IndexerName,
    available_indexers,
    indexers_for,
    run_indexer,
)
from scip.reader import ScipIndex, read_index

USER_FILE = "user-file"
REPO_INDEX = "repo-index"
REPO_INDEX_FILE = "index.scip"

# Files whose change can change what an indexer writes, beyond its own source extensions:
# project configuration, and JavaScript that a tsconfig with allowJs pulls in.
_TRIGGER_SUFFIXES: Mapping[IndexerName, frozenset[str]] = {
    "scip-python": EXTENSIONS["scip-python"] | {".toml", ".cfg"},
    "scip-typescript": EXTENSIONS["scip-typescript"] | {".js", ".jsx", ".mjs", ".cjs", ".json"},
}


@dataclass(frozen=True, slots=True)
class SourceIndex:
    """One source's outcome: its index when usable, and what happened, in one line."""

    name: str
    index: ScipIndex | None
    message: str


@dataclass
class Gathered:
    """Every source but tree-sitter, in priority order, with what to record in the manifest."""

    sources: list[SourceIndex] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Per real indexer: {"status", "file", "message"}; the next update decides reuse from it.
    indexers: dict[str, dict[str, str]] = field(default_factory=dict)

    def usable(self) -> list[SourceIndex]:
        return [s for s in self.sources if s.index is not None]

    def add_failure(self, name: str, message: str) -> None:
        self.sources.append(SourceIndex(name, None, message))
        self.problems.append(f"symbol signal: {message}")


def read_source(path: Path, what: str) -> tuple[ScipIndex | None, str]:
    """(the index, a message) or (None, why it cannot be used)."""
    try:
        index = read_index(path)
    except ScipError as err:
        return None, f"{what} not used: {err}"
    if index.is_empty:
        return None, f"{what} not used: {path} holds no documents"
    return index, f"{what} {path}: {len(index.paths)} documents"


def gather(
    job: BuildJob,
    options: IndexOptions,
    known_paths: Collection[str],
    *,
    bin_dir: Path | None = None,
) -> Gathered:
    """Read or produce every SCIP index except the engine's own (see the module docstring)."""
    gathered = Gathered()
    if options.scip_file is not None:
        index, message = read_source(options.scip_file, "the SCIP file given")
        _add(gathered, USER_FILE, index, message)
    root_index = job.repo_root / REPO_INDEX_FILE
    if root_index.is_file():
        index, message = read_source(root_index, "the repository's index.scip")
        _add(gathered, REPO_INDEX, index, message)
    if options.scip_indexer == "auto":
        covered = {p for s in gathered.usable() if s.index for p in s.index.paths}
        _real_indexers(job, options, known_paths, covered, gathered, bin_dir)
    return gathered


def _add(gathered: Gathered, name: str, index: ScipIndex | None, message: str) -> None:
    if index is None:
        gathered.add_failure(name, message)
    else:
        gathered.sources.append(SourceIndex(name, index, message))
        gathered.problems.extend(f"symbol signal ({name}): {p}" for p in index.problems)


def _touched(name: IndexerName, paths: Sequence[str]) -> bool:
    return any(PurePosixPath(p).suffix in _TRIGGER_SUFFIXES[name] for p in paths)


def _real_indexers(
    job: BuildJob,
    options: IndexOptions,
    known_paths: Collection[str],
    covered: set[str],
    gathered: Gathered,
    bin_dir: Path | None,
) -> None:
    wanted = indexers_for(known_paths)
    previous: Mapping[str, Any] = job.previous_meta.get("indexers", {})
    changed = [*job.changed_paths, *job.removed_paths]
    for available in available_indexers(bin_dir):
        name = available.name
        if name not in wanted:
            continue
        own = [p for p in known_paths if PurePosixPath(p).suffix in EXTENSIONS[name]]
        if own and all(p in covered for p in own):
            gathered.sources.append(
                SourceIndex(name, None, f"{name} not run: its {len(own)} files are covered")
            )
            continue
        state = previous.get(name)
        if (
            isinstance(state, dict)
            and job.previous_dir is not None
            and not _touched(name, changed)
            and _reuse(name, state, job, gathered)
        ):
            continue
        _run(name, job, options, gathered, bin_dir)


def _reuse(name: IndexerName, state: Mapping[str, str], job: BuildJob, gathered: Gathered) -> bool:
    """Carry the previous generation's outcome forward; False when it must run again."""
    assert job.previous_dir is not None
    status = state.get("status", "")
    if status in ("failed", "timeout"):
        message = (
            f"{name} not rerun: no file it reads changed (reindex with --full to retry); "
            f"last run: {state.get('message')}"
        )
        gathered.sources.append(SourceIndex(name, None, message))
        gathered.indexers[name] = {**state}
        return True
    if status != "ok":
        return False
    filename = state.get("file", "")
    previous_file = job.previous_dir / filename
    if not filename or not previous_file.is_file():
        return False
    target = job.directory / filename
    _link(previous_file, target)
    index, message = read_source(target, f"{name}'s index from the previous generation")
    if index is None:
        target.unlink(missing_ok=True)
        return False  # damaged: run the indexer again
    gathered.sources.append(
        SourceIndex(name, index, f"{name}: reused, {len(index.paths)} documents")
    )
    gathered.indexers[name] = {**state}
    return True


def _link(source: Path, target: Path) -> None:
    """Index files are never rewritten in place, so generations can share them."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _run(
    name: IndexerName,
    job: BuildJob,
    options: IndexOptions,
    gathered: Gathered,
    bin_dir: Path | None,
) -> None:
    filename = f"{name}.scip"
    job.progress(name, 0, 0)
    outcome = run_indexer(
        name, job.repo_root, job.directory / filename, options.scip_timeout_s, bin_dir=bin_dir
    )
    state = {"status": outcome.status, "file": filename, "message": outcome.message}
    gathered.indexers[name] = state
    if outcome.status == "skipped":
        gathered.sources.append(SourceIndex(name, None, f"{name} skipped: {outcome.message}"))
        return
    if not outcome.ok or outcome.output is None:
        gathered.add_failure(
            name, f"{outcome.message} ({outcome.seconds:.1f} s); tree-sitter symbols used instead"
        )
        return
    index, message = read_source(outcome.output, f"{name}'s index")
    if index is None:
        state["status"] = "failed"
        gathered.add_failure(name, message)
        return
    _add(gathered, name, index, f"{outcome.message} in {outcome.seconds:.1f} s")
