from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from engine.terms import (
    _PART,
    analyze_query,
    identifier_parts,
    identifiers,
    index_terms,
    index_text,
)


def test_identifier_parts() -> None:
    assert identifier_parts("parseHTTPRequest_body2") == ("parse", "http", "request", "body", "2")
    assert identifier_parts("XMLHttpRequest") == ("xml", "http", "request")
    assert identifier_parts("snake_case_name") == ("snake", "case", "name")
    assert identifier_parts("PascalCase") == ("pascal", "case")
    assert identifier_parts("__init__") == ("init",)
    assert identifier_parts("getV2Config") == ("get", "v", "2", "config")


def test_index_terms_keeps_whole_and_parts_in_order() -> None:
    whole, parts = index_terms("def greetPerson(name): return 'hi ' + name")
    assert whole == ["def", "greetperson", "name", "return", "hi", "name"]
    assert parts[:4] == ["def", "greet", "person", "name"]


def test_query_drops_stopwords_but_keeps_code() -> None:
    q = analyze_query("how does the engine greet a person by name")
    assert q.parts == ("engine", "greet", "person", "name")
    q = analyze_query("where is parse_header_links")
    assert q.whole == ("parse_header_links",)
    assert q.parts == ("parse", "header", "links")
    assert q.identifiers == ("parse_header_links",)


def test_only_stopwords_still_searches() -> None:
    assert analyze_query("what is this").whole == ("what", "is", "this")


def test_quoted_phrase() -> None:
    q = analyze_query('find "request body" parser')
    assert q.phrases == (("request", "body"),)


@given(st.text(max_size=300))
def test_any_text_is_analyzed_without_error(text: str) -> None:
    q = analyze_query(text)
    assert all(t == t.lower() for t in q.whole + q.parts)


# The identifier pattern as plainly written; engine.terms spells it for speed.
_PLAIN_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+")


def _index_text_in_two_passes(text: str) -> tuple[str, str]:
    """The definition index_text must match: identifiers, then parts over the whole text."""
    return (
        " ".join(_PLAIN_IDENT.findall(text)).lower(),
        " ".join(_PART.findall(text)).lower(),
    )


_CODE_CHARS = "aAbBzZhHtTpP019_$ .:()\n\té-"


@given(st.text(alphabet=_CODE_CHARS, max_size=200) | st.text(max_size=200))
def test_index_text_equals_parts_over_the_whole_text(text: str) -> None:
    assert index_text(text) == _index_text_in_two_passes(text)


def test_index_text_on_code() -> None:
    text = "x = parseHTTPRequest_body2(getV2Config, 12abc, _, $el, HTTP2Server)\n__init__"
    assert index_text(text) == _index_text_in_two_passes(text)
    assert index_text(text)[1].split()[:6] == ["x", "parse", "http", "request", "body", "2"]


@given(st.text(alphabet=_CODE_CHARS, max_size=200) | st.text(max_size=200))
def test_identifiers_match_the_plain_pattern(text: str) -> None:
    assert identifiers(text) == [t for t in _PLAIN_IDENT.findall(text) if len(t) <= 64]
