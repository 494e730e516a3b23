"""engine/index/store.py: batch inserts number chunks exactly as AUTOINCREMENT would."""

from __future__ import annotations

from pathlib import Path

from engine.index.store import (
    READ_CACHE_KIB,
    ChunkStore,
    FileRecord,
    FileRows,
    chunk_row,
    definition_row,
)
from engine.types import ChunkDraft, Definition


def file_rows(path: str, chunk_count: int) -> FileRows:
    drafts = [
        ChunkDraft(path, "python", "function", f"f{i}", f"f{i}", "", i + 1, i + 1, f"def f{i}(): 0")
        for i in range(chunk_count)
    ]
    definitions = [
        Definition(path, "python", "function", f"f{i}", f"f{i}", i + 1, 4, 6, i + 1, i + 1)
        for i in range(chunk_count)
    ]
    return FileRows(
        FileRecord(path, f"hash-{path}", "python", 10, 1),
        [chunk_row(d) for d in drafts],
        [definition_row(d) for d in definitions],
    )


def test_add_files_returns_the_stored_chunks(tmp_path: Path) -> None:
    store = ChunkStore.open_writable(tmp_path / "chunks.sqlite")
    added = store.add_files([file_rows("a.py", 3), file_rows("b.py", 0), file_rows("c.py", 2)])
    assert [c.id for c in added] == [1, 2, 3, 4, 5]
    assert [c.path for c in added] == ["a.py"] * 3 + ["c.py"] * 2
    assert list(store.iter_chunks()) == added
    assert sorted(store.files()) == ["a.py", "b.py", "c.py"]
    assert [(d.path, d.name) for d in store.definitions()] == [
        ("a.py", "f0"),
        ("a.py", "f1"),
        ("a.py", "f2"),
        ("c.py", "f0"),
        ("c.py", "f1"),
    ]


def test_ids_are_never_reused_after_a_removal(tmp_path: Path) -> None:
    path = tmp_path / "chunks.sqlite"
    store = ChunkStore.open_writable(path)
    store.add_files([file_rows("a.py", 2), file_rows("b.py", 2)])
    assert store.remove_files(["b.py"]) == [3, 4]
    assert [c.id for c in store.add_files([file_rows("b.py", 1)])] == [5]
    store.close()
    # A store copied into the next generation goes on from the same sequence.
    store = ChunkStore.open_writable(path)
    store.remove_files(["b.py"])
    assert [c.id for c in store.add_files([file_rows("d.py", 1)])] == [6]
    store.close()


def test_a_reader_keeps_a_small_page_cache(tmp_path: Path) -> None:
    # Immutable and in the OS's page cache: SQLite's default 2,000 KiB per reader was a
    # second copy of every page read (issue 16: a shard actor holds many readers).
    writer = ChunkStore.open_writable(tmp_path / "chunks.sqlite")
    writer.add_files([file_rows("a.py", 3)])
    writer.close()
    store = ChunkStore.open_readonly(tmp_path / "chunks.sqlite")
    assert store._conn.execute("PRAGMA cache_size").fetchone() == (-READ_CACHE_KIB,)
    assert [c.path for c in store.iter_chunks()] == ["a.py"] * 3
    store.close()
