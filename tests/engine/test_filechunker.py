"""engine/filechunker.py: chunks and signal analyses come back alike from worker processes
and in-process."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

import engine.filechunker
from engine.filechunker import ChunkedFile, FileTask, chunk_files
from engine.store import chunk_row
from engine.types import ChunkDraft


def names(drafts: Sequence[ChunkDraft]) -> list[str]:
    """A ChunkAnalyzer: module-level, so that worker processes can import it."""
    return [f"{d.path}:{d.name}" for d in drafts]


def failing(drafts: Sequence[ChunkDraft]) -> list[str]:
    raise ValueError("analyzer bug")


def tasks(root: Path, count: int) -> list[FileTask]:
    found = []
    for i in range(count):
        path = root / f"m{i}.py"
        path.write_text(f"def first{i}():\n    return 1\n\n\ndef second{i}():\n    return 2\n")
        found.append(FileTask(f"m{i}.py", str(path), ""))
    return found


@pytest.mark.parametrize("workers", [1, 2])
def test_chunks_come_with_their_analyses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(engine.filechunker, "PARALLEL_MIN_FILES", 1)
    analyzers = {"names": names, "broken": failing}
    results = list(
        chunk_files(tasks(tmp_path, 3), max_file_bytes=10_000, workers=workers, analyzers=analyzers)
    )
    assert [r.path for r in results] == ["m0.py", "m1.py", "m2.py"]
    for i, result in enumerate(results):
        assert result.status == "chunked"
        assert [row[3] for row in result.chunks] == [f"first{i}", f"second{i}"]
        assert [row[3] for row in result.definitions] == [f"first{i}", f"second{i}"]
        # A failing analyzer leaves its signal out; the others' results are kept.
        assert dict(result.analyses) == {"names": [f"m{i}.py:first{i}", f"m{i}.py:second{i}"]}


def test_rows_are_the_drafts_fields_in_order() -> None:
    draft = ChunkDraft("a.py", "python", "class", "A", "A", "", 1, 3, "class A:\n  x=1", "class A:")
    assert chunk_row(draft) == (
        "a.py",
        "python",
        "class",
        "A",
        "A",
        "",
        1,
        3,
        "class A:\n  x=1",
        "class A:",
        "",
    )
    assert ChunkDraft(*chunk_row(draft)) == draft  # type: ignore[arg-type]


def test_a_refused_file_has_no_chunks(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"\x00\x01binary")
    [result] = chunk_files(
        [FileTask("blob.py", str(tmp_path / "blob.py"), "")], max_file_bytes=10_000
    )
    assert result == ChunkedFile("blob.py", "binary")
