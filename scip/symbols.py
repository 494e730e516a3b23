"""SCIP symbol strings: parse them, format them, and turn them into readable names.

The grammar (from scip.proto)::

    <symbol>     ::= <scheme> ' ' <package> ' ' (<descriptor>)+ | 'local ' <local-id>
    <package>    ::= <manager> ' ' <package-name> ' ' <version>
    <scheme>     ::= any UTF-8, spaces escaped by doubling them; never empty
    <manager>, <package-name>, <version> ::= like <scheme>; '.' stands for an empty value
    <descriptor> ::= <name> '/'                        namespace
                   | <name> '#'                        type
                   | <name> '.'                        term
                   | <name> ':'                        meta
                   | <name> '!'                        macro
                   | <name> '(' <disambiguator> ').'   method
                   | '[' <name> ']'                    type parameter
                   | '(' <name> ')'                    parameter
    <name>       ::= simple identifier ([A-Za-z0-9_+$-]+) | '`' any UTF-8, '`' doubled '`'

Deliberate leniencies, because real indexers rely on them: a method's disambiguator may be
empty (``greet().``); any name may be empty, written bare (scip-python writes
``scip-python python click 0 /__init__:`` for a package indexed from inside its own folder);
and a ``local`` id is the rest of the string. An empty method name is written ````()``
because a bare ``().`` would read as a parameter. ``format_symbol``
refuses what would not read back as the same symbol: an empty scheme, a scheme that reads as
``local ``, a package part that is literally ``.`` or starts with a space.

Readable names (``readable_name``) join the descriptors after dropping parameters and type
parameters. Namespaces are joined to each other with ``/`` (they are path segments in
scip-typescript and Go, and scip-python puts a whole dotted module in one namespace), and
everything after the last namespace is joined with ``.``:

    scip-python python toy 0.1 `toy.greeter`/Greeter#__init__().  ->  toy.greeter.Greeter.__init__
    scip-typescript npm toyts 0.1.0 src/`shapes.ts`/Circle#        ->  src/shapes.ts.Circle
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from scip.errors import SymbolError

DescriptorSuffix = Literal[
    "namespace", "type", "term", "method", "type_parameter", "parameter", "meta", "macro"
]

_SUFFIX_CHARS: dict[str, DescriptorSuffix] = {
    "/": "namespace",
    "#": "type",
    ".": "term",
    ":": "meta",
    "!": "macro",
}
_CHAR_OF_SUFFIX = {suffix: char for char, suffix in _SUFFIX_CHARS.items()}
_LOCAL_PREFIX = "local "
_EMPTY_PART = "."


_SIMPLE_NAME = re.compile(r"[A-Za-z0-9_+$-]*")


@dataclass(frozen=True, slots=True)
class Package:
    """Empty strings stand for the ``.`` placeholder."""

    manager: str = ""
    name: str = ""
    version: str = ""


@dataclass(frozen=True, slots=True)
class Descriptor:
    name: str  # unescaped: no backticks
    suffix: DescriptorSuffix
    disambiguator: str = ""  # methods only; "" for every other suffix


@dataclass(frozen=True, slots=True)
class Symbol:
    """A parsed symbol. A local symbol has ``local_id`` set and nothing else."""

    scheme: str = ""
    package: Package = Package()
    descriptors: tuple[Descriptor, ...] = ()
    local_id: str = ""

    @property
    def is_local(self) -> bool:
        return self.local_id != ""


def is_local_symbol(symbol: str) -> bool:
    return symbol.startswith(_LOCAL_PREFIX)


# ---------------------------------------------------------------- parsing


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> SymbolError:
        return SymbolError(f"invalid SCIP symbol {self.text!r}: {what} at offset {self.pos}")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "end of string"
            raise self.fail(f"expected {char!r}, found {found}")
        self.pos += 1

    def space_escaped(self, what: str) -> str:
        """A scheme or package part: runs to the next single space; '  ' is one space."""
        out: list[str] = []
        while True:
            space = self.text.find(" ", self.pos)
            if space < 0:
                self.pos = len(self.text)
                raise self.fail(f"the {what} is not followed by a space")
            out.append(self.text[self.pos : space])
            if self.text.startswith("  ", space):
                out.append(" ")
                self.pos = space + 2
                continue
            self.pos = space + 1
            break
        part = "".join(out)
        if not part:
            raise self.fail(f"empty {what}")
        return part

    def identifier(self) -> str:
        """A simple or escaped name; may be empty (see the module docstring)."""
        if self.peek() == "`":
            return self.escaped_identifier()
        match = _SIMPLE_NAME.match(self.text, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()
        return match.group()

    def escaped_identifier(self) -> str:
        self.pos += 1  # the opening backtick
        out: list[str] = []
        while True:
            char = self.peek()
            if char == "":
                raise self.fail("unterminated backtick-escaped name")
            self.pos += 1
            if char == "`":
                if self.peek() == "`":
                    out.append("`")
                    self.pos += 1
                    continue
                return "".join(out)
            out.append(char)

    def descriptor(self) -> Descriptor:
        char = self.peek()
        if char == "[":
            self.pos += 1
            name = self.identifier()
            self.expect("]")
            return Descriptor(name, "type_parameter")
        if char == "(":
            self.pos += 1
            name = self.identifier()
            self.expect(")")
            return Descriptor(name, "parameter")
        name = self.identifier()
        char = self.peek()
        if char == "(":
            self.pos += 1
            disambiguator = self.identifier()
            self.expect(")")
            self.expect(".")
            return Descriptor(name, "method", disambiguator)
        suffix = _SUFFIX_CHARS.get(char)
        if suffix is None:
            found = repr(char) if char else "end of string"
            raise self.fail(f"expected a descriptor suffix (one of / # . : ! (), found {found}")
        self.pos += 1
        return Descriptor(name, suffix)


def parse_symbol(symbol: str) -> Symbol:
    """Parse a symbol string; raises ``SymbolError`` naming the offset of the problem."""
    if symbol.startswith(_LOCAL_PREFIX):
        local_id = symbol[len(_LOCAL_PREFIX) :]
        if not local_id:
            raise SymbolError(f"invalid SCIP symbol {symbol!r}: empty local id")
        return Symbol(local_id=local_id)
    parser = _Parser(symbol)
    scheme = parser.space_escaped("scheme")
    parts = [
        parser.space_escaped(what)
        for what in ("package manager", "package name", "package version")
    ]
    manager, name, version = ("" if part == _EMPTY_PART else part for part in parts)
    descriptors: list[Descriptor] = []
    while parser.pos < len(symbol):
        descriptors.append(parser.descriptor())
    if not descriptors:
        raise parser.fail("no descriptors")
    return Symbol(scheme, Package(manager, name, version), tuple(descriptors))


# ---------------------------------------------------------------- formatting


def _escape_space(part: str) -> str:
    return part.replace(" ", "  ")


def _escape_name(name: str) -> str:
    if _SIMPLE_NAME.fullmatch(name):
        return name  # "" included: an empty name is written bare
    return "`" + name.replace("`", "``") + "`"


def _format_descriptor(descriptor: Descriptor) -> str:
    name = _escape_name(descriptor.name)
    if descriptor.suffix == "method":
        return f"{name or '``'}({_escape_name(descriptor.disambiguator)})."
    if descriptor.disambiguator:
        raise SymbolError(f"only methods have a disambiguator, not the {descriptor.suffix} {name}")
    if descriptor.suffix == "type_parameter":
        return f"[{name}]"
    if descriptor.suffix == "parameter":
        return f"({name})"
    return name + _CHAR_OF_SUFFIX[descriptor.suffix]


def format_symbol(symbol: Symbol) -> str:
    """The symbol's string form; raises ``SymbolError`` for a symbol no string can express."""
    if symbol.is_local:
        if symbol.scheme or symbol.package != Package() or symbol.descriptors:
            raise SymbolError("a local symbol has only a local id")
        return _LOCAL_PREFIX + symbol.local_id
    if not symbol.scheme:
        raise SymbolError("a global symbol needs a non-empty scheme")
    scheme = _escape_space(symbol.scheme)
    if (scheme + " ").startswith(_LOCAL_PREFIX):
        raise SymbolError(f"scheme {symbol.scheme!r} would read back as a local symbol")
    if not symbol.descriptors:
        raise SymbolError("a global symbol needs at least one descriptor")
    package = symbol.package
    parts = []
    for part in (package.manager, package.name, package.version):
        if part == _EMPTY_PART:
            raise SymbolError("a package part cannot be '.', which stands for empty")
        if part.startswith(" "):
            # After the separator space, an escaped leading space would make the run of
            # spaces ambiguous ("a " + " b" and "a  " + "b" format alike).
            raise SymbolError(f"a package part cannot start with a space: {part!r}")
        parts.append(_escape_space(part) if part else _EMPTY_PART)
    descriptors = "".join(_format_descriptor(d) for d in symbol.descriptors)
    return f"{scheme} {' '.join(parts)} {descriptors}"


# ---------------------------------------------------------------- readable names


def _as_symbol(symbol: str | Symbol) -> Symbol:
    return parse_symbol(symbol) if isinstance(symbol, str) else symbol


def readable_name(symbol: str | Symbol) -> str:
    """A dotted path for people and search, e.g. ``toy.greeter.Greeter.__init__``.

    Parameters, type parameters and empty names are dropped; see the module docstring for
    how namespaces are joined. A local symbol, or one made only of parameters, gives "".
    """
    parsed = _as_symbol(symbol)
    out: list[str] = []
    previous: DescriptorSuffix | None = None
    for descriptor in parsed.descriptors:
        if descriptor.suffix in ("parameter", "type_parameter") or not descriptor.name:
            continue
        if previous is not None:
            both_namespaces = previous == "namespace" and descriptor.suffix == "namespace"
            out.append("/" if both_namespaces else ".")
        out.append(descriptor.name)
        previous = descriptor.suffix
    return "".join(out)


def descriptor_name(symbol: str | Symbol) -> str:
    """The last descriptor's unescaped name (``greet`` for ``...Greeter#greet().``).

    A local symbol gives "" because its id is not a name.
    """
    parsed = _as_symbol(symbol)
    return parsed.descriptors[-1].name if parsed.descriptors else ""
