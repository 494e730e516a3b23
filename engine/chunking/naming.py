"""How a definition node is named: the identifier, qualifiers written in the name, the body.

Each grammar spells names differently (``func (r *Router) Handle``, ``void Greeter::reset()``,
``function M:bye()``, ``const parseBody = () => ...``); the functions here turn one node into
a ``NameMatch`` or ``None`` when the node has no usable name (an anonymous function, a
half-parsed declaration). They only look at a node and its children, never walk a subtree
without a bound, so a pathological file cannot make them slow or recurse. They avoid
``Node.parent``: tree-sitter finds a parent by walking down from the root (tens of µs in a
large file), which would dominate the chunker's time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.types import DefinitionKind

if TYPE_CHECKING:
    from tree_sitter import Node

# Bound on the nodes a name lookup may visit inside a receiver or impl header.
_SEARCH_BUDGET = 64


@dataclass(frozen=True, slots=True)
class NameMatch:
    node: Node  # the identifier whose position the definition reports
    text: str
    scope: tuple[str, ...] = ()  # qualifiers written in the name: Go receiver, C++ Foo::, Lua M.
    member: bool = False  # the name itself says "method" (C++ Foo::bar, Lua M:bar)
    outer: Node | None = None  # the node the definition spans, when wider than the node


NameFn = Callable[["Node", bytes], NameMatch | None]  # (definition node, file bytes)
KindFn = Callable[["Node"], DefinitionKind | None]
BodyFn = Callable[["Node"], "Node | None"]


def node_text(data: bytes, node: Node) -> str:
    """The source of ``node``. Not ``Node.text``: a tree parsed from a read callback (see
    chunking_parsing.parse) keeps no source and fetches it again through the callback."""
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def identifier(data: bytes, node: Node | None, scope: tuple[str, ...] = ()) -> NameMatch | None:
    """A name from one identifier node, or None when it is missing or not a single token."""
    if node is None:
        return None
    text = node_text(data, node)  # empty for a MISSING node the parser invented
    if not text or "\n" in text or len(text) > 200:
        return None
    return NameMatch(node, text, scope)


def by_field(node: Node, data: bytes) -> NameMatch | None:
    name = node.child_by_field_name("name")
    if name is not None and name.named_child_count:
        # Swift `extension Foo<T>`, Ruby `class A::B`: the identifier sits one level down.
        return _innermost_name(data, name)
    return identifier(data, name)


def first_child_of(*types: str) -> NameFn:
    """Grammars without a name field (Kotlin): the first direct child of one of ``types``."""

    def find(node: Node, data: bytes) -> NameMatch | None:
        for child in node.named_children:
            if child.type in types:
                return identifier(data, child)
        return None

    return find


def keyword_name(keyword: str, name: str) -> NameFn:
    """Definitions named by a keyword (Swift ``init``), positioned at that keyword."""

    def find(node: Node, data: bytes) -> NameMatch | None:
        for child in node.children:
            if child.type == keyword:
                return NameMatch(child, name)
        return None

    return find


def kotlin_companion(node: Node, data: bytes) -> NameMatch | None:
    for child in node.named_children:
        if child.type in ("type_identifier", "simple_identifier"):
            return identifier(data, child)
    for child in node.children:
        if child.type == "companion":
            return NameMatch(child, "Companion")
    return None


def _innermost_name(data: bytes, node: Node) -> NameMatch | None:
    """``A::B`` / ``a.b.c`` / ``Foo<T>``: the last identifier, the rest as scope."""
    scope: list[str] = []
    current = node
    for _ in range(_SEARCH_BUDGET):
        if current.type in ("scope_resolution", "qualified_identifier", "scoped_identifier"):
            qualifier = current.child_by_field_name("scope") or current.child_by_field_name("path")
            if qualifier is not None:
                scope.append(node_text(data, qualifier))
            inner = current.child_by_field_name("name")
            if inner is None:
                return None
            current = inner
        elif current.named_child_count:
            current = current.named_children[0]
        else:
            return identifier(data, current, tuple(scope))
    return None


def _first_of_type(node: Node | None, types: frozenset[str]) -> Node | None:
    """Breadth-first search for a node of ``types`` among at most _SEARCH_BUDGET nodes."""
    if node is None:
        return None
    queue = [node]
    for _ in range(_SEARCH_BUDGET):
        if not queue:
            return None
        current = queue.pop(0)
        if current.type in types:
            return current
        queue.extend(current.named_children)
    return None


_TYPE_NAMES = frozenset({"type_identifier"})


def go_method(node: Node, data: bytes) -> NameMatch | None:
    name = identifier(data, node.child_by_field_name("name"))
    receiver = _first_of_type(node.child_by_field_name("receiver"), _TYPE_NAMES)
    if name is None:
        return None
    scope = (node_text(data, receiver),) if receiver is not None else ()
    return NameMatch(name.node, name.text, scope, member=True)


def go_type_kind(node: Node) -> DefinitionKind | None:
    spec = node.child_by_field_name("type")
    if spec is None:
        return None
    if spec.type == "struct_type":
        return "struct"
    if spec.type == "interface_type":
        return "interface"
    return None


def rust_impl(node: Node, data: bytes) -> NameMatch | None:
    target = node.child_by_field_name("type")
    if target is not None and target.type == "generic_type":
        target = target.child_by_field_name("type")
    if target is not None and target.type == "scoped_type_identifier":
        target = target.child_by_field_name("name")
    if target is not None and target.type != "type_identifier":
        target = _first_of_type(target, _TYPE_NAMES)
    return identifier(data, target)


_C_NAMES = frozenset({"identifier", "field_identifier", "destructor_name", "operator_name"})


def c_function(node: Node, data: bytes) -> NameMatch | None:
    """Follow the declarator chain: ``char **(*name)(void)`` and ``Foo::bar`` included."""
    declarator = node.child_by_field_name("declarator")
    scope: list[str] = []
    for _ in range(_SEARCH_BUDGET):
        if declarator is None:
            return None
        if declarator.type in _C_NAMES:
            match = identifier(data, declarator, tuple(scope))
            if match is None:
                return None
            return NameMatch(match.node, match.text, match.scope, member=bool(scope))
        if declarator.type == "qualified_identifier":
            qualifier = declarator.child_by_field_name("scope")
            if qualifier is not None:
                qualifier_name = qualifier.child_by_field_name("name") or qualifier
                scope.append(node_text(data, qualifier_name))
            declarator = declarator.child_by_field_name("name")
        elif declarator.type == "template_function":
            declarator = declarator.child_by_field_name("name")
        else:
            inner = declarator.child_by_field_name("declarator")
            if inner is None and declarator.named_child_count:
                inner = declarator.named_children[0]  # parenthesized_declarator has no field
            declarator = inner
    return None


def c_type(node: Node, data: bytes) -> NameMatch | None:
    """``struct point {...}``, or the typedef name of ``typedef struct {...} Vec;``."""
    name = by_field(node, data)
    if name is not None:
        return name
    # Node.parent walks down from the root; only unnamed types (rare) pay for it.
    parent = node.parent
    if parent is not None and parent.type == "type_definition":
        alias = identifier(data, parent.child_by_field_name("declarator"))
        if alias is not None:
            return NameMatch(alias.node, alias.text, outer=parent)
    return None


def with_body(kind: DefinitionKind) -> KindFn:
    """A kind that only counts when the node has a body (``struct foo *p`` is a use)."""

    def decide(node: Node) -> DefinitionKind | None:
        return kind if node.child_by_field_name("body") is not None else None

    return decide


def js_variable(node: Node, data: bytes) -> NameMatch | None:
    """``const parseBody = (...) => ...``: named by the declarator."""
    name = node.child_by_field_name("name")
    if name is None or name.type != "identifier":
        return None  # destructuring patterns name nothing
    return identifier(data, name)


def js_field(node: Node, data: bytes) -> NameMatch | None:
    return identifier(
        data, node.child_by_field_name("property") or node.child_by_field_name("name")
    )


def js_variable_body(node: Node) -> Node | None:
    value = node.child_by_field_name("value")
    return value.child_by_field_name("body") if value is not None else None


def lua_function(node: Node, data: bytes) -> NameMatch | None:
    """``function M.greet()`` / ``function M:bye()`` / ``local function helper()``."""
    return _lua_name(data, node.child_by_field_name("name"))


def _lua_name(data: bytes, name: Node | None) -> NameMatch | None:
    if name is None:
        return None
    if name.type == "identifier":
        return identifier(data, name)
    if name.type == "dot_index_expression":
        field = identifier(data, name.child_by_field_name("field"))
        table = name.child_by_field_name("table")
        if field is None or table is None:
            return None
        return NameMatch(field.node, field.text, tuple(node_text(data, table).split(".")))
    if name.type == "method_index_expression":
        method = identifier(data, name.child_by_field_name("method"))
        table = name.child_by_field_name("table")
        if method is None or table is None:
            return None
        scope = tuple(node_text(data, table).split("."))
        return NameMatch(method.node, method.text, scope, member=True)
    return None


def lua_assignment(node: Node, data: bytes) -> NameMatch | None:
    """``local inc = function(x) ... end``: the query matched a one-to-one assignment."""
    targets = node.named_children[0] if node.named_child_count else None
    if targets is None or targets.type != "variable_list" or not targets.named_child_count:
        return None
    return _lua_name(data, targets.named_children[0])


def lua_field(node: Node, data: bytes) -> NameMatch | None:
    """``{ greet = function() ... end }``."""
    return identifier(data, node.child_by_field_name("name"))


def lua_value_body(node: Node) -> Node | None:
    """The body of the function assigned by an assignment or a table field."""
    value = node.child_by_field_name("value")
    if value is None and node.named_child_count:
        values = node.named_children[-1]  # assignment: variable_list, expression_list
        value = values.named_children[0] if values.named_child_count else None
    return value.child_by_field_name("body") if value is not None else None


def ruby_singleton(node: Node, data: bytes) -> NameMatch | None:
    """``def self.build`` belongs to the enclosing class; ``def Foo.build`` to Foo."""
    name = identifier(data, node.child_by_field_name("name"))
    target = node.child_by_field_name("object")
    if name is None:
        return None
    if target is not None and target.type != "self":
        return NameMatch(name.node, name.text, (node_text(data, target),), member=True)
    return NameMatch(name.node, name.text, member=True)


def kotlin_class_kind(node: Node) -> DefinitionKind | None:
    for child in node.children:
        if child.type == "interface":
            return "interface"
        if child.type == "enum":
            return "enum"
    return "class"


def swift_class_kind(node: Node) -> DefinitionKind | None:
    keyword = node.child_by_field_name("declaration_kind")
    word = keyword.type if keyword is not None else "class"
    kinds: dict[str, DefinitionKind] = {"struct": "struct", "enum": "enum", "extension": "impl"}
    return kinds.get(word, "class")


def body_field(node: Node) -> Node | None:
    return node.child_by_field_name("body")


def body_child(*types: str) -> BodyFn:
    """Grammars whose body has no field name (Kotlin): the last child of one of ``types``."""

    def find(node: Node) -> Node | None:
        for child in reversed(node.named_children):
            if child.type in types:
                return child
        return None

    return find


def go_type_body(node: Node) -> Node | None:
    """The field list of a struct; the ``{`` of an interface (its elements have no list)."""
    spec = node.child_by_field_name("type")
    if spec is None:
        return None
    if spec.type == "struct_type":
        return spec.named_children[0] if spec.named_child_count else spec
    for child in spec.children:
        if child.type == "{":
            return child
    return spec


def haskell_instance(node: Node, data: bytes) -> NameMatch | None:
    """``instance ToJSON (Maybe a) where``: named by the type (``Maybe``), like a Rust impl,
    so that a query for the class finds the class first."""
    target = _first_of_type(node.child_by_field_name("patterns"), _HASKELL_TYPE_NAMES)
    return identifier(data, target) if target is not None else by_field(node, data)


_HASKELL_TYPE_NAMES = frozenset({"name", "qualified"})


def field_of(name: str) -> BodyFn:
    """A body under a field other than ``body`` (Haskell ``match``, ``declarations``)."""

    def find(node: Node) -> Node | None:
        return node.child_by_field_name(name)

    return find


def haskell_name(node: Node, data: bytes) -> NameMatch | None:
    """A function's or type's identifier; operators (``(.=)``, ``a <+> b``) are no name the
    symbol index can hold, so they stay in the code around them."""
    name = node.child_by_field_name("name")
    if name is None or name.type not in _HASKELL_NAMES:
        return None
    return identifier(data, name)


_HASKELL_NAMES = frozenset({"variable", "name"})


def _zig_declared(node: Node) -> Node | None:
    """A Zig ``Decl``'s ``FnProto`` or ``VarDecl``."""
    for child in node.named_children:
        if child.type in ("FnProto", "VarDecl"):
            return child
    return None


def _zig_value(node: Node) -> Node | None:
    """The container or error set a ``const X = struct {...}`` gives its name, else None."""
    declared = _zig_declared(node)
    if declared is None or declared.type != "VarDecl":
        return None
    for expression in declared.named_children:
        if expression.type != "ErrorUnionExpr" or not expression.named_child_count:
            continue
        suffix = expression.named_child(0)
        if suffix is not None and suffix.type == "SuffixExpr" and suffix.named_child_count == 1:
            value = suffix.named_child(0)
            if value is not None and value.type in ("ContainerDecl", "ErrorSetDecl"):
                return value
    return None


def zig_kind(node: Node) -> DefinitionKind | None:
    """A function, or a type (``struct``/``union``/``opaque`` are structs; ``enum`` and
    error sets enums); any other ``const`` is no definition."""
    declared = _zig_declared(node)
    if declared is not None and declared.type == "FnProto":
        return "function"
    value = _zig_value(node)
    if value is None:
        return None
    if value.type == "ErrorSetDecl":
        return "enum"
    for child in value.named_children:
        if child.type == "ContainerDeclType":
            first = child.child(0)
            return "enum" if first is not None and first.type == "enum" else "struct"
    return "struct"


def zig_name(node: Node, data: bytes) -> NameMatch | None:
    declared = _zig_declared(node)
    if declared is None:
        return None
    for child in declared.named_children:
        if child.type == "IDENTIFIER":
            return identifier(data, child)
    return None


def zig_body(node: Node) -> Node | None:
    """A function's block, a type's container (an ``extern fn`` has neither)."""
    value = _zig_value(node)
    if value is not None:  # from its `{`, so that the signature reads `const Foo = struct`
        return next((child for child in value.children if child.type == "{"), value)
    for child in node.named_children:
        if child.type == "Block":
            return child
    return None
