from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.index.store import ChunkStore, FileRecord, FileRows
from engine.indexing.freshness import RACY_WINDOW_NS, DiskFiles, Staleness, staleness
from engine.indexing.source_file import hash_bytes
from engine.search.freshness import FileNow

MAX_FILE_BYTES = 1_000_000


def _write(root: Path, path: str, text: str) -> Path:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    # An mtime far in the past, so that no file here was modified "just before the scan".
    os.utime(file, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    return file


def _record(root: Path, path: str) -> FileRecord:
    stat = (root / path).stat()
    return FileRecord(path, "recorded-hash", "python", stat.st_size, stat.st_mtime_ns)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    _write(repo, "pkg/a.py", "def a():\n    return 1\n")
    _write(repo, "pkg/b.py", "def b():\n    return 2\n")
    return repo


def _indexed(root: Path, *paths: str) -> dict[str, FileRecord]:
    return {p: _record(root, p) for p in paths}


def test_a_tree_as_it_was_indexed_is_fresh(root: Path) -> None:
    indexed = _indexed(root, "pkg/a.py", "pkg/b.py")
    result = staleness(root, indexed, {}, max_file_bytes=MAX_FILE_BYTES)
    assert result == Staleness(added=0, modified=0, removed=0)
    assert result.changed == 0


def test_added_modified_and_removed_files_are_counted_apart(root: Path) -> None:
    indexed = _indexed(root, "pkg/a.py", "pkg/b.py")
    _write(root, "pkg/c.py", "def c():\n    return 3\n")  # added
    _write(root, "pkg/a.py", "def a():\n    return 10\n")  # modified: one byte longer
    (root / "pkg" / "b.py").unlink()  # removed
    result = staleness(root, indexed, {}, max_file_bytes=MAX_FILE_BYTES)
    assert result == Staleness(added=1, modified=1, removed=1)
    assert result.changed == 3


def test_a_touched_file_counts_as_modified_by_its_mtime_alone(root: Path) -> None:
    indexed = _indexed(root, "pkg/a.py", "pkg/b.py")
    stat = (root / "pkg" / "a.py").stat()
    os.utime(root / "pkg" / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    result = staleness(root, indexed, {}, max_file_bytes=MAX_FILE_BYTES)
    assert result == Staleness(added=0, modified=1, removed=0)


def test_a_new_file_of_no_known_language_is_not_counted(root: Path) -> None:
    indexed = _indexed(root, "pkg/a.py", "pkg/b.py")
    _write(root, "notes.unknownext", "nothing to index here\n")
    result = staleness(root, indexed, {}, max_file_bytes=MAX_FILE_BYTES)
    assert result.added == 0
    _write(root, "pkg/d.py", "x = 1\n")
    assert staleness(root, indexed, {}, max_file_bytes=MAX_FILE_BYTES).added == 1


def test_an_ignored_file_is_not_counted(root: Path) -> None:
    indexed = _indexed(root, "pkg/a.py", "pkg/b.py")
    _write(root, ".engineignore", "generated/\n")
    _write(root, "generated/out.py", "x = 1\n")
    result = staleness(root, indexed, {}, max_file_bytes=MAX_FILE_BYTES)
    assert result.added == 0


def test_a_refused_file_counts_only_once_its_stat_changes(root: Path) -> None:
    indexed = _indexed(root, "pkg/a.py")
    stat = (root / "pkg" / "b.py").stat()
    refused = {"pkg/b.py": ("unreadable", stat.st_size, stat.st_mtime_ns)}
    unchanged = staleness(root, indexed, refused, max_file_bytes=MAX_FILE_BYTES)
    assert unchanged == Staleness(added=0, modified=0, removed=0)
    # It may be indexable now: a modification, not an addition.
    _write(root, "pkg/b.py", "def b():\n    return 20\n")
    changed = staleness(root, indexed, refused, max_file_bytes=MAX_FILE_BYTES)
    assert changed == Staleness(added=0, modified=1, removed=0)


def test_a_file_grown_past_the_size_limit_counts_as_removed(root: Path) -> None:
    indexed = _indexed(root, "pkg/a.py", "pkg/b.py")
    _write(root, "pkg/a.py", "x = 1\n" * 100)
    result = staleness(root, indexed, {}, max_file_bytes=100)
    # The walk skips it, so the index holds a file the tree no longer offers.
    assert result == Staleness(added=0, modified=0, removed=1)


# --- DiskFiles: what one indexed file holds now ------------------------------------------------

OLD_NS = 1_000_000_000_000_000_000  # _write's mtime, far before any scan


def _disk_files(root: Path, tmp_path: Path, scanned_at_ns: int, *paths: str) -> DiskFiles:
    store = ChunkStore.open_writable(tmp_path / "chunks.sqlite")
    records = []
    for path in paths:
        data = (root / path).read_bytes()
        stat = (root / path).stat()
        records.append(
            FileRows(
                FileRecord(path, hash_bytes(data), "python", len(data), stat.st_mtime_ns), [], []
            )
        )
    store.add_files(records)
    return DiskFiles(root, store, scanned_at_ns)


def test_disk_files_trust_a_stat_that_matches_and_is_not_racy(root: Path, tmp_path: Path) -> None:
    files = _disk_files(root, tmp_path, OLD_NS + 10 * RACY_WINDOW_NS, "pkg/a.py")
    # Same size, mtime put back: the stat vouches, so the file is not read (git's rule).
    _write(root, "pkg/a.py", "def a():\n    return 9\n")
    assert files.now("pkg/a.py") == FileNow("unchanged")


def test_disk_files_hash_a_racy_file_and_see_the_edit(root: Path, tmp_path: Path) -> None:
    files = _disk_files(root, tmp_path, OLD_NS + 1, "pkg/a.py")  # scanned just after the edit
    _write(root, "pkg/a.py", "def a():\n    return 9\n")
    assert files.now("pkg/a.py") == FileNow("changed", "def a():\n    return 9\n")


def test_disk_files_touched_but_same_content_is_unchanged(root: Path, tmp_path: Path) -> None:
    files = _disk_files(root, tmp_path, OLD_NS + 10 * RACY_WINDOW_NS, "pkg/a.py")
    os.utime(root / "pkg" / "a.py")  # now: the stat differs, the hash does not
    assert files.now("pkg/a.py") == FileNow("unchanged")


def test_disk_files_normalise_line_endings_of_a_changed_file(root: Path, tmp_path: Path) -> None:
    files = _disk_files(root, tmp_path, OLD_NS + 10 * RACY_WINDOW_NS, "pkg/a.py")
    (root / "pkg" / "a.py").write_bytes(b"# new\r\ndef a():\r\n    return 1\r\n")
    assert files.now("pkg/a.py") == FileNow("changed", "# new\ndef a():\n    return 1\n")


def test_disk_files_a_deleted_or_replaced_file_is_gone(root: Path, tmp_path: Path) -> None:
    files = _disk_files(root, tmp_path, OLD_NS + 10 * RACY_WINDOW_NS, "pkg/a.py", "pkg/b.py")
    (root / "pkg" / "a.py").unlink()
    assert files.now("pkg/a.py") == FileNow("gone")
    (root / "pkg" / "b.py").unlink()
    (root / "pkg" / "b.py").mkdir()
    assert files.now("pkg/b.py") == FileNow("gone")
    assert files.now("pkg/never-indexed.py") == FileNow("unchanged")  # nothing to check
