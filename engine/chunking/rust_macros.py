"""Rust items written inside item-level macro invocations: ``cfg_rt! { pub fn spawn ... }``.

Crates gate much of their API behind macros (tokio's ``cfg_rt!``, ``cfg_if!``, a ``doc!``
wrapper around ``macro_rules!``), and tree-sitter reads a macro's body as a token tree, not
as items: a file of such blocks had no definitions, and its functions no chunks of their own.
Each top-level invocation with a brace-delimited body is parsed again as items: the file is
copied with every byte outside those bodies blanked (line endings kept, so byte offsets and
lines stay the file's own) and the copy goes through the same definitions query. Items of
macros inside those bodies are found the same way, ``MAX_DEPTH`` levels down. Invocations
inside ``impl`` or ``mod`` blocks stay token trees: their items would lose their scope.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.chunking.definitions import FoundDefinition, find_definitions, too_costly_to_query
from engine.chunking.grammars import Grammar
from engine.chunking.parsing import parse

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_DEPTH = 3
_NEWLINE = 0x0A
_BLANK = bytes(_NEWLINE if b == _NEWLINE else 0x20 for b in range(256))


def macro_items(
    root: Node, data: bytes, grammar: Grammar, line_count: int, *, offset: int, depth: int = 1
) -> list[FoundDefinition]:
    """The definitions inside ``root``'s top-level macro bodies; their ``parent_index``
    counts from ``offset``, where they will be appended to the file's own definitions."""
    bodies = [b for node in root.named_children if (b := _brace_body(node, data)) is not None]
    if not bodies:
        return []
    masked = bytearray(data.translate(_BLANK))
    for start, end in bodies:
        masked[start:end] = data[start:end]
    copy = bytes(masked)
    tree = parse(grammar.language, copy)
    if tree is None or too_costly_to_query(tree):
        return []
    found = [_shifted(d, offset) for d in find_definitions(tree, copy, grammar, line_count)]
    if depth < MAX_DEPTH:
        found += macro_items(
            tree.root_node, copy, grammar, line_count, offset=offset + len(found), depth=depth + 1
        )
    return found


def _brace_body(node: Node, data: bytes) -> tuple[int, int] | None:
    """The byte range inside ``name! { ... }``'s braces, or None for any other node."""
    if node.type != "macro_invocation":
        return None
    body = node.named_children[-1] if node.named_children else None
    if (
        body is None
        or body.type != "token_tree"
        or data[body.start_byte : body.start_byte + 1] != b"{"
    ):
        return None
    return body.start_byte + 1, body.end_byte - 1


def _shifted(definition: FoundDefinition, offset: int) -> FoundDefinition:
    if definition.parent_index < 0:
        return definition
    return replace(definition, parent_index=definition.parent_index + offset)
