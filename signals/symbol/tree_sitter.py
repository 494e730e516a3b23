"""The tree-sitter source: the engine's own SCIP index for every file no real index covers.

A first build emits every such file (emitter.py) into ``index.scip`` and reads it back with
``scip.reader.read_index``, like any other index. An update re-emits and re-reads only the
files that changed or that no longer have a real index; the rows of the other files come from
the previous generation's table (their chunk ids are unchanged, since their files are), and
their documents are copied from the previous ``index.scip`` into the new one, so every
generation's ``index.scip`` is complete. Emitting and reading 40k definitions costs seconds,
an update of a few files a fraction of one.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import EngineError
from engine.signal import BuildJob
from scip.errors import ScipError
from scip.reader import ScipIndex, read_index
from signals.symbol.emitter import INDEX_FILE, emit_index, merge_index
from signals.symbol.sources import SourceIndex
from signals.symbol.table import TABLE_FILE, TABLE_VERSION, TREE_SITTER, SymbolRecord, SymbolTable

_FRESH_FILE = "index.fresh.scip"  # this update's documents, merged into index.scip


@dataclass
class TreeSitterIndex:
    source: SourceIndex  # the freshly emitted documents, read back
    reused: list[SymbolRecord] = field(default_factory=list)  # rows of unchanged files
    problems: list[str] = field(default_factory=list)

    @property
    def paths(self) -> set[str]:
        fresh = set(self.source.index.paths) if self.source.index is not None else set()
        return fresh | {r.path for r in self.reused}


def _previous_rows(job: BuildJob) -> list[SymbolRecord]:
    """The previous generation's tree-sitter rows, or [] when it cannot be trusted."""
    previous = job.previous_dir
    if (
        previous is None
        or job.previous_meta.get("table_version") != TABLE_VERSION
        or not (previous / TABLE_FILE).is_file()
        or not (previous / INDEX_FILE).is_file()
    ):
        return []
    try:
        table = SymbolTable.open(previous)
    except EngineError:
        return []
    try:
        return table.records_from(TREE_SITTER)
    finally:
        table.close()


def _emit_and_read(
    job: BuildJob, paths: Collection[str], target: Path
) -> tuple[ScipIndex, list[str]]:
    """Raises ScipError, ValueError or OSError when the index cannot be written or read."""
    _, problems = emit_index(job.definitions, paths, target.parent, job.repo_root, target.name)
    return read_index(target), problems  # may be empty: real indexes covered everything


def tree_sitter_index(job: BuildJob, uncovered: Collection[str]) -> TreeSitterIndex:
    """Emit (or carry over) the definitions of ``uncovered`` files; never raises for data."""
    changed = {*job.changed_paths, *job.removed_paths}
    wanted = set(uncovered)
    reused = [r for r in _previous_rows(job) if r.path in wanted and r.path not in changed]
    kept = {r.path for r in reused}
    output = job.directory / INDEX_FILE
    try:
        index: ScipIndex | None = None
        if kept:
            assert job.previous_dir is not None
            fresh = job.directory / _FRESH_FILE
            try:
                index, problems = _emit_and_read(job, wanted - kept, fresh)
                merge_index(job.previous_dir / INDEX_FILE, kept, fresh, output)
            except ScipError:
                index, reused, kept = None, [], set()  # the previous index is damaged
            finally:
                fresh.unlink(missing_ok=True)
        if index is None:
            index, problems = _emit_and_read(job, wanted, output)
    except (ScipError, ValueError, OSError) as err:
        message = f"tree-sitter symbols not available: {err}"
        problem = f"symbol signal: {message}"
        return TreeSitterIndex(SourceIndex(TREE_SITTER, None, message), [], [problem])
    files = len(index.paths) + len(kept)
    message = (
        f"emitted {len(index.definitions)} definitions in {len(index.paths)} files"
        + (f", kept {len(reused)} in {len(kept)} unchanged files" if kept else "")
        + f"; {files} files in all"
    )
    return TreeSitterIndex(SourceIndex(TREE_SITTER, index, message), reused, problems)
