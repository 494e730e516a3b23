"""Per-language tree-sitter knowledge: which nodes are definitions, how they are named.

One ``Grammar`` per language the chunker understands. Its query captures every definition
node (``@def``), every comment or attribute that may sit directly above one (``@lead``)
and every node that may wrap one (``@wrap``: decorators, ``export``) in a single pass over
the tree, done in C; everything the query cannot express (names, kinds that depend on a
keyword) is a ``NodeRule`` keyed by node type.

Parsing and compiling the queries happen in chunking_parsing, on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.chunking import naming as names
from engine.types import DefinitionKind


@dataclass(frozen=True, slots=True)
class NodeRule:
    kind: DefinitionKind | names.KindFn  # "function" becomes "method" inside a class
    name: names.NameFn = names.by_field
    body: names.BodyFn = names.body_field
    container: bool = False  # members (methods, nested types) get chunks of their own
    method: bool = False  # always a method (Java method_declaration, Go receivers)
    needs_body: bool = False  # without a body (interface method) it is no chunk of its own
    declaration_only: bool = False  # never has a body: a definition, never a chunk


@dataclass(frozen=True, slots=True)
class Grammar:
    language: str
    query: str  # captures @def (definitions) and @lead (comments/attributes above them)
    rules: dict[str, NodeRule]
    # Parents that belong to the definition's range (decorators, `export`, `template<...>`),
    # recognised when the definition is their last named child; True: only when it is their
    # sole named child (`const f = ...` but not `const a = 1, f = ...`).
    wrappers: dict[str, bool] = field(default_factory=dict)
    # A function written as several equations (Haskell's `f [] = ...; f (x:xs) = ...`) is
    # one definition: consecutive same-named functions of one scope are merged.
    clauses: bool = False


def _fn() -> NodeRule:
    return NodeRule("function")


def _method(*, needs_body: bool = False, declaration_only: bool = False) -> NodeRule:
    return NodeRule(
        "function", method=True, needs_body=needs_body, declaration_only=declaration_only
    )


_CLASS = NodeRule("class", container=True)
_INTERFACE = NodeRule("interface", container=True)
_ENUM = NodeRule("enum", container=True)
_STRUCT = NodeRule("struct", container=True)
_TRAIT = NodeRule("trait", container=True)

_JS_QUERY = """
[(function_declaration) (generator_function_declaration) (class_declaration)
 (method_definition)] @def
(variable_declarator
  value: [(arrow_function) (function_expression) (generator_function)]) @def
(field_definition value: [(arrow_function) (function_expression)]) @def
[(comment) (decorator)] @lead
"""

_TS_QUERY = """
[(function_declaration) (generator_function_declaration) (class_declaration)
 (abstract_class_declaration) (interface_declaration) (enum_declaration)
 (method_definition) (method_signature) (abstract_method_signature)] @def
(variable_declarator
  value: [(arrow_function) (function_expression) (generator_function)]) @def
(public_field_definition value: [(arrow_function) (function_expression)]) @def
[(comment) (decorator)] @lead
"""

_JS_WRAPPERS = {
    "export_statement": False,
    "lexical_declaration": True,
    "variable_declaration": True,
}
_TS_WRAPPERS = {**_JS_WRAPPERS, "ambient_declaration": False}

_JS_RULES: dict[str, NodeRule] = {
    "function_declaration": _fn(),
    "generator_function_declaration": _fn(),
    "class_declaration": _CLASS,
    "method_definition": _method(),
    "variable_declarator": NodeRule("function", names.js_variable, names.js_variable_body),
    "field_definition": NodeRule("function", names.js_field, names.js_variable_body, method=True),
}

_TS_RULES: dict[str, NodeRule] = {
    **_JS_RULES,
    "abstract_class_declaration": _CLASS,
    "interface_declaration": _INTERFACE,
    "enum_declaration": _ENUM,
    "method_signature": _method(declaration_only=True),
    "abstract_method_signature": _method(declaration_only=True),
    "public_field_definition": NodeRule(
        "function", names.js_field, names.js_variable_body, method=True
    ),
}

_C_QUERY_TYPES = """
(function_definition) @def
(struct_specifier body: (_)) @def
(union_specifier body: (_)) @def
(enum_specifier body: (_)) @def
(comment) @lead
"""

_C_RULES: dict[str, NodeRule] = {
    "function_definition": NodeRule("function", names.c_function),
    "struct_specifier": NodeRule("struct", names.c_type, container=True),
    "union_specifier": NodeRule("struct", names.c_type, container=True),
    "enum_specifier": NodeRule("enum", names.c_type, container=True),
}

_GRAMMARS: dict[str, Grammar] = {
    "python": Grammar(
        "python",
        "[(function_definition) (class_definition)] @def (comment) @lead",
        {"function_definition": _fn(), "class_definition": _CLASS},
        {"decorated_definition": False},
    ),
    "javascript": Grammar("javascript", _JS_QUERY, _JS_RULES, _JS_WRAPPERS),
    "typescript": Grammar("typescript", _TS_QUERY, _TS_RULES, _TS_WRAPPERS),
    "tsx": Grammar("tsx", _TS_QUERY, _TS_RULES, _TS_WRAPPERS),
    "go": Grammar(
        "go",
        "[(function_declaration) (method_declaration) (type_spec) (method_elem)] @def"
        " (comment) @lead",
        {
            "function_declaration": _fn(),
            "method_declaration": NodeRule("function", names.go_method, method=True),
            "type_spec": NodeRule(
                names.go_type_kind, names.by_field, names.go_type_body, container=True
            ),
            "method_elem": _method(declaration_only=True),
        },
        {"type_declaration": True},  # `type Router struct`, not a grouped `type (...)`
    ),
    "rust": Grammar(
        "rust",
        "[(function_item) (function_signature_item) (struct_item) (union_item) (enum_item)"
        " (trait_item) (impl_item) (mod_item) (macro_definition)] @def"
        " [(line_comment) (block_comment) (attribute_item)] @lead",
        {
            "function_item": _fn(),
            "function_signature_item": _method(declaration_only=True),
            "struct_item": _STRUCT,
            "union_item": _STRUCT,
            "enum_item": _ENUM,
            "trait_item": _TRAIT,
            "impl_item": NodeRule("impl", names.rust_impl, container=True),
            "mod_item": NodeRule(names.with_body("module"), container=True),
            "macro_definition": _fn(),  # `macro_rules! select`: called like a function
        },
    ),
    "java": Grammar(
        "java",
        "[(class_declaration) (interface_declaration) (enum_declaration) (record_declaration)"
        " (annotation_type_declaration) (method_declaration) (constructor_declaration)] @def"
        " [(line_comment) (block_comment)] @lead",
        {
            "class_declaration": _CLASS,
            "interface_declaration": _INTERFACE,
            "enum_declaration": _ENUM,
            "record_declaration": _CLASS,
            "annotation_type_declaration": _INTERFACE,
            "method_declaration": _method(needs_body=True),
            "constructor_declaration": _method(),
        },
    ),
    "c": Grammar("c", _C_QUERY_TYPES, _C_RULES),
    "cpp": Grammar(
        "cpp",
        _C_QUERY_TYPES + "(class_specifier body: (_)) @def",
        {**_C_RULES, "class_specifier": NodeRule("class", names.c_type, container=True)},
        {"template_declaration": False},
    ),
    "csharp": Grammar(
        "csharp",
        "[(class_declaration) (struct_declaration) (interface_declaration) (enum_declaration)"
        " (record_declaration) (method_declaration) (constructor_declaration)"
        " (local_function_statement)] @def (comment) @lead",
        {
            "class_declaration": _CLASS,
            "struct_declaration": _STRUCT,
            "interface_declaration": _INTERFACE,
            "enum_declaration": _ENUM,
            "record_declaration": _CLASS,
            "method_declaration": _method(needs_body=True),
            "constructor_declaration": _method(),
            "local_function_statement": _fn(),
        },
    ),
    "ruby": Grammar(
        "ruby",
        "[(class) (module) (method) (singleton_method)] @def (comment) @lead",
        {
            "class": _CLASS,
            "module": NodeRule("module", container=True),
            "method": _fn(),
            "singleton_method": NodeRule("function", names.ruby_singleton, method=True),
        },
    ),
    "php": Grammar(
        "php",
        "[(class_declaration) (interface_declaration) (trait_declaration) (enum_declaration)"
        " (function_definition) (method_declaration)] @def (comment) @lead",
        {
            "class_declaration": _CLASS,
            "interface_declaration": _INTERFACE,
            "trait_declaration": _TRAIT,
            "enum_declaration": _ENUM,
            "function_definition": _fn(),
            "method_declaration": _method(needs_body=True),
        },
    ),
    "kotlin": Grammar(
        "kotlin",
        "[(class_declaration) (object_declaration) (companion_object) (function_declaration)]"
        " @def [(line_comment) (multiline_comment)] @lead",
        {
            "class_declaration": NodeRule(
                names.kotlin_class_kind,
                names.first_child_of("type_identifier"),
                names.body_child("class_body", "enum_class_body"),
                container=True,
            ),
            "object_declaration": NodeRule(
                "class",
                names.first_child_of("type_identifier"),
                names.body_child("class_body"),
                container=True,
            ),
            "companion_object": NodeRule(
                "class", names.kotlin_companion, names.body_child("class_body"), container=True
            ),
            "function_declaration": NodeRule(
                "function",
                names.first_child_of("simple_identifier"),
                names.body_child("function_body"),
                needs_body=True,
            ),
        },
    ),
    "scala": Grammar(
        "scala",
        "[(class_definition) (object_definition) (trait_definition) (enum_definition)"
        " (function_definition) (function_declaration)] @def [(comment) (block_comment)] @lead",
        {
            "class_definition": _CLASS,
            "object_definition": _CLASS,
            "trait_definition": _TRAIT,
            "enum_definition": _ENUM,
            "function_definition": _fn(),
            "function_declaration": _method(declaration_only=True),
        },
    ),
    "swift": Grammar(
        "swift",
        "[(class_declaration) (protocol_declaration) (function_declaration) (init_declaration)"
        " (deinit_declaration) (protocol_function_declaration)] @def"
        " [(comment) (multiline_comment)] @lead",
        {
            "class_declaration": NodeRule(names.swift_class_kind, container=True),
            "protocol_declaration": _INTERFACE,
            "function_declaration": _fn(),
            "init_declaration": NodeRule(
                "function", names.keyword_name("init", "init"), method=True
            ),
            "deinit_declaration": NodeRule(
                "function", names.keyword_name("deinit", "deinit"), method=True
            ),
            "protocol_function_declaration": _method(declaration_only=True),
        },
    ),
    "bash": Grammar(
        "bash", "(function_definition) @def (comment) @lead", {"function_definition": _fn()}
    ),
    "lua": Grammar(
        "lua",
        """
        (function_declaration) @def
        (assignment_statement
          . (variable_list . (_) .) . (expression_list . (function_definition) .)) @def
        (field name: (identifier) value: (function_definition)) @def
        (comment) @lead
        """,
        {
            "function_declaration": NodeRule("function", names.lua_function),
            "assignment_statement": NodeRule(
                "function", names.lua_assignment, names.lua_value_body
            ),
            "field": NodeRule("function", names.lua_field, names.lua_value_body),
        },
        {"variable_declaration": True},  # `local inc = function ...`
    ),
    "haskell": Grammar(
        "haskell",
        # Top-level declarations and class/instance members; `let` and `where` bindings are
        # local names, not definitions.
        "(declarations [(function) (bind) (data_type) (newtype) (type_synomym) (class)"
        " (instance)] @def)"
        " (class_declarations [(function) (bind) (signature)] @def)"
        " (instance_declarations [(function) (bind)] @def)"
        " [(comment) (haddock) (pragma) (signature)] @lead",
        {
            "function": NodeRule("function", names.haskell_name, names.field_of("match")),
            "bind": NodeRule("function", names.haskell_name, names.field_of("match")),
            "data_type": NodeRule("struct", names.haskell_name, names.field_of("constructors")),
            "newtype": NodeRule("struct", names.haskell_name, names.field_of("constructor")),
            "type_synomym": NodeRule("struct", names.haskell_name, names.field_of("type")),
            # A class or instance is one chunk (its members are definitions inside it): its
            # methods are mostly one-line signatures and defaults that would each be a chunk.
            "class": NodeRule("trait", body=names.field_of("declarations")),
            "instance": NodeRule("impl", names.haskell_instance, names.field_of("declarations")),
            "signature": NodeRule(  # a class method's type
                "function", names.haskell_name, method=True, declaration_only=True
            ),
        },
        clauses=True,
    ),
    "zig": Grammar(
        "zig",
        # Functions, and the types a `const` names (`const Foo = struct {...}`, enums, unions,
        # error sets), at the top level, in a container, or in the `struct` a generic type's
        # function returns (`fn List(comptime T: type) type { return struct {...}; }`); other
        # `const`s and `test` blocks are module code.
        "(Decl (FnProto)) @def"
        " (Decl (VarDecl (ErrorUnionExpr (SuffixExpr [(ContainerDecl) (ErrorSetDecl)])))) @def"
        " [(doc_comment) (line_comment)] @lead",
        # A container: its functions and nested types get chunks of their own, and so do
        # those of the struct a generic type's function returns.
        {"Decl": NodeRule(names.zig_kind, names.zig_name, names.zig_body, container=True)},
    ),
}


def grammar_for(language: str) -> Grammar | None:
    return _GRAMMARS.get(language)


def grammar_languages() -> frozenset[str]:
    return frozenset(_GRAMMARS)
