"""Definitions in a parsed file: names, kinds, nesting, line ranges, signatures, doc comments.

One query pass (in C) finds every definition node, every comment or attribute and every
wrapper (decorators, ``export``); nesting comes from sorting the definitions by position and
keeping a stack, so nothing here recurses over the tree or asks tree-sitter for a node's
parent (which it finds by walking down from the root).

A definition's line range starts at its decorators/attributes and the comment block directly
above it (no blank line in between) and ends at its last line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.chunking.grammars import Grammar, NodeRule
from engine.chunking.naming import NameMatch, node_text
from engine.chunking.parsing import query_for
from engine.types import DefinitionKind

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

# Signatures longer than this are cut: they are a label, the chunk text holds the rest.
MAX_SIGNATURE_LINES = 8
MAX_SIGNATURE_CHARS = 600

# Wrappers that hold decorators: part of the chunk, not of the signature.
_DECORATOR_WRAPPERS: frozenset[str] = frozenset({"decorated_definition"})

_CLASS_LIKE: frozenset[str] = frozenset({"class", "interface", "struct", "enum", "trait", "impl"})

# Children that open a definition without being its header: skipped by the signature.
_NOT_HEADER: frozenset[str] = frozenset(
    {
        "decorator",
        "annotation",
        "marker_annotation",
        "attribute",
        "attribute_item",
        "attribute_list",
        "comment",
        "line_comment",
        "block_comment",
        "multiline_comment",
    }
)


@dataclass(slots=True)
class FoundDefinition:
    node: Node
    rule: NodeRule
    kind: DefinitionKind
    name: str
    qualified_name: str  # dotted within the file, e.g. "Greeter.greet"
    parent: str  # qualified name of the enclosing definition or written scope; "" at top
    parent_index: int  # index of the enclosing definition in the list, -1 when none
    name_line: int  # 1-based
    name_start_col: int  # 0-based UTF-8 byte column
    name_end_col: int
    header_line: int  # 1-based line where the definition node itself starts
    start_line: int  # 1-based, inclusive; includes decorators and the doc comment above
    end_line: int  # 1-based, inclusive
    body: Node | None
    unit: bool  # gets chunks of its own (top level, or a member of a class-like unit)
    signature: str  # "" unless unit: only chunks carry it
    docstring: str  # "" unless unit

    @property
    def container(self) -> bool:
        return self.rule.container


# Error recovery can leave one node with tens of thousands of unnamed children (a file of
# `{` lines). The query cursor looks ahead over unnamed siblings for every node it visits, so
# such a node costs time quadratic in its size (20k children: 0.9 s; 100k: minutes).
MAX_UNNAMED_CHILDREN = 2_000
# Bound on the nodes inspected to rule that out; beyond it the file is treated as costly.
_ERROR_SCAN_BUDGET = 200_000


def too_costly_to_query(tree: Tree) -> bool:
    """Whether the query over ``tree`` could take pathological time (see above).

    Only trees with syntax errors are inspected, and only their error-containing subtrees.
    """
    root = tree.root_node
    if not root.has_error:
        return False
    pending = [root]
    inspected = 0
    while pending:
        node = pending.pop()
        count = node.child_count
        if count - node.named_child_count > MAX_UNNAMED_CHILDREN:
            return True
        inspected += count
        if inspected > _ERROR_SCAN_BUDGET:
            return True
        pending += (child for child in node.children if child.has_error and child.child_count)
    return False


def find_definitions(
    tree: Tree, data: bytes, grammar: Grammar, line_count: int
) -> list[FoundDefinition]:
    """Every definition in the file, parents before children, in source order.

    ``line_count`` bounds every range: a zero-width node recovered at the end of the file
    must not point past its last line.
    """
    from tree_sitter import QueryCursor

    captures = QueryCursor(query_for(grammar.language)).captures(tree.root_node)
    leads = _Leads(captures.get("lead", []), data)
    wrappers = _index_wrappers(captures.get("wrap", []), grammar)
    nodes = captures.get("def", [])
    nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))

    found: list[FoundDefinition] = []
    ends: list[int] = []  # end_byte of each found definition, for the nesting stack
    stack: list[int] = []  # indices into found: the chain of enclosing definitions
    last_end_by_parent: dict[int, int] = {}
    last_by_parent: dict[int, int] = {}  # index of each scope's latest definition
    seen: set[int] = set()
    for node in nodes:
        node_id = node.id
        if node_id in seen:
            continue  # two patterns matched the same node
        seen.add(node_id)
        rule = grammar.rules.get(node.type)
        if rule is None:
            continue
        kind = rule.kind if isinstance(rule.kind, str) else rule.kind(node)
        match = rule.name(node, data) if kind is not None else None
        if kind is None or match is None:
            continue
        end_byte = node.end_byte
        while stack and ends[stack[-1]] < end_byte:
            stack.pop()
        parent_index = stack[-1] if stack else -1
        parent = found[parent_index] if parent_index >= 0 else None

        member_of_class = parent is not None and _is_member_scope(parent, grammar)
        if rule.method or match.member or (kind == "function" and member_of_class):
            kind = "method"

        outer = header = match.outer or node
        while (up := wrappers.get(outer.id)) is not None:
            outer = up
            if up.type not in _DECORATOR_WRAPPERS:
                header = up  # `export`, `template<...>` belong to the signature
        header_line = node.start_point.row + 1
        floor = max(last_end_by_parent.get(parent_index, 0), parent.header_line if parent else 0)
        outer_start = outer.start_point.row
        start_line, comments = leads.block_above(outer_start + 1, floor)
        outer_end = outer.end_point  # a node ending at column 0 ends on the line before
        last = (
            outer_end.row
            if outer_end.column == 0 and outer_end.row > outer_start
            else outer_end.row + 1
        )
        end_line = max(start_line, min(last, line_count))
        last_end_by_parent[parent_index] = end_line
        if grammar.clauses and _next_clause(found, last_by_parent.get(parent_index), node, match):
            previous = last_by_parent[parent_index]
            found[previous].end_line = end_line
            ends[previous] = end_byte
            stack.append(previous)  # what the new equation's `where` defines nests in it
            continue

        parts = [parent.qualified_name] if parent is not None else []
        parts += match.scope
        parts.append(match.text)
        body = rule.body(node)
        # A member written on its class's first line (`object R { fun all() = 1 }`) stays
        # in the class's chunk: cutting it out would leave the class no line of its own.
        unit = (
            (body is not None or not rule.needs_body)
            and not rule.declaration_only
            and (
                parent is None
                or (parent.container and parent.unit and header_line > parent.header_line)
            )
        )
        signature = docstring = ""
        if unit:
            signature = _signature(header, body, node, data)
            if grammar.language == "python":
                docstring = _python_docstring(body, data)
            docstring = docstring or _comment_text(comments, data)
        name_start, name_end = match.node.start_point, match.node.end_point
        name_end_col = name_end.column
        if name_end.row != name_start.row:  # a name token never spans lines; be safe anyway
            name_end_col = name_start.column + len(match.text.encode("utf-8", "replace"))
        found.append(
            FoundDefinition(
                node,
                rule,
                kind,
                match.text,
                ".".join(parts),
                ".".join(parts[:-1]),
                parent_index,
                name_start.row + 1,
                name_start.column,
                name_end_col,
                header_line,
                start_line,
                end_line,
                body,
                unit,
                signature,
                docstring,
            )
        )
        ends.append(end_byte)
        stack.append(len(found) - 1)
        last_by_parent[parent_index] = len(found) - 1
    return found


def _next_clause(
    found: list[FoundDefinition], previous: int | None, node: Node, match: NameMatch
) -> bool:
    """Whether ``node`` is a further equation of the scope's latest definition."""
    if previous is None:
        return False
    last = found[previous]
    if last.name != match.text or last.rule.container:
        return False
    # A class method's type signature followed by its default equations is one definition.
    return last.node.type == node.type or last.rule.declaration_only


def _index_wrappers(nodes: list[Node], grammar: Grammar) -> dict[int, Node]:
    """Wrapper nodes by the id of the definition they wrap (their last named child)."""
    by_wrapped: dict[int, Node] = {}
    for wrapper in nodes:
        count = wrapper.named_child_count
        if count == 0 or (count > 1 and grammar.wrappers.get(wrapper.type, False)):
            continue
        by_wrapped[wrapper.named_child(count - 1).id] = wrapper
    return by_wrapped


def _is_member_scope(parent: FoundDefinition, grammar: Grammar) -> bool:
    # Ruby modules hold mixin methods; a Rust `mod` or a function holds plain functions.
    return parent.kind in _CLASS_LIKE or (grammar.language == "ruby" and parent.kind == "module")


class _Leads:
    """Comments and attributes, found by the line they end on; checked only when asked."""

    def __init__(self, nodes: list[Node], data: bytes) -> None:
        self._data = data
        self._by_last_line: dict[int, list[Node]] = {}
        for node in nodes:
            # A line comment that swallows its newline ends on the next row: at column 0, or
            # after the next line's indentation (Zig's doc comments).
            text = data[node.start_byte : node.end_byte]
            last = node.end_point.row + 1 - text[len(text.rstrip()) :].count(b"\n")
            self._by_last_line.setdefault(last, []).append(node)

    def _starting_on_own_line(self, last: int) -> tuple[int, Node] | None:
        best: tuple[int, Node] | None = None
        for node in self._by_last_line.get(last, ()):
            start = node.start_point
            if start.row + 1 > last:
                continue  # zero-width or odd node
            line_start = node.start_byte - start.column
            if self._data[line_start : node.start_byte].strip():
                continue  # a trailing comment after code documents that code, not what follows
            if start.row == 0 and self._data.startswith(b"#!"):
                continue  # a shebang is not documentation
            if best is None or start.row + 1 < best[0]:
                best = (start.row + 1, node)
        return best

    def block_above(self, start_line: int, floor: int) -> tuple[int, list[Node]]:
        """``start_line`` moved up over the comments/attributes directly above it.

        Lines at or above ``floor`` (the previous sibling's end, the parent's header) are
        never taken.
        """
        taken: list[Node] = []
        line = start_line - 1
        while line > floor:
            lead = self._starting_on_own_line(line)
            if lead is None or lead[0] <= floor:
                break
            start_line = lead[0]
            taken.append(lead[1])
            line = start_line - 1
        taken.reverse()
        return start_line, taken


def _signature(header: Node, body: Node | None, node: Node, data: bytes) -> str:
    start = header.start_byte
    for index in range(header.child_count):  # usually stops at the first child
        child = header.child(index)
        if child is None or child.type in _NOT_HEADER:
            continue
        # Java/Kotlin keep annotations inside `modifiers`: start after them.
        start = _after_annotations(child) if child.type == "modifiers" else child.start_byte
        break
    end = body.start_byte if body is not None and body.start_byte > start else node.end_byte
    text = data[start:end].decode("utf-8", "replace").strip()
    if "\n" not in text:
        return text[:MAX_SIGNATURE_CHARS]
    lines = text.split("\n")[:MAX_SIGNATURE_LINES]
    # Ruby's body starts with the comments above its first statement: not header lines.
    while len(lines) > 1 and _COMMENT_LINE.match(lines[-1]):
        lines.pop()
    return "\n".join(lines)[:MAX_SIGNATURE_CHARS].rstrip()


def _after_annotations(modifiers: Node) -> int:
    for child in modifiers.children:
        if child.type not in _NOT_HEADER:
            return int(child.start_byte)
    return int(modifiers.end_byte)


_COMMENT_LINE = re.compile(r"\s*(?:#|//|/\*|\*|--)")

_STRING_PREFIX = re.compile(r"^[rRuUbBfF]{0,2}('''|\"\"\"|'|\")")


def _python_docstring(body: Node | None, data: bytes) -> str:
    first = body.named_child(0) if body is not None and body.named_child_count else None
    if first is not None and first.type == "expression_statement":
        first = first.named_child(0) if first.named_child_count else None
    if first is None or first.type != "string":
        return ""
    text = node_text(data, first)
    quote = _STRING_PREFIX.match(text)
    if quote is None:
        return ""
    inner = text[quote.end() :]
    if inner.endswith(quote.group(1)):
        inner = inner[: -len(quote.group(1))]
    return _dedent(inner)


def _dedent(text: str) -> str:
    """inspect.cleandoc without importing inspect (slow to import)."""
    if "\n" not in text:
        return text.strip()
    lines = text.expandtabs().split("\n")
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(indents, default=0)
    cleaned = [lines[0].strip()] + [line[margin:].rstrip() for line in lines[1:]]
    return "\n".join(cleaned).strip("\n").strip()


_COMMENT_OPEN = re.compile(
    r"^\s*(?:/\*+!?|///?!?|#+|--\[=*\[|-{2,}(?:\s?[|^](?=\s))?|\*+(?!/)|=begin\b)\s?"
)
_COMMENT_CLOSE = re.compile(r"\s*(?:\*+/|\]=*\]|^=end\b.*)\s*$")


def _comment_text(comments: list[Node], data: bytes) -> str:
    lines: list[str] = []
    for comment in comments:
        if "comment" not in comment.type and comment.type != "haddock":
            continue  # attributes and decorators are not documentation
        for line in node_text(data, comment).split("\n"):
            line = _COMMENT_CLOSE.sub("", _COMMENT_OPEN.sub("", line, count=1))
            lines.append(line.rstrip())
    return "\n".join(lines).strip()
