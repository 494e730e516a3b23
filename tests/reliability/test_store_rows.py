"""Rows of a published chunk store edited or deleted by hand (issue 15).

``verify`` sees an edited row by comparing it with the file (test_racy_edits.py). Here:
``status`` counts what the store really holds and calls it damaged, and a plain ``reindex``
finds the same change (the store's stamp in the manifest, or its counts) and rebuilds from
the files, which gives exactly what a clean build gives.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from engine.index.home import Home
from engine.index.manifest import read_manifest, write_manifest
from engine.index.store import STORE_FILE
from tests.reliability.conftest import cli, index, stored_chunks
from tests.reliability.test_corrupt_index import answers, published


def edit(home: Home, sql: str) -> None:
    """Run ``sql`` on the published store, as a user with the sqlite3 shell would."""
    conn = sqlite3.connect(published(home) / STORE_FILE)
    try:
        with conn:
            conn.execute(sql)
    finally:
        conn.close()


def edit_keeping_mtime(home: Home, sql: str) -> None:
    path = published(home) / STORE_FILE
    before = path.stat()
    edit(home, sql)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def forget_the_stamp(home: Home) -> None:
    """The manifest of an index from before the store stamp."""
    generation = published(home)
    write_manifest(generation, dataclasses.replace(read_manifest(generation), store_stamp=""))


def delete_rows_without_a_stamp(home: Home) -> None:
    forget_the_stamp(home)  # then only the counts can tell
    edit(home, "DELETE FROM chunks WHERE path = 'toy/retry.py'")


EDITS: dict[str, Callable[[Home], None]] = {
    "chunks-deleted": lambda home: edit(home, "DELETE FROM chunks WHERE path = 'toy/retry.py'"),
    "one-chunk-deleted": lambda home: edit(
        home, "DELETE FROM chunks WHERE id = (SELECT max(id) FROM chunks)"
    ),
    "text-edited": lambda home: edit(
        home, "UPDATE chunks SET text = replace(text, 'backoff_delay', 'jitter_window')"
    ),
    "text-edited-mtime-kept": lambda home: edit_keeping_mtime(
        home, "UPDATE chunks SET text = replace(text, 'backoff_delay', 'jitter_window')"
    ),
    "file-row-deleted": lambda home: edit(home, "DELETE FROM files WHERE path = 'toy/retry.py'"),
    "lines-edited": lambda home: edit(home, "UPDATE chunks SET start_line = start_line + 1"),
    "rows-deleted-before-the-stamp": lambda home: delete_rows_without_a_stamp(home),
}


def store_counts(home: Home) -> tuple[int, int]:
    conn = sqlite3.connect(published(home) / STORE_FILE)
    try:
        files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    finally:
        conn.close()
    return int(files), int(chunks)


@pytest.fixture
def built(home: Home, repo: Path) -> dict[str, Any]:
    code, _ = cli("index", str(repo), "--name", "toy")
    assert code == 0
    return answers()


@pytest.mark.parametrize("change", list(EDITS))
def test_status_counts_what_is_there_and_a_plain_reindex_repairs_the_store(
    tmp_path: Path, home: Home, repo: Path, built: dict[str, Any], change: str
) -> None:
    clean = stored_chunks(home)
    EDITS[change](home)

    code, status = cli("status", "toy")
    assert code == 0, status
    assert (status["files"], status["chunks"]) == store_counts(home), status
    assert status["storeDamaged"], status
    assert status["damaged"] == [f"the chunk store: {status['storeDamaged']}"], status
    assert status["fix"] == "engine reindex toy"
    text = CliRunner().invoke(main, ["status", "toy"]).output
    assert f"the chunk store is damaged: {status['storeDamaged']} — run engine reindex toy" in text
    assert f"{status['files']} files, {status['chunks']} chunks" in text, text

    code, report = cli("reindex", "toy")
    assert code == 0, report
    assert report["fullRebuild"] is True, report
    assert [p for p in report["problems"] if p.startswith(f"{STORE_FILE}: ")], report
    assert stored_chunks(home) == clean
    assert answers() == built
    code, status = cli("status", "toy")
    assert "damaged" not in status and "storeDamaged" not in status, status
    code, data = cli("verify", "toy")
    assert code == 0 and data["stale"] == 0, data
    code, report = cli("reindex", "toy")
    assert code == 0 and report["upToDate"] is True, report


def test_an_untouched_store_is_not_rebuilt(home: Home, indexed: Path) -> None:
    # Publishing links the store into the slow phase's generation: the stamp still holds.
    report = index(home, indexed)
    assert report.up_to_date and not report.full_rebuild
    code, status = cli("status", "toy")
    assert code == 0 and "damaged" not in status, status
