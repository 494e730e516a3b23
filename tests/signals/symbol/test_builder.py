from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.signal import IndexOptions
from engine.types import Query
from scip.reader import read_index
from signals.symbol.emitter import INDEX_FILE
from signals.symbol.search import SymbolSignal
from signals.symbol.table import TABLE_FILE, SymbolTable
from tests.signals.symbol.repos import (
    PYTHON_DEFINITIONS,
    PYTHON_FIXTURE,
    PYTHON_INDEX,
    TYPESCRIPT_FIXTURE,
    build,
    chunk,
    copy_python_toy,
    definition,
    python_chunks,
)


def test_the_builder_is_fast_and_named_symbol(tmp_path: Path) -> None:
    from signals.symbol.builder import SymbolBuilder

    builder = SymbolBuilder(IndexOptions(home=tmp_path))
    assert (builder.name, builder.slow) == ("symbol", False)


def test_a_user_scip_file_covers_its_files(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path)
    options = IndexOptions(home=tmp_path, scip_file=PYTHON_INDEX)
    report = build(tmp_path / "g1", root, python_chunks(root), PYTHON_DEFINITIONS, options)
    assert report.meta["sources"] == {"user-file": 3, "tree-sitter": 0}
    assert "3 documents" in report.meta["source_messages"]["user-file"]
    assert report.problems == []
    table = SymbolTable.open(tmp_path / "g1")
    try:
        assert table.sources() == {"user-file": 7}
        records = table.records(list(range(table.count)))
    finally:
        table.close()
    by_name = {r.readable: r for r in records.values()}
    # Module definitions (toy/__init__:) are files, not code, and are left out.
    assert sorted(by_name) == [
        "toy.greeter.Greeter",
        "toy.greeter.Greeter.__init__",
        "toy.greeter.Greeter.default",
        "toy.greeter.Greeter.greet",
        "toy.greeter.Greeter.name",
        "toy.greeter.greet",
        "toy.util.shout",
    ]
    greet = by_name["toy.greeter.greet"]
    assert (greet.path, greet.start_line, greet.end_line, greet.name_line) == (
        "toy/greeter.py",
        4,
        6,
        4,
    )
    assert (greet.chunk_id, greet.kind, greet.name, greet.source) == (
        3,
        "function",
        "greet",
        "user-file",
    )
    # References counted from the index: greet is called once, shout twice (import + call).
    assert greet.references == 1
    assert by_name["toy.util.shout"].references == 2
    assert by_name["toy.greeter.Greeter.name"].chunk_id == 5  # self.name = name, in __init__


def test_an_index_at_the_repository_root_is_used(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path, with_index=True)
    options = IndexOptions(home=tmp_path)
    report = build(tmp_path / "g1", root, python_chunks(root), PYTHON_DEFINITIONS, options)
    assert report.meta["sources"] == {"repo-index": 3, "tree-sitter": 0}


def test_the_user_file_comes_before_the_repository_index(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path, with_index=True)
    options = IndexOptions(home=tmp_path, scip_file=PYTHON_INDEX)
    report = build(tmp_path / "g1", root, python_chunks(root), PYTHON_DEFINITIONS, options)
    assert report.meta["sources"] == {"user-file": 3, "repo-index": 0, "tree-sitter": 0}


def test_without_a_scip_index_tree_sitter_symbols_are_emitted_and_read_back(
    tmp_path: Path,
) -> None:
    root = copy_python_toy(tmp_path)
    report = build(
        tmp_path / "g1", root, python_chunks(root), PYTHON_DEFINITIONS, IndexOptions(tmp_path)
    )
    assert report.meta["sources"] == {"tree-sitter": 2}
    assert report.meta["definitions"] == 6
    emitted = read_index(tmp_path / "g1" / INDEX_FILE)
    assert emitted.tool.name == "engine-tree-sitter"
    assert sorted(emitted.paths) == ["toy/greeter.py", "toy/util.py"]
    assert len(emitted.definitions) == 6
    table = SymbolTable.open(tmp_path / "g1")
    try:
        records = list(table.records(list(range(table.count))).values())
    finally:
        table.close()
    readable = {r.readable: (r.kind, r.chunk_id, r.start_line, r.end_line) for r in records}
    assert readable == {
        "toy.greeter.greet": ("function", 3, 4, 6),
        "toy.greeter.Greeter": ("class", 4, 9, 20),
        "toy.greeter.Greeter.__init__": ("method", 5, 12, 13),
        "toy.greeter.Greeter.greet": ("method", 6, 15, 16),
        "toy.greeter.Greeter.default": ("method", 7, 18, 20),
        "toy.util.shout": ("function", 8, 1, 3),
    }
    assert all(r.references == 0 and r.source == "tree-sitter" for r in records)


def test_tree_sitter_covers_files_the_real_index_does_not(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path)
    (root / "extra.py").write_text("def helper_only_here():\n    return 1\n")
    chunks = [
        *python_chunks(root),
        chunk(9, root, "extra.py", 1, 2, "function", "helper_only_here"),
    ]
    definitions = [
        *PYTHON_DEFINITIONS,
        definition("extra.py", "function", "helper_only_here", 1, 4, 1, 2),
    ]
    options = IndexOptions(home=tmp_path, scip_file=PYTHON_INDEX)
    report = build(tmp_path / "g1", root, chunks, definitions, options)
    assert report.meta["sources"] == {"user-file": 3, "tree-sitter": 1}
    signal = SymbolSignal.open(tmp_path / "g1")
    try:
        hits = signal.search(Query("helper_only_here"), 5)
    finally:
        signal.close()
    assert [(h.chunk_id, h.symbol) for h in hits[:1]] == [(9, "extra.helper_only_here")]


def test_a_typescript_index_reads_through_the_builder(tmp_path: Path) -> None:
    root = TYPESCRIPT_FIXTURE
    chunks = [
        chunk(1, root, "src/shapes.ts", 1, 5, "interface", "Shape"),
        chunk(2, root, "src/shapes.ts", 6, 13, "class", "Circle"),
        chunk(3, root, "src/shapes.ts", 15, 17, "function", "totalArea"),
        chunk(4, root, "src/index.ts", 3, 5, "function", "parseRadii"),
        chunk(5, root, "src/index.ts", 7, 10, "function", "report"),
    ]
    options = IndexOptions(home=tmp_path, scip_file=root / "index.scip")
    report = build(tmp_path / "g1", root, chunks, [], options)
    assert report.meta["sources"]["user-file"] == 2
    signal = SymbolSignal.open(tmp_path / "g1")
    try:
        hits = signal.search(Query("totalArea"), 3)
        radii = signal.search(Query("parse radii"), 3)
    finally:
        signal.close()
    assert (hits[0].chunk_id, hits[0].symbol) == (3, "src.shapes.totalArea")
    assert (radii[0].chunk_id, radii[0].symbol) == (4, "src.index.parseRadii")


def test_a_definition_in_a_file_without_chunks_is_a_chunkless_hit(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path)
    chunks = [c for c in python_chunks(root) if c.path != "toy/util.py"]
    report = build(tmp_path / "g1", root, chunks, PYTHON_DEFINITIONS, IndexOptions(tmp_path))
    assert report.meta["definitions"] == 6
    signal = SymbolSignal.open(tmp_path / "g1")
    try:
        hits = signal.search(Query("shout"), 5)
    finally:
        signal.close()
    assert hits[0].chunk_id is None
    assert hits[0].symbol == "toy.util.shout"
    assert hits[0].location is not None
    assert (hits[0].location.path, hits[0].location.start_line, hits[0].location.end_line) == (
        "toy/util.py",
        1,
        3,
    )


def test_a_stale_document_for_a_missing_file_is_ignored(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path)
    (root / "toy" / "util.py").unlink()
    chunks = [c for c in python_chunks() if c.path != "toy/util.py"]
    definitions = [d for d in PYTHON_DEFINITIONS if d.path != "toy/util.py"]
    options = IndexOptions(home=tmp_path, scip_file=PYTHON_INDEX)
    report = build(tmp_path / "g1", root, chunks, definitions, options)
    assert report.meta["sources"]["user-file"] == 2
    table = SymbolTable.open(tmp_path / "g1")
    try:
        paths = {r.path for r in table.records(list(range(table.count))).values()}
    finally:
        table.close()
    assert paths == {"toy/greeter.py"}


def test_an_empty_repository_builds_an_empty_table(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    report = build(tmp_path / "g1", root, [], [], IndexOptions(tmp_path))
    assert report.meta["definitions"] == 0
    assert report.problems == []
    assert (tmp_path / "g1" / TABLE_FILE).is_file()
    signal = SymbolSignal.open(tmp_path / "g1")
    try:
        assert signal.search(Query("anything"), 5) == []
    finally:
        signal.close()


def test_fixture_root_is_untouched(tmp_path: Path) -> None:
    before = sorted(p.name for p in PYTHON_FIXTURE.iterdir())
    options = IndexOptions(home=tmp_path, scip_file=PYTHON_INDEX)
    build(tmp_path / "g1", PYTHON_FIXTURE, python_chunks(), PYTHON_DEFINITIONS, options)
    assert sorted(p.name for p in PYTHON_FIXTURE.iterdir()) == before


TOOLS_BIN = Path(__file__).parents[3] / ".tools" / "node_modules" / ".bin"


def needs(indexer: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        not (TOOLS_BIN / indexer).exists(), reason=f"{indexer} is not installed in .tools"
    )


@pytest.mark.slow
@needs("scip-python")
def test_real_scip_python_through_the_builder(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path)
    options = IndexOptions(tmp_path, scip_indexer="auto", scip_timeout_s=300)
    report = build(
        tmp_path / "g1", root, python_chunks(root), PYTHON_DEFINITIONS, options, bin_dir=TOOLS_BIN
    )
    assert report.problems == []
    assert report.meta["sources"] == {"scip-python": 3, "tree-sitter": 0}
    assert report.meta["references"] > 0
    signal = SymbolSignal.open(tmp_path / "g1")
    try:
        hits = signal.search(Query("Greeter.default"), 1)
    finally:
        signal.close()
    assert (hits[0].chunk_id, hits[0].symbol) == (7, "toy.greeter.Greeter.default")


@pytest.mark.slow
@needs("scip-typescript")
def test_real_scip_typescript_through_the_builder(tmp_path: Path) -> None:
    root = tmp_path / "ts"
    shutil.copytree(TYPESCRIPT_FIXTURE, root)
    (root / "index.scip").unlink()
    chunks = [chunk(1, root, "src/shapes.ts", 15, 17, "function", "totalArea")]
    options = IndexOptions(tmp_path, scip_indexer="auto", scip_timeout_s=300)
    report = build(tmp_path / "g1", root, chunks, [], options, bin_dir=TOOLS_BIN)
    assert report.problems == []
    assert report.meta["sources"]["scip-typescript"] == 2
    signal = SymbolSignal.open(tmp_path / "g1")
    try:
        hits = signal.search(Query("totalArea"), 1)
    finally:
        signal.close()
    assert (hits[0].chunk_id, hits[0].symbol) == (1, "src.shapes.totalArea")
