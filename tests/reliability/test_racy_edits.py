"""An edit that keeps a file's size and mtime (issue 15, defect 4).

Size and mtime prove nothing for a file modified shortly before the scan that recorded them
(git's racy-timestamp rule): such files are hashed by ``reindex`` and ``status``. ``verify``,
which compares content, advises the command that repairs whatever it finds.
"""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from cli.main import main
from engine.index.home import Home
from engine.indexing.freshness import RACY_WINDOW_NS, is_racy
from tests.reliability.conftest import cli, index, search, stored_chunks


def edit_keeping_stat(path: Path, old: str, new: str) -> None:
    assert len(old) == len(new)
    before = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as ``touch -r`` does
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_an_edit_keeping_size_and_mtime_is_seen(home: Home, indexed: Path) -> None:
    edit_keeping_stat(indexed / "toy" / "retry.py", "backoff_delay", "jitter_window")
    code, status = cli("status", "toy")
    assert code == 0, status
    assert status["changedSinceBuild"]["modified"] == 1, status
    report = index(home, indexed)
    assert not report.up_to_date
    assert report.files_changed == 1
    assert search(home, "jitter_window")[0][0][0] == "toy/retry.py"
    assert all("backoff_delay" not in text for *_, text in stored_chunks(home))


def test_a_racy_but_unchanged_file_does_not_make_a_new_generation(
    home: Home, indexed: Path
) -> None:
    assert index(home, indexed).up_to_date
    code, status = cli("status", "toy")
    assert code == 0, status
    assert status["changedSinceBuild"]["total"] == 0, status


def test_the_racy_rule() -> None:
    scanned = 10 * RACY_WINDOW_NS
    assert is_racy(scanned, scanned)
    assert is_racy(scanned - RACY_WINDOW_NS + 1, scanned)
    assert not is_racy(scanned - RACY_WINDOW_NS - 1, scanned)
    assert is_racy(123, 0)  # an index from before the rule recorded no scan time


def test_verify_advises_a_command_that_repairs_what_it_found(home: Home, indexed: Path) -> None:
    # An old file (not racy) edited keeping its stat: only content comparison sees it.
    target = indexed / "toy" / "retry.py"
    old = target.stat().st_mtime_ns - 10 * RACY_WINDOW_NS
    os.utime(target, ns=(old, old))
    index(home, indexed)
    edit_keeping_stat(target, "backoff_delay", "jitter_window")
    code, data = cli("verify", "toy")
    assert code == 0, data
    assert data["stale"] >= 1, data
    advice = data["fix"]
    assert advice.startswith("engine "), advice
    code, _ = cli(*advice.split()[1:])
    assert code == 0
    code, data = cli("verify", "toy")
    assert data["stale"] == 0, data


def test_verify_as_text_advises_the_same_command(home: Home, indexed: Path) -> None:
    # It used to print "run engine reindex toy", which finds such an edit up to date.
    target = indexed / "toy" / "retry.py"
    old = target.stat().st_mtime_ns - 10 * RACY_WINDOW_NS
    os.utime(target, ns=(old, old))
    index(home, indexed)
    edit_keeping_stat(target, "backoff_delay", "jitter_window")
    code, data = cli("verify", "toy")
    assert code == 0 and data["stale"], data
    result = CliRunner().invoke(main, ["verify", "toy"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].endswith(f" — run {data['fix']}"), result.output
    assert "engine reindex toy" not in result.output, result.output
