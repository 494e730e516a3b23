"""Builds the symbol signal's table in a new generation, from every SCIP source it can get.

Every update writes the table whole, from the sources (sources.py: the user's file, the
repository's index.scip, real indexers, their output reused when nothing they read changed)
and the engine's own tree-sitter index for the rest (tree_sitter.py, which re-emits only
changed files). Nothing here raises for a bad index or indexer: the problems are reported and
tree-sitter symbols cover what is missing.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from engine.signal import BuildJob, BuildReport, IndexOptions
from engine.types import SYMBOL
from signals.symbol.names import packages_on_disk, readable_name
from signals.symbol.records import ChunkSpans, assign_owners, collect, foreign
from signals.symbol.sources import gather
from signals.symbol.table import TABLE_FILE, TABLE_VERSION, TREE_SITTER, write_table
from signals.symbol.tree_sitter import tree_sitter_index


class SymbolBuilder:
    name = SYMBOL
    slow = False

    def __init__(self, options: IndexOptions, *, bin_dir: Path | None = None) -> None:
        self.options = options
        self.bin_dir = bin_dir  # where to look for real indexers first (tests); None: default

    def build(self, job: BuildJob) -> BuildReport:
        started = time.perf_counter()
        job.progress(SYMBOL, 0, 0)
        spans = ChunkSpans(job.source.iter_chunks())
        known = spans.paths | {d.path for d in job.definitions}
        gathered = gather(job, self.options, known, bin_dir=self.bin_dir)
        sources = gathered.usable()
        owner = assign_owners(sources, known, job.repo_root)
        problems = [*gathered.problems]
        problems += [
            f"symbol signal: {s.name}: none of its {len(s.index.paths)} documents is a file of "
            f"this repository (was the index made for another folder?)"
            for s in sources
            if s.index is not None and foreign(s, known, job.repo_root)
        ]

        tree_sitter = tree_sitter_index(job, {d.path for d in job.definitions} - owner.keys())
        if tree_sitter.source.index is not None:
            sources.append(tree_sitter.source)
            owner.update(dict.fromkeys(tree_sitter.paths, TREE_SITTER))

        packages = packages_on_disk(job.repo_root, known)
        records, references = collect(sources, owner, spans, packages)
        # Rows carried over keep their lines and chunks, but a package added or removed
        # elsewhere changes their module: their names are made again.
        records.extend(
            replace(r, readable=readable_name(r.path, r.symbol, packages) or r.readable)
            for r in tree_sitter.reused
        )
        # One order whatever was reused, so that ties rank the same after any update.
        records.sort(key=lambda r: (r.path, r.name_line, r.symbol))
        write_table(job.directory / TABLE_FILE, records, references)

        covered = Counter(owner.values())
        all_sources = [*gathered.sources, tree_sitter.source]
        counts = {s.name: covered.get(s.name, 0) for s in all_sources}
        seconds = time.perf_counter() - started
        job.progress(SYMBOL, 1, 1)
        summary = ", ".join(f"{name} {n} files" for name, n in counts.items() if n)
        return BuildReport(
            ready=True,
            meta={
                "table_version": TABLE_VERSION,
                "sources": counts,
                "source_messages": {s.name: s.message for s in all_sources},
                "indexers": gathered.indexers,
                "definitions": len(records),
                "references": len(references),
                "seconds": round(seconds, 3),
            },
            problems=[*problems, *tree_sitter.problems],
            message=f"{len(records)} definitions ({summary or 'no files'})",
        )
