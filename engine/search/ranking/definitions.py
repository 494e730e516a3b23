"""Definition first: when a query is, or contains, a symbol name, the chunk that defines that
symbol outranks its implementations, re-exports, call sites and mentions.

The names come from the query: every token of an identifier query (``Railtie``,
``Flask.url_for``, ``parse_header_links``), and in a question only the tokens written like
code (``PersistentPreRun``, ``url_for``) or capitalised past the first word (``how are
Railtie initializers ordered``). A chunk matches when the chunker recorded it as a
definition (its kind and own name come from the syntax tree, as the symbol table's do) of
that name; a type (class, interface, struct, enum, trait) counts more than a callable, an
``impl`` block least; a named module chunk (Ruby, Elixir, namespaces) counts as a type,
while module-level code (no name) never matches. When several files define the name (Ruby
reopens classes, Rust has ``impl`` blocks), the file whose stem is the name wins the tie.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from engine.terms import STOPWORDS, identifiers, looks_like_identifier

TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait"})
CALLABLE_KINDS = frozenset({"function", "method"})
_QUALIFIED = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)+")
_SEPARATORS = re.compile(r"\.|::|#|->")


@dataclass(frozen=True, slots=True)
class DefinitionBoosts:
    """Multipliers of a matching definition's score, by what kind of thing it defines."""

    type_kind: float = 2.0
    callable_kind: float = 1.8
    impl_kind: float = 1.2
    other_case: float = 0.8  # the name matches only case-insensitively: this share of the boost
    in_question: float = 0.6  # a name found inside a question: this share of the boost
    qualified: float = 1.1  # the qualifier matches too (``Flask.url_for``)
    file_stem: float = 1.15  # the file is named after the symbol


DEFAULT_BOOSTS = DefinitionBoosts()


@dataclass(frozen=True, slots=True)
class QueryNames:
    names: tuple[str, ...]  # as written
    qualified: tuple[tuple[str, ...], ...]  # each dotted name as its parts
    in_question: bool


def query_names(text: str, identifier_query: bool) -> QueryNames:
    qualified = tuple(tuple(_SEPARATORS.split(m)) for m in _QUALIFIED.findall(text))
    tokens = identifiers(text)
    if identifier_query:
        names = [t for t in tokens if len(t) >= 2 and not t.isdigit()]
    else:
        names = [
            t
            for i, t in enumerate(tokens)
            if len(t) >= 3
            and t.lower() not in STOPWORDS
            and (looks_like_identifier(t) or (i > 0 and t[0].isupper()))
        ]
    for parts in qualified:
        names.extend(parts[-1:])
    return QueryNames(tuple(dict.fromkeys(names)), qualified, not identifier_query)


def continues_definition(kind: str, signature: str, text: str) -> bool:
    """Whether a chunk of a type is a later part of it, not its header: the chunker gives
    the fields between a class's methods (and the windows of a long header) the class's
    name, kind and signature (engine/chunking/layout.py), and only the header holds the
    signature's line. A long function's later windows are not counted: they are its body,
    where a stack frame's line points."""
    if kind not in TYPE_KINDS and kind not in {"impl", "module"}:
        return False
    head = signature.strip().splitlines()[0].strip() if signature.strip() else ""
    return bool(head) and head not in text


def _flat(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def definition_factor(
    kind: str,
    name: str,
    qualified_name: str,
    path: str,
    query: QueryNames,
    boosts: DefinitionBoosts = DEFAULT_BOOSTS,
    *,
    continued: bool = False,
) -> tuple[float, str]:
    """The multiplier for a chunk that defines ``name`` (1.0 when the query names no such
    symbol, or when the chunk is a later part of the definition: ``continued``), and the
    reason shown by ``--explain``."""
    if not name or not query.names or continued:
        return 1.0, ""
    if kind in TYPE_KINDS or kind == "module":  # a named module: Ruby's, Elixir's, a namespace
        base = boosts.type_kind
    elif kind in CALLABLE_KINDS:
        base = boosts.callable_kind
    elif kind == "impl":
        base = boosts.impl_kind
    else:
        return 1.0, ""
    if name in query.names:
        strength = 1.0
    elif name.lower() in {n.lower() for n in query.names}:
        strength = boosts.other_case
    else:
        return 1.0, ""
    if query.in_question:
        strength *= boosts.in_question
    factor = 1.0 + (base - 1.0) * strength
    reason = f"defines {name}"
    qualifier = qualified_name.replace("::", ".").split(".")
    if any(
        len(parts) > 1
        and [p.lower() for p in qualifier[-len(parts) :]] == [p.lower() for p in parts]
        for parts in query.qualified
    ):
        factor *= boosts.qualified
        reason += " (qualified)"
    if _flat(PurePosixPath(path).stem) == _flat(name):
        factor *= boosts.file_stem
        reason += ", file named after it"
    return factor, reason
