"""engine/indexing/watch.py: changes get indexed once a burst settles, one update per burst.

The decision logic runs against real files, the real indexer and a fake clock, so "a burst
of 200 writes costs one update" is exact, not a matter of timing (the command itself, as a
process, is tested in test_watch_command.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.errors import EngineError
from engine.index.home import Home
from engine.indexing.walk import MAX_FILE_BYTES
from engine.indexing.watch import (
    Watcher,
    WatchEvent,
    WatchOptions,
    changed_paths,
    indexed_state,
    tree_state,
)
from tests.reliability.conftest import (
    assert_same_ranking,
    index,
    indexer,
    search,
    stored_chunks,
    write,
)

# Powers of two, so the fake clock's sums are exact.
OPTIONS = WatchOptions(quiet_s=0.5, poll_s=0.125, max_delay_s=5.0, retry_s=1.0)
TICK_S = 0.125


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Rig:
    """A Watcher over a real repository and index, with a clock the test moves."""

    def __init__(self, home: Home, repo: Path, update: Callable[[], Any] | None = None) -> None:
        self.clock = Clock()
        self.home = home
        self.repo = repo
        writer = indexer(home)
        self.watcher = Watcher(
            lambda: tree_state(repo, max_file_bytes=MAX_FILE_BYTES),
            lambda: indexed_state(home, "toy"),
            update or (lambda: writer.reindex("toy")),
            OPTIONS,
            clock=self.clock,
        )
        self.events: list[WatchEvent] = []
        self.first = self.poll()

    def poll(self, after_s: float = TICK_S) -> WatchEvent:
        self.clock.now += after_s
        event = self.watcher.poll()
        self.events.append(event)
        return event

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    def settle(self) -> WatchEvent:
        """Poll through the quiet period; the event of the poll that follows it."""
        for _ in range(int(OPTIONS.quiet_s / TICK_S)):
            event = self.poll()
            if event.kind != "waiting":
                return event
        raise AssertionError(f"no update after the quiet period: {self.kinds()[-8:]}")


@pytest.fixture
def rig(home: Home, indexed: Path) -> Rig:
    return Rig(home, indexed)


def test_nothing_changed_means_no_update(rig: Rig) -> None:
    assert rig.first.kind == "idle"
    for _ in range(50):
        assert rig.poll(1.0).kind == "idle"
    assert rig.watcher.updates == 0


def test_one_change_is_indexed_after_the_quiet_period(rig: Rig, home: Home) -> None:
    write(rig.repo, "toy/new.py", "def watched_function():\n    pass\n")
    assert rig.poll().kind == "waiting"
    assert rig.poll(0.2).kind == "waiting"  # still inside the quiet period
    event = rig.settle()
    assert event.kind == "updated"
    assert event.changed == 1
    assert event.report.files_added == 1
    assert search(home, "watched_function")[0][0][0] == "toy/new.py"
    assert rig.poll().kind == "idle"


def test_a_burst_of_200_writes_costs_one_update(rig: Rig, home: Home, tmp_path: Path) -> None:
    # 200 files written 10 per poll (a poll every 0.125 s): never quiet for 0.5 s.
    for batch in range(20):
        for i in range(10):
            n = batch * 10 + i
            write(rig.repo, f"burst/file_{n}.py", f"def burst_function_{n}():\n    return {n}\n")
        assert rig.poll().kind == "waiting"
    assert rig.watcher.updates == 0
    event = rig.settle()
    assert event.kind == "updated" and event.report.files_added == 200
    for _ in range(20):
        assert rig.poll().kind == "idle"
    assert rig.watcher.updates == 1
    clean = Home(tmp_path / "clean")
    index(clean, rig.repo)
    assert stored_chunks(home) == stored_chunks(clean)


def test_a_branch_switch_is_one_update_and_matches_a_clean_build(
    rig: Rig, home: Home, tmp_path: Path
) -> None:
    for n in range(60):
        write(rig.repo, f"feature/mod_{n}.py", f"def feature_{n}():\n    return {n}\n")
    rig.poll()
    rig.settle()
    assert rig.watcher.updates == 1
    # The switch: a third of the files deleted, a third rewritten, new ones added.
    for n in range(0, 20):
        (rig.repo / f"feature/mod_{n}.py").unlink()
    for n in range(20, 40):
        write(rig.repo, f"feature/mod_{n}.py", f"def switched_{n}():\n    return -{n}\n")
    for n in range(60, 80):
        write(rig.repo, f"feature/mod_{n}.py", f"def added_{n}():\n    return {n}\n")
    (rig.repo / "toy" / "greeter.py").rename(rig.repo / "toy" / "greeting.py")
    assert rig.poll().kind == "waiting"
    event = rig.settle()
    assert event.kind == "updated"
    assert event.changed == 20 + 20 + 20 + 2
    assert rig.watcher.updates == 2
    clean = Home(tmp_path / "clean")
    index(clean, rig.repo)
    assert stored_chunks(home) == stored_chunks(clean)
    for text in ("switched function", "greet", "added_75"):
        assert_same_ranking(home, clean, text)


def test_changes_that_never_settle_are_indexed_after_max_delay(rig: Rig, home: Home) -> None:
    polls = 0
    while rig.watcher.updates == 0:
        write(rig.repo, "toy/log.py", f"last_poll = {polls}\n")
        rig.poll()
        polls += 1
        assert polls < 1000, "never updated"
    # The first update comes max_delay_s after the first change was seen.
    assert polls == OPTIONS.max_delay_s / TICK_S + 1
    assert any("last_poll" in text for *_, text in stored_chunks(home))


def test_a_change_made_during_an_update_is_not_lost(home: Home, indexed: Path) -> None:
    writer = indexer(home)
    calls = [0]

    def update_then_edit() -> Any:
        report = writer.reindex("toy")
        calls[0] += 1
        if calls[0] == 1:  # an editor saving right after the update's walk
            write(indexed, "toy/late.py", "def late_edit_function():\n    pass\n")
        return report

    rig = Rig(home, indexed, update_then_edit)
    write(indexed, "toy/first.py", "def first_function():\n    pass\n")
    rig.poll()
    assert rig.settle().kind == "updated"
    assert rig.poll().kind == "waiting"  # the late edit differs from what was indexed
    assert rig.settle().kind == "updated"
    assert search(home, "late_edit_function")[0][0][0] == "toy/late.py"
    assert rig.poll().kind == "idle"


def test_a_failed_update_is_retried_with_a_pause(home: Home, indexed: Path) -> None:
    writer = indexer(home)
    failures = [2]

    def flaky() -> Any:
        if failures[0]:
            failures[0] -= 1
            raise EngineError("indexing toy stopped: the disk is full")
        return writer.reindex("toy")

    rig = Rig(home, indexed, flaky)
    write(indexed, "toy/new.py", "def retried_function():\n    pass\n")
    rig.poll()
    assert rig.settle().kind == "failed"
    assert rig.poll(0.5).kind == "waiting"  # inside the 1 s pause
    assert rig.poll(0.6).kind == "failed"  # retried; the pause doubles to 2 s
    assert rig.poll(1.5).kind == "waiting"
    event = rig.poll(0.6)
    assert event.kind == "updated"
    assert search(home, "retried_function")[0][0][0] == "toy/new.py"


def test_a_stale_index_at_start_is_updated_at_once(home: Home, indexed: Path) -> None:
    write(indexed, "toy/new.py", "def before_watch_function():\n    pass\n")
    rig = Rig(home, indexed)
    assert rig.first.kind == "updated" and rig.first.report.files_added == 1
    assert rig.poll().kind == "idle"


def test_a_damaged_index_at_start_is_rebuilt(home: Home, indexed: Path) -> None:
    (home.repo_dir("toy") / "CURRENT").write_text("garbage\n")
    assert indexed_state(home, "toy") == {}
    rig = Rig(home, indexed)
    assert rig.first.kind == "updated" and rig.first.report.full_rebuild
    assert search(home, "greet")[0][0][0] == "toy/greeter.py"


def test_an_update_by_another_process_is_noticed(rig: Rig, home: Home) -> None:
    write(rig.repo, "toy/new.py", "def elsewhere_function():\n    pass\n")
    index(home, rig.repo)  # e.g. the agent server's reindex tool
    assert rig.poll().kind == "idle"
    assert rig.watcher.updates == 0


def test_poll_interval_grows_with_the_scan_cost(rig: Rig) -> None:
    rig.watcher.scan_seconds = 0.3
    assert rig.watcher.interval() == pytest.approx(3.0)
    rig.watcher.scan_seconds = 0.001
    assert rig.watcher.interval() == OPTIONS.poll_s


def test_changed_paths_counts_added_removed_and_modified() -> None:
    indexed = {"a": (1, 1), "b": (2, 2), "c": (3, 3)}
    tree = {"a": (1, 1), "b": (2, 9), "d": (4, 4)}
    assert changed_paths(tree, indexed) == 3
