"""Chunks of a source file from its definitions: the rules that decide what a chunk is.

Rules, all on 1-based inclusive line ranges:

- A *unit* is a definition at top level or a member of a class-like unit (class, interface,
  struct, enum, trait, impl, Rust ``mod``, Ruby ``module``). Functions nested in functions
  (and classes nested in functions) stay inside their enclosing function's chunk; they are
  still reported as definitions.
- A function or method unit is one chunk over its whole range: decorators, the doc comment
  directly above and the body.
- A class-like unit's chunks are the lines of its range that no member unit covers: the
  first is the header (decorators, doc comment, signature, docstring, fields up to the first
  method); fields declared between or after methods form further chunks of the same class.
- Lines outside every top-level unit form ``module`` chunks, one per contiguous run.
- Runs are trimmed of blank lines; a run that is only blank lines is no chunk. A run of only
  closing tokens (``}``, ``end``, ``});``, ``#endif``) is added to the chunk before it when
  that chunk belongs to the same definition (or both are module code), so a class's fields
  do not leave their brace alone. Otherwise it stays a chunk of its own owner: a method ends
  at its own last line and never takes in its class's closing brace (issue 17).
- Any chunk longer than ``MAX_CHUNK_LINES`` is cut into windows at statement starts (see
  chunking_windows); every window keeps the name, kind and signature of what it cuts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.chunking.definitions import FoundDefinition
from engine.chunking.windows import split_range, statement_starts
from engine.types import ChunkDraft

if TYPE_CHECKING:
    from tree_sitter import Node

# Longest chunk, in lines, before it is cut into windows.
MAX_CHUNK_LINES = 80

_CLOSING_LINE = re.compile(
    r"\s*(?:(?:[})\];,]|end\b|fi\b|done\b|esac\b)[\s})\];,]*(?://.*|#.*)?|#\s*endif\b.*)"
)

_MODULE = -1  # owner of lines outside every top-level unit


@dataclass(slots=True)
class _Piece:
    start_line: int
    end_line: int
    owner: int  # index of the definition it belongs to, or _MODULE
    closing_only: bool = False


def layout_chunks(
    path: str,
    language: str,
    lines: Sequence[str],
    definitions: Sequence[FoundDefinition],
    root: Node,
) -> list[ChunkDraft]:
    members: dict[int, list[FoundDefinition]] = {_MODULE: []}
    for definition in definitions:
        if definition.unit:
            members.setdefault(definition.parent_index, []).append(definition)

    pieces: list[_Piece] = []
    for index, definition in enumerate(definitions):
        if not definition.unit:
            continue
        if definition.container:
            own = members.get(index, [])
            pieces += _gaps(definition.start_line, definition.end_line, own, index, lines)
        else:
            pieces.append(_Piece(definition.start_line, definition.end_line, index))
    pieces += _gaps(1, len(lines), members[_MODULE], _MODULE, lines)
    pieces.sort(key=lambda p: (p.start_line, p.end_line))

    chunks: list[ChunkDraft] = []
    for piece in _absorb_closing_lines(pieces):
        owner = definitions[piece.owner] if piece.owner != _MODULE else None
        for first, last in _windows(piece, owner, lines, root):
            chunks.append(_draft(path, language, lines, first, last, owner))
    return chunks


def _gaps(
    first: int, last: int, members: list[FoundDefinition], owner: int, lines: Sequence[str]
) -> list[_Piece]:
    """The runs of ``first..last`` that no member covers, trimmed of blank lines."""
    runs: list[_Piece] = []
    current = first
    for member in sorted(members, key=lambda m: m.start_line):
        if member.start_line > current:
            runs.append(_Piece(current, member.start_line - 1, owner))
        current = max(current, member.end_line + 1)
    if current <= last:
        runs.append(_Piece(current, last, owner))

    kept: list[_Piece] = []
    for run in runs:
        while run.start_line <= run.end_line and not lines[run.start_line - 1].strip():
            run.start_line += 1
        while run.end_line >= run.start_line and not lines[run.end_line - 1].strip():
            run.end_line -= 1
        if run.start_line > run.end_line:
            continue
        run.closing_only = all(
            _CLOSING_LINE.fullmatch(lines[n - 1]) or not lines[n - 1].strip()
            for n in range(run.start_line, run.end_line + 1)
        )
        kept.append(run)
    return kept


def _absorb_closing_lines(pieces: list[_Piece]) -> list[_Piece]:
    """Add runs of closing tokens to the chunk before them (or after, at the file's start)."""
    kept: list[_Piece] = []
    orphan: _Piece | None = None
    for piece in pieces:
        if piece.closing_only and kept and kept[-1].owner == piece.owner:
            kept[-1].end_line = max(kept[-1].end_line, piece.end_line)
        elif piece.closing_only and kept:
            piece.closing_only = False  # another definition's last lines: a chunk of its own
            kept.append(piece)
        elif piece.closing_only:
            orphan = piece if orphan is None else orphan
        else:
            if orphan is not None:
                piece.start_line = min(piece.start_line, orphan.start_line)
                orphan = None
            kept.append(piece)
    if orphan is not None:  # nothing but closing tokens in the whole file
        orphan.closing_only = False
        kept.append(orphan)
    return kept


def _windows(
    piece: _Piece, owner: FoundDefinition | None, lines: Sequence[str], root: Node
) -> list[tuple[int, int]]:
    first, last = piece.start_line, piece.end_line
    if last - first + 1 <= MAX_CHUNK_LINES:
        return [(first, last)]
    scope = root
    if owner is not None:
        scope = owner.body if owner.body is not None and owner.body.child_count else owner.node
    starts = statement_starts(scope, first, last, MAX_CHUNK_LINES)
    return split_range(first, last, MAX_CHUNK_LINES, starts, lines)


def _draft(
    path: str,
    language: str,
    lines: Sequence[str],
    first: int,
    last: int,
    owner: FoundDefinition | None,
) -> ChunkDraft:
    text = "\n".join(lines[first - 1 : last])
    if owner is None:
        return ChunkDraft(path, language, "module", "", "", "", first, last, text)
    return ChunkDraft(
        path,
        language,
        owner.kind,
        owner.name,
        owner.qualified_name,
        owner.parent,
        first,
        last,
        text,
        owner.signature,
        owner.docstring,
    )
