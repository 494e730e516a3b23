"""A file's outline: its definitions with whole ranges, in nesting order, for ``fileOutline``.

The definitions are the chunker's (the store's ``definitions`` table), which every indexed
file with a grammar has whatever index owns its symbols: functions, methods and class-like
definitions, each with its whole range (decorators and the doc comment above through its last
line). Names follow engine.qualified's one scheme, as everywhere else.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.qualified import qualified_name
from engine.types import Definition


class OutlineSource(Protocol):
    """What the outline reads: engine.index.store.ChunkStore has both."""

    def definitions_in_file(self, path: str) -> list[Definition]: ...

    def package_dirs(self) -> frozenset[str]: ...


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One definition of the file. Lines are 1-based and inclusive."""

    name: str  # its own name, e.g. "greet"
    symbol_name: str  # the name within the file, e.g. "Greeter.greet"
    qualified_name: str  # engine.qualified's, e.g. "toy.greeter.Greeter.greet"
    kind: str  # "function", "method", "class", ...
    start_line: int  # the whole definition, decorators and doc comment included
    end_line: int
    line: int  # the line of its name
    depth: int  # 0 at top level, 1 for a member of a top-level definition, ...


def file_outline(source: OutlineSource, path: str) -> list[OutlineEntry]:
    """The definitions of ``path`` (repository-relative, ``/``), parents before their
    members, by start line; [] for a file that is not indexed or has no definitions."""
    return outline_of(source.definitions_in_file(path), source.package_dirs())


def outline_of(definitions: Sequence[Definition], packages: Collection[str]) -> list[OutlineEntry]:
    ordered = sorted(definitions, key=lambda d: (d.start_line, -d.end_line, d.name_line))
    entries: list[OutlineEntry] = []
    open_ends: list[int] = []  # end lines of the enclosing definitions
    for d in ordered:
        while open_ends and open_ends[-1] < d.start_line:
            open_ends.pop()
        entries.append(
            OutlineEntry(
                name=d.name,
                symbol_name=d.qualified_name,
                qualified_name=qualified_name(d.path, d.qualified_name, packages),
                kind=d.kind,
                start_line=d.start_line,
                end_line=d.end_line,
                line=d.name_line,
                depth=len(open_ends),
            )
        )
        open_ends.append(d.end_line)
    return entries
