"""Turn read SCIP indexes into symbol-table rows: file ownership, names, enclosing chunks.

Each file is owned by the first source (in priority order, see sources.py) whose index has a
document for it; only the owner's definitions and references of that file are kept, so a
file is never described twice. A document for a file that is neither in the chunk store nor
on disk (a stale index) is ignored.

A definition maps to the smallest stored chunk of its file whose line range contains the
line of its name; a reference, to the one containing its line. Chunks of one file nest or
are disjoint (they follow the syntax tree), so the containing chunk that starts last is the
smallest; for overlapping chunks this picks one of them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from engine.types import Chunk
from scip.reader import ScipDefinition
from signals.symbol.names import readable_name
from signals.symbol.sources import SourceIndex
from signals.symbol.table import ReferenceRecord, SymbolRecord

# Real indexers define every module (scip-python ``toy/__init__:``) and every file
# (scip-typescript ``src/`shapes.ts`/``) as a symbol; they name files, not code, so they are
# left out. The engine's own module definitions have the kind "module" and stay.
SKIPPED_KINDS = frozenset({"meta", "namespace"})


class ChunkSpans:
    """The stored chunks' line ranges by file, to find the chunk that encloses a line."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        by_path: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
        for chunk in chunks:
            by_path[chunk.path].append((chunk.start_line, -chunk.end_line, chunk.id))
        self._spans: dict[str, list[tuple[int, int, int]]] = {}
        self._starts: dict[str, list[int]] = {}
        for path, spans in by_path.items():
            # Same start: the shorter chunk sorts later, so the backward scan meets it first.
            spans.sort()
            self._spans[path] = spans
            self._starts[path] = [s[0] for s in spans]

    @property
    def paths(self) -> set[str]:
        return set(self._spans)

    def enclosing(self, path: str, line: int) -> int | None:
        spans = self._spans.get(path)
        if not spans:
            return None
        for index in range(bisect_right(self._starts[path], line) - 1, -1, -1):
            _, negative_end, chunk_id = spans[index]
            if -negative_end >= line:
                return chunk_id
        return None


def assign_owners(
    sources: Sequence[SourceIndex], known_paths: Collection[str], repo_root: Path
) -> dict[str, str]:
    """path -> name of the first source whose index covers it."""
    owner: dict[str, str] = {}
    for source in sources:
        if source.index is None:
            continue
        for path in source.index.paths:
            if path in owner:
                continue
            if path in known_paths or (repo_root / path).is_file():
                owner[path] = source.name
    return owner


def foreign(source: SourceIndex, known_paths: Collection[str], repo_root: Path) -> bool:
    """True when ``source`` has documents and none is a file of this repository."""
    if source.index is None or not source.index.paths:
        return False
    return not any(p in known_paths or (repo_root / p).is_file() for p in source.index.paths)


def collect(
    sources: Sequence[SourceIndex],
    owner: dict[str, str],
    spans: ChunkSpans,
    packages: Collection[str] = frozenset(),
) -> tuple[list[SymbolRecord], list[ReferenceRecord]]:
    """The definitions and references of every owned file, with chunks and reference counts.

    ``packages`` are the folders holding an ``__init__.py`` (engine.qualified's scheme names
    every definition: see names.py)."""
    kept: list[tuple[str, ScipDefinition, str]] = []  # (source name, definition, readable)
    for source in sources:
        if source.index is None:
            continue
        for d in source.index.definitions:
            if owner.get(d.path) != source.name or not d.name or d.kind in SKIPPED_KINDS:
                continue
            readable = readable_name(d.path, d.symbol, packages) or d.readable_name
            kept.append((source.name, d, readable))
    defined = {d.symbol for _, d, _ in kept}
    references = [
        ReferenceRecord(r.symbol, r.path, r.line, spans.enclosing(r.path, r.line))
        for source in sources
        if source.index is not None
        for r in source.index.references
        if r.symbol in defined and owner.get(r.path) == source.name
    ]
    counts = Counter(r.symbol for r in references)
    records = [
        SymbolRecord(
            symbol=d.symbol,
            readable=readable,
            name=d.name,
            kind=d.kind,
            path=d.path,
            start_line=d.start_line,
            end_line=d.end_line,
            name_line=d.name_line,
            chunk_id=spans.enclosing(d.path, d.name_line),
            references=counts.get(d.symbol, 0),
            source=name,
        )
        for name, d, readable in kept
    ]
    return records, references
