from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scip import scip_pb2
from scip.errors import SymbolError
from scip.symbols import (
    Descriptor,
    Package,
    Symbol,
    descriptor_name,
    format_symbol,
    is_local_symbol,
    parse_symbol,
    readable_name,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "scip"

PY_INIT = "scip-python python toy 0.1 `toy.greeter`/Greeter#__init__()."
TS_CIRCLE = "scip-typescript npm toyts 0.1.0 src/`shapes.ts`/Circle#"


def test_parses_a_scip_python_method() -> None:
    assert parse_symbol(PY_INIT) == Symbol(
        "scip-python",
        Package("python", "toy", "0.1"),
        (
            Descriptor("toy.greeter", "namespace"),
            Descriptor("Greeter", "type"),
            Descriptor("__init__", "method"),
        ),
    )


def test_parses_every_descriptor_kind() -> None:
    symbol = parse_symbol("s m n v ns/T#[U]m(+1).(p)term.meta:mac!")
    assert [(d.name, d.suffix, d.disambiguator) for d in symbol.descriptors] == [
        ("ns", "namespace", ""),
        ("T", "type", ""),
        ("U", "type_parameter", ""),
        ("m", "method", "+1"),
        ("p", "parameter", ""),
        ("term", "term", ""),
        ("meta", "meta", ""),
        ("mac", "macro", ""),
    ]


def test_dot_package_parts_are_empty_and_spaces_are_doubled() -> None:
    symbol = parse_symbol("my  scheme . my  pkg . x.")
    assert symbol.scheme == "my scheme"
    assert symbol.package == Package("", "my pkg", "")
    assert format_symbol(symbol) == "my  scheme . my  pkg . x."


def test_backticks_escape_names_and_double_inside() -> None:
    symbol = parse_symbol("s . . . `a``b c`#`<constructor>`().")
    assert [d.name for d in symbol.descriptors] == ["a`b c", "<constructor>"]
    assert format_symbol(symbol) == "s . . . `a``b c`#`<constructor>`()."
    # A needless escape reads fine and formats without the backticks.
    assert format_symbol(parse_symbol("s . . . `abc`/")) == "s . . . abc/"


def test_empty_names_are_read_bare_as_scip_python_writes_them() -> None:
    text = "scip-python python click 0 /__init__:"
    symbol = parse_symbol(text)
    assert symbol.descriptors == (Descriptor("", "namespace"), Descriptor("__init__", "meta"))
    assert format_symbol(symbol) == text
    assert readable_name(text) == "__init__"
    # A bare empty method name would read as a parameter, so it is escaped.
    method = Symbol("s", Package(), (Descriptor("", "method"),))
    assert format_symbol(method) == "s . . . ``()."
    assert parse_symbol("s . . . ().") == Symbol(
        "s", Package(), (Descriptor("", "parameter"), Descriptor("", "term"))
    )


def test_local_symbols() -> None:
    assert parse_symbol("local 12") == Symbol(local_id="12")
    assert parse_symbol("local 12").is_local
    assert format_symbol(Symbol(local_id="x9")) == "local x9"
    assert is_local_symbol("local 3")
    assert not is_local_symbol(TS_CIRCLE)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "not followed by a space"),
        ("scheme", "not followed by a space"),
        ("s m n v", "not followed by a space"),
        ("s m n v ", "no descriptors"),
        ("s m n v foo", "expected a descriptor suffix"),
        ("s m n v foo(", "expected ')'"),
        ("s m n v foo()", "expected '.'"),
        ("s m n v `foo", "unterminated"),
        ("s m n v [T", "expected ']'"),
        ("s m n v (", "expected ')', found end of string"),
        ("s m n v a/%#", "expected a descriptor suffix (one of / # . : ! (), found '%'"),
        ("local ", "empty local id"),
    ],
)
def test_malformed_symbols_raise_with_the_problem(text: str, problem: str) -> None:
    with pytest.raises(SymbolError, match=re.escape(problem)):
        parse_symbol(text)


@pytest.mark.parametrize(
    "symbol",
    [
        Symbol("", Package(), (Descriptor("a", "term"),)),
        Symbol("local", Package(), (Descriptor("a", "term"),)),
        Symbol("local x", Package(), (Descriptor("a", "term"),)),
        Symbol("s", Package("."), (Descriptor("a", "term"),)),
        Symbol("s", Package(" lead"), (Descriptor("a", "term"),)),
        Symbol("s", Package(), ()),
        Symbol("s", Package(), (Descriptor("a", "term", "1"),)),
        Symbol("s", Package(), (), local_id="1"),
    ],
)
def test_symbols_that_would_not_read_back_are_refused(symbol: Symbol) -> None:
    with pytest.raises(SymbolError):
        format_symbol(symbol)


def test_readable_names() -> None:
    assert readable_name(PY_INIT) == "toy.greeter.Greeter.__init__"
    assert readable_name("scip-python python toy 0.1 `toy.greeter`/greet().") == "toy.greeter.greet"
    assert readable_name(PY_INIT + "(self)") == "toy.greeter.Greeter.__init__"
    assert readable_name(TS_CIRCLE) == "src/shapes.ts.Circle"
    assert readable_name("scip-go gomod x v1 github.com/a/b/pkg/Run().") == "github.com/a/b/pkg.Run"
    assert readable_name("s . . . Map#[K]get().") == "Map.get"
    assert readable_name("local 3") == ""


def test_descriptor_names() -> None:
    assert descriptor_name(PY_INIT) == "__init__"
    assert descriptor_name(TS_CIRCLE + "`<constructor>`().") == "<constructor>"
    assert descriptor_name(PY_INIT + "(name)") == "name"
    assert descriptor_name("local 3") == ""


def test_every_symbol_the_real_indexers_wrote_formats_back_unchanged() -> None:
    seen = 0
    for name in ("python", "typescript"):
        index = scip_pb2.Index()
        index.ParseFromString((FIXTURES / name / "index.scip").read_bytes())
        for document in index.documents:
            for occurrence in document.occurrences:
                assert format_symbol(parse_symbol(occurrence.symbol)) == occurrence.symbol
                seen += 1
    assert seen > 50


# ---------------------------------------------------------------- properties

names = st.text(max_size=8)
parts = st.text(max_size=6).filter(lambda p: p != "." and not p.startswith(" "))
schemes = st.text(min_size=1, max_size=6).filter(
    lambda s: not (s.replace(" ", "  ") + " ").startswith("local ")
)
descriptors = st.one_of(
    st.builds(
        Descriptor,
        names,
        st.sampled_from(
            ["namespace", "type", "term", "type_parameter", "parameter", "meta", "macro"]
        ),
    ),
    st.builds(Descriptor, names, st.just("method"), names),
)
global_symbols = st.builds(
    Symbol,
    schemes,
    st.builds(Package, parts, parts, parts),
    st.lists(descriptors, min_size=1, max_size=5).map(tuple),
)
local_symbols = st.builds(lambda i: Symbol(local_id=i), st.text(min_size=1, max_size=6))
symbols = st.one_of(global_symbols, local_symbols)


@given(symbols)
def test_parse_inverts_format(symbol: Symbol) -> None:
    assert parse_symbol(format_symbol(symbol)) == symbol


@given(symbols)
def test_format_inverts_parse_on_formatted_strings(symbol: Symbol) -> None:
    text = format_symbol(symbol)
    assert format_symbol(parse_symbol(text)) == text


@given(global_symbols)
def test_readable_name_never_shows_escapes_or_parameters(symbol: Symbol) -> None:
    kept = [
        d.name
        for d in symbol.descriptors
        if d.suffix not in ("parameter", "type_parameter") and d.name
    ]
    readable = readable_name(symbol)
    assert len(readable) == sum(map(len, kept)) + max(0, len(kept) - 1)
    if kept:
        assert readable.endswith(kept[-1])
