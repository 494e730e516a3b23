from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.errors import IndexCorrupt, IndexIncompatible
from signals.symbol.table import (
    READ_CACHE_KIB,
    TABLE_FILE,
    ReferenceRecord,
    SymbolRecord,
    SymbolTable,
    write_table,
)


def record(name: str, readable: str, path: str = "m.py", line: int = 1) -> SymbolRecord:
    return SymbolRecord(
        symbol=f"engine . . . {path}/{name}().",
        readable=readable,
        name=name,
        kind="function",
        path=path,
        start_line=line,
        end_line=line + 1,
        name_line=line,
        chunk_id=line,
        references=0,
        source="tree-sitter",
    )


@pytest.fixture
def table(tmp_path: Path) -> SymbolTable:
    records = [
        record("parseHeader", "m.parseHeader", line=1),
        record("parse", "m.parse", line=3),
        record("render", "m.render", line=5),
    ]
    references = [ReferenceRecord(records[1].symbol, "n.py", 7, None)]
    write_table(tmp_path / TABLE_FILE, records, references)
    return SymbolTable.open(tmp_path)


def test_round_trip(table: SymbolTable) -> None:
    assert table.count == 3
    records = table.records([0, 1, 2])
    assert records[1].readable == "m.parse"
    assert records[1].chunk_id == 3
    assert table.with_symbol(records[2].symbol) == {2: records[2]}
    assert table.references([records[1].symbol]) == [
        ReferenceRecord(records[1].symbol, "n.py", 7, None)
    ]
    assert table.sources() == {"tree-sitter": 3}


def test_exact_and_prefix_lookups_are_case_insensitive(table: SymbolTable) -> None:
    assert [(i, n) for i, n, _, _ in table.exact(["parse"])] == [(1, "parse")]
    assert table.prefixed("parse", 10) == [(0, "parseheader")]  # "parse" itself is exact
    assert table.prefixed("zzz", 10) == []


def test_postings_hold_name_and_context_parts(table: SymbolTable) -> None:
    postings = {(part, field): list(ids) for part, field, _, ids in table.postings(["parse", "m"])}
    assert postings[("parse", "n")] == [0, 1]
    assert postings[("m", "c")] == [0, 1, 2]
    assert len(table.name_weight) == len(table.prior) == len(table.part_counts) == 3
    assert list(table.part_counts) == [2, 1, 1]


def test_a_missing_table_is_corrupt(tmp_path: Path) -> None:
    with pytest.raises(IndexCorrupt, match="missing"):
        SymbolTable.open(tmp_path)


def test_a_table_of_another_version_is_incompatible(tmp_path: Path) -> None:
    write_table(tmp_path / TABLE_FILE, [], [])
    conn = sqlite3.connect(tmp_path / TABLE_FILE)
    with conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'version'")
    conn.close()
    with pytest.raises(IndexIncompatible, match="reindex"):
        SymbolTable.open(tmp_path)


def test_a_damaged_table_is_corrupt(tmp_path: Path) -> None:
    (tmp_path / TABLE_FILE).write_bytes(b"not a database at all" * 100)
    with pytest.raises(IndexCorrupt, match="unreadable"):
        SymbolTable.open(tmp_path)


def test_a_reader_keeps_a_small_page_cache(table: SymbolTable) -> None:
    # As the chunk store's readers (engine/index/store.py's READ_CACHE_KIB, issue 16).
    assert table._conn.execute("PRAGMA cache_size").fetchone() == (-READ_CACHE_KIB,)
