from __future__ import annotations

from pathlib import Path

from scip.reader import read_index
from signals.symbol.records import ChunkSpans, assign_owners, collect
from signals.symbol.sources import SourceIndex
from tests.fakes import make_chunk
from tests.signals.symbol.repos import PYTHON_INDEX, TYPESCRIPT_FIXTURE, python_chunks


def test_the_smallest_enclosing_chunk_is_chosen() -> None:
    chunks = [
        make_chunk(1, "a.py", "\n".join(["x"] * 30), start_line=1),  # lines 1-30
        make_chunk(2, "a.py", "\n".join(["x"] * 5), start_line=10),  # 10-14, inside 1
        make_chunk(3, "a.py", "\n".join(["x"] * 2), start_line=12),  # 12-13, inside 2
        make_chunk(4, "a.py", "x", start_line=40),
        make_chunk(5, "b.py", "x", start_line=1),
    ]
    spans = ChunkSpans(chunks)
    assert [spans.enclosing("a.py", line) for line in (1, 10, 12, 13, 14, 15, 31, 40)] == [
        1,
        2,
        3,
        3,
        2,
        1,
        None,
        4,
    ]
    assert spans.enclosing("c.py", 1) is None
    assert spans.paths == {"a.py", "b.py"}


def test_same_start_prefers_the_shorter_chunk() -> None:
    chunks = [
        make_chunk(1, "a.py", "x\ny\nz", start_line=5),
        make_chunk(2, "a.py", "x", start_line=5),
    ]
    assert ChunkSpans(chunks).enclosing("a.py", 5) == 2


def test_the_first_source_owns_a_file(tmp_path: Path) -> None:
    python = read_index(PYTHON_INDEX)
    first = SourceIndex("first", python, "")
    second = SourceIndex("second", python, "")
    known = {"toy/greeter.py", "toy/util.py", "toy/__init__.py"}
    assert set(assign_owners([first, second], known, tmp_path).values()) == {"first"}
    # Unknown to the store and absent on disk: a stale document, not owned.
    assert assign_owners([first], {"toy/util.py"}, tmp_path) == {"toy/util.py": "first"}


def test_collect_keeps_code_definitions_and_counts_references(tmp_path: Path) -> None:
    index = read_index(TYPESCRIPT_FIXTURE / "index.scip")
    source = SourceIndex("scip-typescript", index, "")
    owner = assign_owners([source], set(index.paths), tmp_path)
    records, references = collect([source], owner, ChunkSpans([]))
    by_name = {r.readable: r for r in records}
    # File namespaces are left out; everything else is kept with its readable name.
    assert "src/shapes.ts" not in by_name
    assert by_name["src.shapes.totalArea"].references == 2
    assert by_name["src.shapes.Circle"].references == 1
    assert all(r.chunk_id is None for r in records)
    # Only references to symbols defined in the repository are kept (no lib.es5 ones).
    assert {r.symbol for r in references} <= {r.symbol for r in records}


def test_collect_maps_definitions_and_references_to_chunks(tmp_path: Path) -> None:
    index = read_index(PYTHON_INDEX)
    source = SourceIndex("user-file", index, "")
    owner = assign_owners([source], set(index.paths), tmp_path)
    records, references = collect([source], owner, ChunkSpans(python_chunks()))
    assert {r.readable: r.chunk_id for r in records}["toy.greeter.Greeter.default"] == 7
    calls_of_shout = [
        (r.path, r.line, r.chunk_id) for r in references if r.symbol.endswith("shout().")
    ]
    assert calls_of_shout == [("toy/greeter.py", 1, 2), ("toy/greeter.py", 6, 3)]
