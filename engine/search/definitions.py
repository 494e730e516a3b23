"""What a result's chunk is part of: its qualified name and, when smaller, its whole definition.

Search answers chunks; a chunk may be only part of its definition (a class's header, the
fields between its methods, a window of a long function). Each chunk result gets the
qualified name of engine.qualified's one scheme and, when its definition is larger than the
chunk, that definition's whole range (``Result.definition_start_line``/``_end_line``), read
from the chunk store's definitions of the result's files (one indexed read per file).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from engine.qualified import qualified_name
from engine.types import Definition, Result


@runtime_checkable
class DefinitionSource(Protocol):
    """engine.index.store.ChunkStore has both."""

    def definitions_in_file(self, path: str) -> list[Definition]: ...

    def package_dirs(self) -> frozenset[str]: ...


def qualified_names(results: Sequence[Result], source: DefinitionSource) -> list[Result]:
    """``results`` with ``qualified_name`` set for each chunk of a definition."""
    packages = source.package_dirs()
    return [
        replace(r, qualified_name=qualified_name(r.path, r.symbol_name, packages))
        if r.chunk_id is not None and r.symbol_name and not r.qualified_name
        else r
        for r in results
    ]


def whole_definitions(results: Sequence[Result], source: DefinitionSource) -> list[Result]:
    """``results`` with the whole definition of each chunk that is smaller than it."""
    in_file: dict[str, list[Definition]] = {}
    described: list[Result] = []
    for result in results:
        if result.chunk_id is None or not result.symbol_name:
            described.append(result)
            continue
        definitions = in_file.get(result.path)
        if definitions is None:
            definitions = in_file[result.path] = source.definitions_in_file(result.path)
        whole = _enclosing(definitions, result)
        if whole is None or (whole.start_line, whole.end_line) == (
            result.start_line,
            result.end_line,
        ):
            described.append(result)  # the chunk is its whole definition
            continue
        described.append(
            replace(
                result, definition_start_line=whole.start_line, definition_end_line=whole.end_line
            )
        )
    return described


def _enclosing(definitions: Sequence[Definition], result: Result) -> Definition | None:
    """The smallest definition of the chunk's name whose range holds the chunk."""
    holding = [
        d
        for d in definitions
        if d.qualified_name == result.symbol_name
        and d.start_line <= result.start_line
        and result.end_line <= d.end_line
    ]
    return min(holding, key=lambda d: d.end_line - d.start_line, default=None)
