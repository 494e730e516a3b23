from __future__ import annotations

from pathlib import Path

from engine.signal import IndexOptions
from engine.types import Hit, Location, Query
from signals.symbol.search import SymbolSignal
from signals.symbol.table import TABLE_FILE, SymbolRecord, write_table
from tests.signals.symbol.repos import PYTHON_DEFINITIONS, PYTHON_INDEX, build, python_chunks


def make_record(name: str, chunk_id: int | None, path: str = "a.py", line: int = 1) -> SymbolRecord:
    return SymbolRecord(
        symbol=f"engine . . . {path}/{name}.",
        readable=f"a.{name}",
        name=name,
        kind="term",
        path=path,
        start_line=line,
        end_line=line + 2,
        name_line=line,
        chunk_id=chunk_id,
        references=0,
        source="tree-sitter",
    )


def test_hits_name_the_chunk_and_the_readable_symbol(tmp_path: Path) -> None:
    options = IndexOptions(tmp_path, scip_file=PYTHON_INDEX)
    build(tmp_path / "g1", tmp_path, python_chunks(), PYTHON_DEFINITIONS, options)
    signal = SymbolSignal.open(tmp_path / "g1")
    try:
        assert signal.name == "symbol"
        assert signal.warning == ""
        hits = signal.search(Query("shout"), 10)
    finally:
        signal.close()
    assert hits[0] == Hit(chunk_id=8, score=hits[0].score, symbol="toy.util.shout")
    assert hits[0].score > 0


def test_definitions_sharing_a_chunk_give_one_hit_with_the_best_score(tmp_path: Path) -> None:
    records = [
        make_record("retry_limit", 1, line=1),
        make_record("retry_delay", 1, line=2),
        make_record("retry", 2, line=10),
        make_record("retry_policy", None, path="b.py", line=5),
    ]
    write_table(tmp_path / TABLE_FILE, records, [])
    signal = SymbolSignal.open(tmp_path)
    try:
        hits = signal.search(Query("retry"), 10)
        one = signal.search(Query("retry"), 1)
    finally:
        signal.close()
    assert [h.chunk_id for h in hits] == [2, 1, None]
    assert hits[0].symbol == "a.retry"
    assert hits[1].symbol in ("a.retry_limit", "a.retry_delay")
    assert hits[2] == Hit(None, hits[2].score, "a.retry_policy", Location("b.py", 5, 7))
    assert [h.chunk_id for h in one] == [2]
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_many_definitions_in_one_chunk_still_fill_the_limit(tmp_path: Path) -> None:
    records = [make_record(f"cache_{i}", 1, line=i + 1) for i in range(30)]
    records.append(make_record("cache_other", 2, line=100))
    write_table(tmp_path / TABLE_FILE, records, [])
    signal = SymbolSignal.open(tmp_path)
    try:
        hits = signal.search(Query("cache"), 2)
    finally:
        signal.close()
    assert sorted(h.chunk_id for h in hits if h.chunk_id is not None) == [1, 2]


def test_no_match_and_zero_limit_give_no_hits(tmp_path: Path) -> None:
    write_table(tmp_path / TABLE_FILE, [make_record("alpha", 1)], [])
    signal = SymbolSignal.open(tmp_path)
    try:
        assert signal.search(Query("omega"), 5) == []
        assert signal.search(Query("alpha"), 0) == []
    finally:
        signal.close()
