"""Turn the chunker's tree-sitter definitions into a real ``index.scip`` with scip/emit.py.

The engine's own index is the fallback for every file no real SCIP index covers. It goes
through the same file format and the same reader as a real indexer's output, so the rest of
the signal has one input. A definition that cannot be expressed (an empty name part, a bad
range) is left out and reported; the others are written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from pathlib import Path

from engine.types import Definition
from scip.emit import EmitDefinition, EmitDocument, local_symbol_for, write_index
from scip.errors import ScipError
from scip.ranges import Range, from_lines

INDEX_FILE = "index.scip"
TOOL_NAME = "engine-tree-sitter"


def _emit_definition(definition: Definition) -> EmitDefinition:
    """Raises ``ScipError`` (SymbolError, RangeError) for what SCIP cannot express."""
    line = definition.name_line - 1
    name_range = Range(line, definition.name_start_col, line, definition.name_end_col)
    enclosing: Range | None = None
    if 1 <= definition.start_line <= definition.name_line <= definition.end_line:
        enclosing = from_lines(definition.start_line, definition.end_line)
    symbol = local_symbol_for(definition.path, definition.qualified_name, definition.kind)
    return EmitDefinition(symbol, definition.kind, definition.name, name_range, enclosing)


def emit_index(
    definitions: Sequence[Definition],
    paths: Collection[str],
    directory: Path,
    repo_root: Path,
    filename: str = INDEX_FILE,
) -> tuple[Path, list[str]]:
    """Write ``directory/filename`` for the definitions of ``paths``; return it and problems.

    The index holds one document per path that has at least one definition, in path order.
    """
    by_path: dict[str, list[EmitDefinition]] = defaultdict(list)
    languages: dict[str, str] = {}
    problems: list[str] = []
    wanted = set(paths)
    for definition in definitions:
        if definition.path not in wanted:
            continue
        try:
            emitted = _emit_definition(definition)
        except (ScipError, ValueError) as err:
            problems.append(
                f"{definition.path}:{definition.name_line}: definition "
                f"{definition.qualified_name!r} left out of the symbol index ({err})"
            )
            continue
        by_path[definition.path].append(emitted)
        languages.setdefault(definition.path, definition.language)
    documents = [EmitDocument(path, languages[path], by_path[path]) for path in sorted(by_path)]
    output = directory / filename
    write_index(output, TOOL_NAME, str(repo_root), documents)
    return output, problems


def merge_index(base: Path, keep: Collection[str], addition: Path, output: Path) -> None:
    """Write ``output``: every document of ``addition`` and those of ``base`` in ``keep``.

    Lets an update re-emit only the files that changed and still leave a complete index.
    Raises ``ScipError`` when either input is not a SCIP index.
    """
    from google.protobuf.message import DecodeError

    from scip import scip_pb2

    merged = scip_pb2.Index()
    previous = scip_pb2.Index()
    try:
        merged.ParseFromString(addition.read_bytes())
        previous.ParseFromString(base.read_bytes())
    except (OSError, DecodeError) as err:
        raise ScipError(f"cannot merge SCIP indexes {base} and {addition}: {err}") from err
    wanted = set(keep)
    merged.documents.extend(d for d in previous.documents if d.relative_path in wanted)
    partial = output.with_name(f".{output.name}.partial")
    partial.write_bytes(merged.SerializeToString())
    partial.replace(output)
