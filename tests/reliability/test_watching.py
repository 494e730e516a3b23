"""``engine watch`` and engine/watching.py: changes get indexed once a burst settles.

The decision logic runs against real files, the real indexer and a fake clock, so "a burst
of 200 writes costs one update" is exact, not a matter of timing. The command itself runs as
a process: it picks up changes, survives a burst, and stops cleanly on Ctrl-C.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from engine.errors import EngineError
from engine.home import Home
from engine.indexer import MAX_FILE_BYTES
from engine.watching import (
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

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WATCH = (
    "from tests.conftest import install_fake_registry; install_fake_registry(); "
    "from cli.watch_command import watch; watch()"
)
HANG_GUARD_S = 120  # fails a test that would otherwise hang; not a speed check
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


# --- the command, as a process ---------------------------------------------------------------


class WatchProcess:
    """``engine watch ... --json`` as a child process; its events are read on a thread."""

    def __init__(self, home: Home, log: Path, *args: str) -> None:
        self.log = log
        with log.open("wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-c", WATCH, *args, "--json"],
                cwd=PROJECT_ROOT,
                env={
                    "ENGINE_HOME": str(home.root),
                    "PATH": "/usr/bin:/bin",
                    "HOME": str(home.root),
                },
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self.events.put(orjson.loads(line))

    def stderr(self) -> str:
        return self.log.read_text()

    def _get(self) -> dict[str, Any]:
        try:
            return self.events.get(timeout=HANG_GUARD_S)
        except queue.Empty:
            status = self.process.poll()
            raise AssertionError(f"no event; exit code {status}; stderr: {self.stderr()}") from None

    def next(self, kind: str) -> dict[str, Any]:
        while True:
            event = self._get()
            if event["event"] == kind:
                return event

    def until(self, done: Callable[[], bool]) -> list[dict[str, Any]]:
        """Events up to the first "updated" one after which ``done()`` holds."""
        seen = []
        while True:
            event = self._get()
            seen.append(event)
            assert event["event"] != "failed", event
            if event["event"] == "updated" and done():
                return seen

    def interrupt(self) -> int:
        """Ctrl-C; the exit code once the process and its output have ended."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(HANG_GUARD_S)
        self.reader.join(HANG_GUARD_S)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.reader.join(HANG_GUARD_S)


@pytest.fixture
def watching(home: Home, indexed: Path, tmp_path: Path) -> Iterator[WatchProcess]:
    watcher = WatchProcess(
        home, tmp_path / "watch.log", "toy", "--quiet-period", "0.3", "--interval", "0.1"
    )
    try:
        assert watcher.next("watching")["root"] == str(indexed.resolve())
        yield watcher
    finally:
        watcher.kill()


def found(home: Home, text: str, path: str) -> Callable[[], bool]:
    return lambda: bool(search(home, text)[0]) and search(home, text)[0][0][0] == path


def test_watch_command_indexes_changes_and_stops_on_ctrl_c(
    home: Home,
    indexed: Path,
    watching: WatchProcess,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    write(indexed, "toy/new.py", "def watched_by_process():\n    pass\n")
    watching.until(found(home, "watched_by_process", "toy/new.py"))

    for n in range(200):
        write(indexed, f"burst/file_{n}.py", f"def burst_function_{n}():\n    return {n}\n")
    events = watching.until(lambda: len(indexed_state(home, "toy")) == 3 + 200)
    updates = [e for e in events if e["event"] == "updated"]
    # A burst costs a few updates at most (how many depends on how the writes fall across
    # polls on a loaded machine), never one per file.
    assert 1 <= len(updates) <= 10
    figures = {"test": "watch-burst", "writes": 200, "updates": len(updates)}
    with (tmp_path_factory.getbasetemp() / "reliability-figures.jsonl").open("ab") as handle:
        handle.write(orjson.dumps(figures) + b"\n")
    assert watching.interrupt() == 0
    assert "Traceback" not in watching.stderr()
    stopped = watching.next("stopped")
    assert stopped["updates"] >= 2
    clean = Home(tmp_path / "clean")
    index(clean, indexed)
    assert stored_chunks(home) == stored_chunks(clean)


def test_watch_command_on_a_new_folder_indexes_it_first(
    home: Home, repo: Path, tmp_path: Path
) -> None:
    watcher = WatchProcess(
        home, tmp_path / "watch.log", str(repo), "--name", "fresh", "--interval", "0.1"
    )
    try:
        assert watcher.next("indexed")["repo"] == "fresh"
        watcher.next("watching")
        assert search(home, "greet", slug="fresh")[0][0][0] == "toy/greeter.py"
        assert watcher.interrupt() == 0
        assert watcher.next("stopped")["updates"] == 0
        assert "Traceback" not in watcher.stderr()
    finally:
        watcher.kill()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ghost",), "no index for ghost — run engine index PATH --name ghost"),
        (("../etc",), "invalid repository name"),
        (("{repo}/toy/greeter.py",), "is not a folder"),
        (("{repo}", "--name", "../x"), "invalid repository name"),
    ],
)
def test_watch_command_errors(home: Home, repo: Path, args: tuple[str, ...], message: str) -> None:
    from click.testing import CliRunner

    from cli.watch_command import watch

    result = CliRunner().invoke(watch, [*(a.format(repo=repo) for a in args), "--json"])
    assert result.exit_code == 1
    assert message in orjson.loads(result.stdout)["error"]
