"""Ranking rules: exact > all parts > prefix > some parts; rare parts weigh more; long queries."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from signals.symbol.ranking import rank
from signals.symbol.table import TABLE_FILE, SymbolRecord, SymbolTable, write_table


def record(readable: str, kind: str = "function", references: int = 0) -> SymbolRecord:
    """A definition whose file is the readable name's lower-case leading components."""
    *enclosing, name = readable.split(".")
    path = "/".join(part for part in enclosing if not part[0].isupper()) + ".py"
    return SymbolRecord(
        symbol=f"engine . . . {path}/{name}().",
        readable=readable,
        name=name,
        kind=kind,
        path=path,
        start_line=1,
        end_line=2,
        name_line=1,
        chunk_id=None,
        references=references,
        source="tree-sitter",
    )


def open_table(tmp_path: Path, records: Sequence[SymbolRecord]) -> SymbolTable:
    write_table(tmp_path / TABLE_FILE, records, [])
    return SymbolTable.open(tmp_path)


def names(table: SymbolTable, query: str, limit: int = 10) -> list[str]:
    ranked = rank(table, query, limit)
    records = table.records([r.definition_id for r in ranked])
    return [records[r.definition_id].readable for r in ranked]


# Filler gives the common parts ("get", "value", "name", "line", "file", "call") realistic
# document frequencies.
FILLER = [
    *(f"pkg.mod{i}.get_value_{i}" for i in range(40)),
    *(f"pkg.names{i}.name" for i in range(15)),
    *(f"pkg.lines{i}.line" for i in range(10)),
    *(f"pkg.files{i}.file" for i in range(10)),
    *(f"pkg.calls{i}.call" for i in range(10)),
]


@pytest.fixture
def table(tmp_path: Path) -> Iterator[SymbolTable]:
    readable = [
        "toy.greeter.greet",
        "toy.greeter.greeter_factory",
        "toy.greeter.greet_all",
        "toy.loud.loud_greet",
        "toy.welcome.Welcome.greet",
        "http.utils.parse_header_links",
        "http.utils.parse_header",
        "http.utils.header_parse_links_fallback",
        "http.client.parse",
        "http.client.HTTPConnection",
        "http.client.HTTPConnection.request",
        "http.server.Handler.request",
        "json.decoder.JSONDecoder.decode",
        "codecs.Codec.decode",
        "mail.imap.IMAP4.recent",
        *FILLER,
    ]
    opened = open_table(tmp_path, [record(r) for r in readable])
    yield opened
    opened.close()


def test_exact_beats_prefix_beats_some_parts(table: SymbolTable) -> None:
    found = names(table, "greet")
    assert found[:2] == ["toy.greeter.greet", "toy.welcome.Welcome.greet"]
    # Prefix matches next, the shorter completion first; a name merely holding the part last.
    assert found[2:5] == [
        "toy.greeter.greet_all",
        "toy.greeter.greeter_factory",
        "toy.loud.loud_greet",
    ]


def test_exact_match_is_case_insensitive(table: SymbolTable) -> None:
    assert names(table, "GREET")[0] == "toy.greeter.greet"
    assert names(table, "httpconnection")[0] == "http.client.HTTPConnection"


def test_every_part_of_a_name_beats_a_prefix_and_a_partial_match(table: SymbolTable) -> None:
    found = names(table, "parseHeaderLinks")
    assert found[0] == "http.utils.parse_header_links"
    assert found[1] == "http.utils.header_parse_links_fallback" or found[1] == (
        "http.utils.parse_header"
    )
    assert found.index("http.utils.parse_header_links") < found.index("http.client.parse")


def test_rare_parts_weigh_more(table: SymbolTable) -> None:
    # "value" is in 40 names, "links" in 2: a name covering the rare part wins.
    found = names(table, "value links")
    assert found[0] in ("http.utils.parse_header_links", "http.utils.header_parse_links_fallback")
    assert all("get_value" not in name for name in found[:2])


def test_a_natural_language_query_finds_the_name_by_its_parts(table: SymbolTable) -> None:
    assert names(table, "greet a person by name")[0] == "toy.greeter.greet"
    assert names(table, "how to parse the links of a header")[0] == (
        "http.utils.parse_header_links"
    )


def test_a_dotted_name_matches_the_end_of_the_qualified_name(table: SymbolTable) -> None:
    assert names(table, "HTTPConnection.request")[0] == "http.client.HTTPConnection.request"
    assert names(table, "Handler.request")[0] == "http.server.Handler.request"
    assert names(table, "Welcome.greet")[0] == "toy.welcome.Welcome.greet"


def test_a_stack_trace_finds_its_frames_not_its_prose(table: SymbolTable) -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/http/utils.py", line 3, in parse_header_links\n'
        "    return parse_header(value)\n"
        '  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode\n'
        "    obj, end = self.raw_decode(s)\n"
        "ValueError: bad header line in file"
    )
    found = names(table, trace)
    assert set(found[:2]) == {"http.utils.parse_header_links", "json.decoder.JSONDecoder.decode"}
    assert found.index("json.decoder.JSONDecoder.decode") < found.index("codecs.Codec.decode")
    # "recent", "call", "line", "file" are prose here, not the code asked about.
    for prose in ("mail.imap.IMAP4.recent", "pkg.calls0.call", "pkg.lines0.line"):
        assert prose not in found[:3]


def test_a_javascript_frame_matches_name_and_file(tmp_path: Path) -> None:
    table = open_table(
        tmp_path,
        [record("src.a.render"), record("src.b.render"), *(record(f) for f in FILLER)],
    )
    try:
        trace = "TypeError: x is undefined\n    at render (/home/me/proj/src/b.py:10:5)"
        assert names(table, trace)[0] == "src.b.render"
    finally:
        table.close()


def test_references_are_a_small_popularity_prior(tmp_path: Path) -> None:
    table = open_table(
        tmp_path,
        [record("a.quiet.run"), record("b.busy.run", references=50), record("c.other.walk")],
    )
    try:
        assert names(table, "run") == ["b.busy.run", "a.quiet.run"]
    finally:
        table.close()


def test_variables_rank_after_functions_of_the_same_name(tmp_path: Path) -> None:
    table = open_table(
        tmp_path, [record("a.config.settings", kind="term"), record("b.load.settings")]
    )
    try:
        assert names(table, "settings") == ["b.load.settings", "a.config.settings"]
    finally:
        table.close()


def test_nothing_matches_gives_nothing(table: SymbolTable) -> None:
    assert names(table, "zebra quokka") == []
    assert rank(table, "greet", 0) == []


def test_limit_is_respected_and_ties_are_stable(table: SymbolTable) -> None:
    assert len(names(table, "get value", 5)) == 5
    assert names(table, "get value", 5) == names(table, "get value", 5)
