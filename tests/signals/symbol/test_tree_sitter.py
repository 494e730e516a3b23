"""The engine's own index: complete in every generation, re-emitted only where files changed."""

from __future__ import annotations

from pathlib import Path

from engine.signal import IndexOptions
from scip.reader import read_index
from signals.symbol.emitter import INDEX_FILE
from signals.symbol.table import SymbolTable
from tests.signals.symbol.repos import (
    PYTHON_DEFINITIONS,
    build,
    chunk,
    copy_python_toy,
    definition,
    python_chunks,
)


def readable_names(directory: Path) -> dict[str, int | None]:
    table = SymbolTable.open(directory)
    try:
        return {r.readable: r.chunk_id for r in table.records(list(range(table.count))).values()}
    finally:
        table.close()


def test_an_update_re_emits_only_changed_files_and_keeps_the_index_complete(
    tmp_path: Path,
) -> None:
    root = copy_python_toy(tmp_path)
    options = IndexOptions(tmp_path)
    chunks = python_chunks(root)
    first = build(tmp_path / "g1", root, chunks, PYTHON_DEFINITIONS, options)
    assert "kept" not in first.meta["source_messages"]["tree-sitter"]

    # util.py changes: shout is renamed, and its chunk gets a new id.
    (root / "toy" / "util.py").write_text("def yell(text):\n    return text.upper()\n")
    chunks2 = [c for c in chunks if c.path != "toy/util.py"]
    chunks2.append(chunk(20, root, "toy/util.py", 1, 2, "function", "yell"))
    definitions2 = [d for d in PYTHON_DEFINITIONS if d.path != "toy/util.py"]
    definitions2.append(definition("toy/util.py", "function", "yell", 1, 4, 1, 2))
    second = build(
        tmp_path / "g2",
        root,
        chunks2,
        definitions2,
        options,
        previous=first,
        previous_dir=tmp_path / "g1",
        changed=["toy/util.py"],
    )
    message = second.meta["source_messages"]["tree-sitter"]
    assert message == (
        "emitted 1 definitions in 1 files, kept 5 in 1 unchanged files; 2 files in all"
    )
    assert second.meta["sources"] == {"tree-sitter": 2}
    names = readable_names(tmp_path / "g2")
    assert names["toy.util.yell"] == 20
    assert "toy.util.shout" not in names
    assert names["toy.greeter.Greeter.greet"] == 6
    # The new generation's index.scip still describes every file, and no scratch file is left.
    index = read_index(tmp_path / "g2" / INDEX_FILE)
    assert sorted(index.paths) == ["toy/greeter.py", "toy/util.py"]
    assert sorted(d.name for d in index.definitions) == [
        "Greeter",
        "__init__",
        "default",
        "greet",
        "greet",
        "yell",
    ]
    assert sorted(p.name for p in (tmp_path / "g2").iterdir()) == [INDEX_FILE, "symbols.sqlite"]


def test_an_update_gives_the_same_table_as_a_full_build(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path)
    options = IndexOptions(tmp_path)
    chunks = python_chunks(root)
    first = build(tmp_path / "g1", root, chunks, PYTHON_DEFINITIONS, options)
    build(
        tmp_path / "g2",
        root,
        chunks,
        PYTHON_DEFINITIONS,
        options,
        previous=first,
        previous_dir=tmp_path / "g1",
        changed=["toy/greeter.py"],
    )
    full = build(tmp_path / "full", root, chunks, PYTHON_DEFINITIONS, options)
    assert full.meta["definitions"] == 6
    table_g2, table_full = SymbolTable.open(tmp_path / "g2"), SymbolTable.open(tmp_path / "full")
    try:
        ids = list(range(table_full.count))
        assert table_g2.records(ids) == table_full.records(ids)
        assert table_g2.prior == table_full.prior
        assert table_g2.name_weight == table_full.name_weight
    finally:
        table_g2.close()
        table_full.close()


def test_a_damaged_previous_index_falls_back_to_emitting_everything(tmp_path: Path) -> None:
    root = copy_python_toy(tmp_path)
    options = IndexOptions(tmp_path)
    chunks = python_chunks(root)
    first = build(tmp_path / "g1", root, chunks, PYTHON_DEFINITIONS, options)
    (tmp_path / "g1" / INDEX_FILE).write_bytes(b"\xff")
    second = build(
        tmp_path / "g2",
        root,
        chunks,
        PYTHON_DEFINITIONS,
        options,
        previous=first,
        previous_dir=tmp_path / "g1",
        changed=["toy/util.py"],
    )
    assert second.problems == []
    assert second.meta["source_messages"]["tree-sitter"] == (
        "emitted 6 definitions in 2 files; 2 files in all"
    )
    assert len(readable_names(tmp_path / "g2")) == 6
