"""A full disk (or another refused write) in the middle of an update.

The update stops with exit code 1 and a JSON error saying what happened and what to do (no
traceback); the previously published generation stays published and answers as before; no
unpublished folder is left behind; once the disk has room, the next run converges.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.index.generations import current_generation, generation_number
from engine.index.home import Home
from engine.index.write_failures import failure_message, is_disk_full
from tests.reliability.conftest import cli, search, stored_chunks, write

QUERIES = ("greet", "backoff delay", "brand new function")


def disk_full(path: str = "") -> OSError:
    return OSError(errno.ENOSPC, "No space left on device", path or None)


def sqlite_full() -> sqlite3.OperationalError:
    """A real SQLITE_FULL error, as SQLite raises it when the disk fills up."""
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA max_page_count=2")
    conn.execute("CREATE TABLE t (x)")
    try:
        for _ in range(10):
            conn.execute("INSERT INTO t VALUES (randomblob(10000))")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError("SQLite did not fill up")


def fail_on_call(number: int, error: Callable[[], BaseException], real: Any) -> Any:
    """A stand-in for ``real`` whose ``number``-th call (1-based) raises ``error()``."""
    calls = [0]

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == number:
            raise error()
        return real(*args, **kwargs)

    return stand_in


def snapshot(home: Home) -> dict[str, Any]:
    return {text: search(home, text) for text in QUERIES}


def change_repo(repo: Path) -> None:
    write(repo, "toy/fresh.py", "def brand_new_function():\n    return 'new'\n")
    write(repo, "toy/retry.py", "def backoff_delay(attempt):\n    return attempt * 2\n")
    (repo / "toy" / "greeter.py").unlink()


def leftovers(home: Home) -> list[str]:
    """Generation folders newer than the published one (an update's unpublished work)."""
    current = current_generation(home.repo_dir("toy"))
    assert current is not None
    number = generation_number(current.name)
    return [
        p.name for p in home.repo_dir("toy").glob("gen-*") if generation_number(p.name) > number
    ]


def patch_store_insert(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.index.store import ChunkStore

    stand_in = fail_on_call(1, sqlite_full, ChunkStore.add_files)
    monkeypatch.setattr(ChunkStore, "add_files", stand_in)


def patch_store_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    monkeypatch.setattr(
        "engine.indexing.indexer.shutil.copyfile", fail_on_call(1, disk_full, shutil.copyfile)
    )


def patch_lexical(monkeypatch: pytest.MonkeyPatch) -> None:
    from signals.lexical.builder import LexicalBuilder

    monkeypatch.setattr(LexicalBuilder, "build", fail_on_call(1, disk_full, LexicalBuilder.build))


def patch_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.index.generations import write_json_atomic

    monkeypatch.setattr(
        "engine.index.manifest.write_json_atomic",
        fail_on_call(1, lambda: disk_full("manifest.json"), write_json_atomic),
    )


def patch_publish(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.index.generations import publish

    monkeypatch.setattr("engine.indexing.indexer.publish", fail_on_call(1, disk_full, publish))


def patch_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    from signals.vector.builder import VectorBuilder

    monkeypatch.setattr(VectorBuilder, "build", fail_on_call(1, sqlite_full, VectorBuilder.build))


# Faults before the first publish keep the previous generation; a fault in the slow (vector)
# phase comes after the fast signals were published, which stays a complete generation.
BEFORE_PUBLISH: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "store-insert": patch_store_insert,
    "store-copy": patch_store_copy,
    "lexical-build": patch_lexical,
    "manifest": patch_manifest,
    "publish": patch_publish,
}


@pytest.mark.parametrize("fault", list(BEFORE_PUBLISH))
def test_disk_full_before_publish_keeps_the_previous_generation(
    home: Home, indexed: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    before = snapshot(home)
    chunks_before = stored_chunks(home)
    published = current_generation(home.repo_dir("toy"))
    change_repo(indexed)
    with monkeypatch.context() as patch:
        BEFORE_PUBLISH[fault](patch)
        code, data = cli("reindex", "toy")
    assert code == 1
    assert data["error"].startswith("indexing toy stopped: the disk is full")
    assert "searches keep using the last complete index" in data["error"]
    assert "free some space and run the command again" in data["error"]
    assert current_generation(home.repo_dir("toy")) == published
    assert leftovers(home) == []
    assert snapshot(home) == before
    assert stored_chunks(home) == chunks_before

    code, report = cli("reindex", "toy")
    assert code == 0, report
    assert search(home, "brand new function")[0][0][0] == "toy/fresh.py"


def test_disk_full_in_the_slow_phase_keeps_the_fast_generation(
    home: Home, indexed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change_repo(indexed)
    with monkeypatch.context() as patch:
        patch_vector(patch)
        code, data = cli("reindex", "toy")
    assert code == 1
    assert "the disk is full" in data["error"]
    assert leftovers(home) == []
    # The fast signals were published whole; the vector signal still answers (stale).
    results, warnings = search(home, "brand new function")
    assert warnings == []
    assert results[0][0] == "toy/fresh.py"
    code, status = cli("status", "toy")
    assert code == 0
    vector = status["signals"]["vector"]
    assert (vector["ready"], vector["synced"], vector["message"]) == (True, False, "updating")

    code, report = cli("reindex", "toy")
    assert code == 0, report
    assert report["signals"]["vector"]["synced"] is True


def test_first_index_on_a_full_disk_leaves_nothing_half_built(
    home: Home, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch_store_insert(patch)
        code, data = cli("index", str(repo), "--name", "toy")
    assert code == 1
    assert "the disk is full" in data["error"]
    code, data = cli("query", "toy", "greet")
    assert code == 1
    assert "no finished index yet" in data["error"]
    assert list(home.repo_dir("toy").glob("gen-*")) == []
    code, _ = cli("index", str(repo), "--name", "toy")
    assert code == 0
    assert search(home, "greet")[0][0][0] == "toy/greeter.py"


def test_read_only_home_is_a_clear_error(
    home: Home, indexed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.index.generations import next_generation

    def denied() -> OSError:
        return PermissionError(errno.EACCES, "Permission denied", str(home.repo_dir("toy")))

    monkeypatch.setattr(
        "engine.indexing.indexer.next_generation", fail_on_call(1, denied, next_generation)
    )
    change_repo(indexed)
    code, data = cli("reindex", "toy")
    assert code == 1
    assert data["error"] == (
        f"indexing toy failed: Permission denied ({home.repo_dir('toy')}) — searches keep "
        "using the last complete index; fix that and run the command again"
    )


def test_disk_full_is_recognised_from_the_os_and_from_sqlite() -> None:
    assert is_disk_full(disk_full())
    assert is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert is_disk_full(sqlite_full())
    assert not is_disk_full(OSError(errno.EIO, "Input/output error"))
    assert not is_disk_full(sqlite3.OperationalError("no such table: t"))
    assert not is_disk_full(ValueError("No space left on device"))
    assert failure_message("toy", sqlite_full()).startswith("indexing toy stopped: the disk")


def test_faiss_write_failure_stops_the_update_and_keeps_the_vector_signal(
    home: Home, indexed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAISS reports a full disk as a RuntimeError; it once published the vector signal off
    and exited 0 (issue 15, defect 3)."""
    import faiss

    change_repo(indexed)

    def full_disk_write(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "Error in faiss::FileIOWriter::operator()(const void*, size_t, size_t) at "
            "impl/io.cpp:103: write error in vectors.faiss: 0 != 4096 (No space left on device)"
        )

    with monkeypatch.context() as patch:
        patch.setattr(faiss, "write_index", full_disk_write)
        code, data = cli("reindex", "toy")
    assert code == 1, data
    assert "the disk is full" in data["error"]
    assert leftovers(home) == []
    code, status = cli("status", "toy")
    assert code == 0
    assert status["signals"]["vector"]["ready"] is True
    code, report = cli("reindex", "toy")
    assert code == 0, report
    assert report["signals"]["vector"]["ready"] is True
    assert report["signals"]["vector"]["synced"] is True


def test_any_refused_write_in_a_signal_stops_the_update() -> None:
    from engine.index.write_failures import is_write_refused

    assert is_write_refused(OSError(errno.EROFS, "Read-only file system"))
    assert is_write_refused(OSError(errno.EIO, "Input/output error"))
    assert is_write_refused(sqlite_full())
    assert not is_write_refused(OSError(errno.ENOENT, "No such file or directory"))
    assert not is_write_refused(ValueError("a bug in a builder"))
