"""Write a SCIP index from definitions the engine found itself (tree-sitter), atomically.

The engine emits an index when no real indexer covers a language, so the symbol signal reads
one format either way. Symbols come from ``local_symbol_for``: scheme ``engine``, the package
(repository name or the ``.`` placeholders), one namespace per path segment and one
descriptor per part of the qualified name. ("local" there means made by the engine for this
repository; these are global SCIP symbols, not ``local N`` ones, so other documents can refer
to them.) Columns are UTF-8 byte offsets, as the chunker reports them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from scip import scip_pb2
from scip.errors import SymbolError
from scip.ranges import Range, encode_range
from scip.symbols import Descriptor, DescriptorSuffix, Package, Symbol, format_symbol, parse_symbol

SCHEME = "engine"
READ_ACCESS_ROLE = 0x8  # SymbolRole.ReadAccess
_DEFINITION_ROLE = 0x1

_Kind = scip_pb2.SymbolInformation.Kind
# Engine definition kind -> (descriptor suffix of its own name, SCIP Kind). "impl" has no
# SCIP Kind; readers see a type descriptor with the kind unset.
_KINDS: dict[str, tuple[DescriptorSuffix, int]] = {
    "function": ("method", _Kind.Function),
    "method": ("method", _Kind.Method),
    "class": ("type", _Kind.Class),
    "interface": ("type", _Kind.Interface),
    "struct": ("type", _Kind.Struct),
    "enum": ("type", _Kind.Enum),
    "trait": ("type", _Kind.Trait),
    "impl": ("type", _Kind.UnspecifiedKind),
    "module": ("namespace", _Kind.Module),
}


@dataclass(frozen=True, slots=True)
class EmitDefinition:
    symbol: str  # a SCIP symbol string, usually from local_symbol_for
    kind: str  # an engine definition kind ("function", "method", "class", ...)
    display_name: str  # the definition's own name, e.g. "greet"
    name_range: Range  # 0-based half-open range of the name identifier
    enclosing_range: Range | None = None  # 0-based half-open range of the whole definition
    documentation: tuple[str, ...] = ()  # markdown, e.g. ("```python\ndef greet()\n```",)


@dataclass(frozen=True, slots=True)
class EmitReference:
    symbol: str
    range: Range  # 0-based half-open
    roles: int = READ_ACCESS_ROLE  # SymbolRole bitset; must not include Definition


@dataclass(frozen=True, slots=True)
class EmitDocument:
    relative_path: str  # repository-relative, '/' separated
    language: str  # e.g. "python"
    definitions: Sequence[EmitDefinition] = ()
    references: Sequence[EmitReference] = ()


def local_symbol_for(path: str, qualified_name: str, kind: str, package_name: str = "") -> str:
    """The engine's SCIP symbol for a definition in this repository.

    For example ``engine . . . toy/`greeter.py`/Greeter#greet().`` for a method.
    ``path`` gives one namespace per segment; in ``qualified_name`` ("Greeter.greet") every
    enclosing part becomes a type descriptor and the last part gets the suffix of ``kind``
    (function/method: method; class, interface, struct, enum, trait, impl: type; module:
    namespace; anything else: term). Raises ``SymbolError`` for an empty or absolute path or
    an empty name part.
    """
    segments = _checked_path(path).parts
    parts = qualified_name.split(".")
    if not qualified_name or any(not part for part in parts):
        raise SymbolError(f"qualified name {qualified_name!r} has an empty part")
    suffix = _KINDS[kind][0] if kind in _KINDS else "term"
    descriptors = [Descriptor(segment, "namespace") for segment in segments]
    descriptors += [Descriptor(part, "type") for part in parts[:-1]]
    descriptors.append(Descriptor(parts[-1], suffix))
    return format_symbol(Symbol(SCHEME, Package(name=package_name), tuple(descriptors)))


def _checked_path(path: str) -> PurePosixPath:
    pure = PurePosixPath(path)
    if not path or "\\" in path or pure.is_absolute() or ".." in pure.parts or str(pure) == ".":
        raise SymbolError(f"{path!r} is not a repository-relative path with '/' separators")
    return pure


def write_index(
    path: Path,
    tool_name: str,
    project_root: str,
    documents: Sequence[EmitDocument],
    *,
    tool_version: str = "",
) -> None:
    """Write the index to ``path`` through a temporary file and ``os.replace``.

    ``project_root`` is a directory path or a ``file://`` URI. A reader never sees a
    half-written file: either the old content or the new. Raises ``SymbolError`` for a bad
    symbol or document path (ranges are valid by construction).
    """
    index = scip_pb2.Index()
    metadata = index.metadata
    metadata.tool_info.name = tool_name
    metadata.tool_info.version = tool_version
    metadata.project_root = project_root if "://" in project_root else _uri(project_root)
    metadata.text_document_encoding = scip_pb2.UTF8
    for document in documents:
        _add_document(index, document)
    _write_atomically(path, index.SerializeToString())


def _uri(directory: str) -> str:
    return Path(directory).absolute().as_uri()


def _add_document(index: scip_pb2.Index, document: EmitDocument) -> None:
    out = index.documents.add()
    out.relative_path = str(_checked_path(document.relative_path))
    out.language = document.language
    out.position_encoding = scip_pb2.UTF8CodeUnitOffsetFromLineStart
    described: set[str] = set()
    for definition in document.definitions:
        parse_symbol(definition.symbol)  # refuse to write what no reader could parse
        occurrence = out.occurrences.add()
        occurrence.range.extend(encode_range(definition.name_range))
        occurrence.symbol = definition.symbol
        occurrence.symbol_roles = _DEFINITION_ROLE
        if definition.enclosing_range is not None:
            occurrence.enclosing_range.extend(encode_range(definition.enclosing_range))
        if definition.symbol in described:
            continue  # one SymbolInformation per symbol, even when it is defined twice
        described.add(definition.symbol)
        info = out.symbols.add()
        info.symbol = definition.symbol
        info.kind = _KINDS[definition.kind][1] if definition.kind in _KINDS else 0
        info.display_name = definition.display_name
        info.documentation.extend(definition.documentation)
    for reference in document.references:
        parse_symbol(reference.symbol)
        if reference.roles & _DEFINITION_ROLE:
            raise ValueError(f"reference to {reference.symbol} has the Definition role")
        occurrence = out.occurrences.add()
        occurrence.range.extend(encode_range(reference.range))
        occurrence.symbol = reference.symbol
        occurrence.symbol_roles = reference.roles


def _write_atomically(path: Path, data: bytes) -> None:
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    temporary_path = Path(temporary)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        temporary_path.replace(path)
    except BaseException:
        temporary_path.unlink(missing_ok=True)
        raise
