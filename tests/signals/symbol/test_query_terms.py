from __future__ import annotations

from signals.symbol.query_terms import Frame, dotted_key, query_terms


def test_python_javascript_and_java_frames() -> None:
    text = (
        '  File "/srv/app/http/utils.py", line 3, in parse_header_links\n'
        "    at async Server.handle (file:///home/me/src/server.ts:10:5)\n"
        "    at com.acme.Server.start(Server.java:42)\n"
    )
    assert query_terms(text).frames == (
        Frame("parse_header_links", "/srv/app/http/utils.py"),
        Frame("handle", "/home/me/src/server.ts"),
        Frame("start", "Server.java"),
    )


def test_dotted_names_in_every_notation() -> None:
    terms = query_terms("why does Greeter.greet call http::Client and a/b#c")
    assert terms.dotted == ("greeter.greet", "http.client", "a.b.c")
    assert dotted_key("Greeter#greet") == "greeter.greet"


def test_plain_words_are_marked_only_next_to_code() -> None:
    assert query_terms("greet a person by name").plain == frozenset()
    terms = query_terms("most recent call in parse_header_links")
    assert {"recent", "call"} <= terms.plain
    assert "parse_header_links" not in terms.plain


def test_parts_of_a_camel_case_token_are_split_as_written() -> None:
    terms = query_terms("parseHTTPRequest")
    assert terms.whole == ("parsehttprequest",)
    assert terms.parts_of["parsehttprequest"] == ("parse", "http", "request")
