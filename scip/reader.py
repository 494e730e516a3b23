"""Read a SCIP index file into plain dataclasses: definitions, references and tool info.

Only global symbols are kept: ``local N`` symbols are private to one document and carry no
name. Definitions of parameters and type parameters are left out unless asked for, because
their readable name is their function's.

A file that cannot be an index (missing, empty, truncated, not protobuf, not SCIP) raises
``ScipError``. Problems inside a readable index (a bad range, a symbol that does not parse, an
absolute document path) skip that occurrence or document and are listed in
``ScipIndex.problems``. An index with no documents is valid and reported as such: see
``ScipIndex.is_empty``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from google.protobuf.message import DecodeError

from scip import scip_pb2
from scip.errors import RangeError, ScipError, SymbolError
from scip.ranges import Range, decode_range, to_lines
from scip.symbols import DescriptorSuffix, Symbol, is_local_symbol, parse_symbol, readable_name

DEFINITION_ROLE = 0x1  # SymbolRole.Definition

_CODE_FENCE = re.compile(r"^```[^\n]*\n(?P<code>.*?)\n?```\s*$", re.DOTALL)
_KIND_WORD = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class ToolInfo:
    name: str
    version: str
    arguments: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScipDefinition:
    """Where a global symbol is defined. Ranges are SCIP's (0-based, half-open)."""

    symbol: str  # the full SCIP symbol string
    readable_name: str  # e.g. "toy.greeter.Greeter.__init__"; see scip.symbols
    name: str  # the last descriptor's name, e.g. "__init__"
    path: str  # the document's repository-relative path, '/' separated
    name_range: Range
    enclosing_range: Range | None  # the whole definition, when the indexer gave it
    start_line: int  # 1-based inclusive: enclosing range if any, else name range
    end_line: int  # 1-based inclusive
    name_line: int  # 1-based line of the name
    suffix: DescriptorSuffix  # the last descriptor's suffix
    kind: str  # SCIP Kind in snake case ("class", "static_method"); when unset, see _suffix_kind
    display_name: str = ""  # the indexer's display name; often ""
    signature: str = ""  # the code block that leads the documentation, "" when none
    documentation: str = ""  # first line of the prose documentation, "" when none
    implements: tuple[str, ...] = ()  # symbols this one implements (is_implementation)


@dataclass(frozen=True, slots=True)
class ScipReference:
    """An occurrence of a global symbol that does not define it."""

    symbol: str
    path: str  # repository-relative, '/' separated
    range: Range  # 0-based, half-open
    line: int  # 1-based line where the reference starts
    roles: int  # SymbolRole bitset (Import 0x2, WriteAccess 0x4, ReadAccess 0x8, ...)


@dataclass(frozen=True, slots=True)
class ScipIndex:
    source: str  # the file it was read from, or "<bytes>"
    tool: ToolInfo
    project_root: str  # URI of the indexed directory, as the indexer wrote it
    paths: tuple[str, ...]  # every document's relative path, in index order
    definitions: list[ScipDefinition]
    references: list[ScipReference]
    problems: list[str] = field(default_factory=list)  # "path: what was skipped and why"

    @property
    def is_empty(self) -> bool:
        """True when the index holds no documents (an indexer that found nothing to do)."""
        return not self.paths


def read_index(path: Path, *, include_parameters: bool = False) -> ScipIndex:
    """Read ``path``; raises ``ScipError`` when it is missing or not a SCIP index."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ScipError(f"cannot read SCIP index {path}: {err.strerror or err}") from err
    return read_index_bytes(data, source=str(path), include_parameters=include_parameters)


def read_index_bytes(
    data: bytes, *, source: str = "<bytes>", include_parameters: bool = False
) -> ScipIndex:
    """Parse serialized ``scip.Index`` bytes; ``source`` names them in error messages."""
    if not data:
        raise ScipError(f"SCIP index {source} is empty (0 bytes): the indexer wrote nothing")
    index = scip_pb2.Index()
    try:
        index.ParseFromString(data)
    except DecodeError as err:
        raise ScipError(
            f"SCIP index {source} is truncated or not a SCIP file ({len(data)} bytes): {err}"
        ) from err
    if not index.HasField("metadata") and not index.documents:
        raise ScipError(f"{source} is not a SCIP index: it has no metadata and no documents")
    collected = _Collected()
    paths: list[str] = []
    for document in index.documents:
        relative = _relative_path(document.relative_path)
        if relative is None:
            collected.problems.append(f"{document.relative_path!r}: not a relative path; skipped")
            continue
        paths.append(relative)
        _read_document(document, relative, include_parameters, collected)
    tool = index.metadata.tool_info
    return ScipIndex(
        source=source,
        tool=ToolInfo(tool.name, tool.version, tuple(tool.arguments)),
        project_root=index.metadata.project_root,
        paths=tuple(paths),
        definitions=collected.definitions,
        references=collected.references,
        problems=collected.problems,
    )


@dataclass(slots=True)
class _Collected:
    definitions: list[ScipDefinition] = field(default_factory=list)
    references: list[ScipReference] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _relative_path(raw: str) -> str | None:
    path = PurePosixPath(raw.replace("\\", "/"))
    if not raw or path.is_absolute() or ".." in path.parts or str(path) == ".":
        return None
    return str(path)


def _read_document(
    document: scip_pb2.Document, path: str, include_parameters: bool, out: _Collected
) -> None:
    infos = {info.symbol: info for info in document.symbols}
    for occurrence in document.occurrences:
        symbol_string = occurrence.symbol
        if not symbol_string or is_local_symbol(symbol_string):
            continue
        try:
            name_range = decode_range(occurrence.range)
        except RangeError as err:
            out.problems.append(f"{path}: {err}; occurrence of {symbol_string} skipped")
            continue
        if not occurrence.symbol_roles & DEFINITION_ROLE:
            # References keep their symbol string unparsed: parsing every one costs more
            # than the rest of reading, and a caller matches them against definitions.
            line = name_range.start_line + 1
            out.references.append(
                ScipReference(symbol_string, path, name_range, line, occurrence.symbol_roles)
            )
            continue
        try:
            symbol = parse_symbol(symbol_string)
        except SymbolError as err:
            out.problems.append(f"{path}: {err}; definition skipped")
            continue
        suffix = symbol.descriptors[-1].suffix
        if suffix in ("parameter", "type_parameter") and not include_parameters:
            continue
        enclosing: Range | None = None
        if occurrence.enclosing_range:
            try:
                enclosing = decode_range(occurrence.enclosing_range)
            except RangeError as err:
                out.problems.append(f"{path}: {err} (enclosing range of {symbol_string})")
        out.definitions.append(
            _definition(symbol_string, symbol, path, name_range, enclosing, infos)
        )


def _definition(
    symbol_string: str,
    symbol: Symbol,
    path: str,
    name_range: Range,
    enclosing: Range | None,
    infos: dict[str, scip_pb2.SymbolInformation],
) -> ScipDefinition:
    start_line, end_line = to_lines(enclosing or name_range)
    suffix = symbol.descriptors[-1].suffix
    info = infos.get(symbol_string)
    kind = _suffix_kind(symbol)
    display_name = signature = documentation = ""
    implements: tuple[str, ...] = ()
    if info is not None:
        if info.kind:
            kind = _kind_name(info.kind) or kind
        display_name = info.display_name
        signature, documentation = _split_documentation(info.documentation)
        implements = tuple(r.symbol for r in info.relationships if r.is_implementation)
    return ScipDefinition(
        symbol=symbol_string,
        readable_name=readable_name(symbol),
        name=symbol.descriptors[-1].name,
        path=path,
        name_range=name_range,
        enclosing_range=enclosing,
        start_line=start_line,
        end_line=end_line,
        name_line=name_range.start_line + 1,
        suffix=suffix,
        kind=kind,
        display_name=display_name,
        signature=signature,
        documentation=documentation,
        implements=implements,
    )


def _suffix_kind(symbol: Symbol) -> str:
    """A kind from the descriptors alone (scip-python and scip-typescript leave Kind unset).

    A method descriptor inside a type is a "method" and anywhere else a "function"; other
    descriptors give their suffix ("type", "term", "namespace", "meta", ...).
    """
    last = symbol.descriptors[-1]
    if last.suffix != "method":
        return last.suffix
    parent = symbol.descriptors[-2].suffix if len(symbol.descriptors) > 1 else None
    return "method" if parent == "type" else "function"


def _kind_name(value: int) -> str:
    """``StaticMethod`` -> ``static_method``; "" for a value this schema does not know."""
    try:
        name = scip_pb2.SymbolInformation.Kind.Name(value)
    except ValueError:
        return ""
    return _KIND_WORD.sub("_", name).lower()


def _split_documentation(entries: Sequence[str]) -> tuple[str, str]:
    """(the leading code block's text, the first non-empty prose line)."""
    signature = ""
    prose: Iterable[str] = entries
    if entries:
        fence = _CODE_FENCE.match(entries[0].strip())
        if fence:
            signature = fence.group("code").strip()
            prose = entries[1:]
    for entry in prose:
        if _CODE_FENCE.match(entry.strip()):
            continue
        for line in entry.splitlines():
            if line.strip():
                return signature, line.strip()
    return signature, ""
