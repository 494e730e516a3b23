"""``engine watch`` as a process: it picks up changes, survives a burst, stops on Ctrl-C."""

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

from engine.index.home import Home
from engine.indexing.watch import indexed_state
from tests.reliability.conftest import index, search, stored_chunks, write

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WATCH = (
    "from tests.conftest import install_fake_registry; install_fake_registry(); "
    "from cli.commands.watch import watch; watch()"
)
HANG_GUARD_S = 120  # fails a test that would otherwise hang; not a speed check


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

    from cli.commands.watch import watch

    result = CliRunner().invoke(watch, [*(a.format(repo=repo) for a in args), "--json"])
    assert result.exit_code == 1
    assert message in orjson.loads(result.stdout)["error"]


def test_watch_of_a_folder_not_indexed_needs_a_name_and_indexes_nothing(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``engine watch ../../etc`` (issue 15): a path is not taken as a folder to index unless
    ``--name`` says so; before, it indexed whatever folder it pointed at."""
    from click.testing import CliRunner

    from cli.commands.watch import watch

    outside = tmp_path / "outside" / "etc"
    write(outside, "passwd.py", "ROOT = 0\n")
    monkeypatch.chdir(tmp_path / "outside")

    def stop_at_once(self: object, on_event: object) -> None:
        raise KeyboardInterrupt  # if a watch starts after all, the test ends instead of hanging

    monkeypatch.setattr("engine.indexing.watch.Watcher.run", stop_at_once)
    for given in ("../outside/etc", str(outside), "etc"):
        result = CliRunner().invoke(watch, [given, "--json"])
        assert result.exit_code == 1, result.output
        error = orjson.loads(result.stdout)["error"]
        assert "is a folder that is not indexed" in error
        assert f"engine watch {given} --name NAME" in error
    assert home.list() == []
    assert not home.repos_dir.exists() or not any(home.repos_dir.iterdir())


def test_watch_accepts_an_indexed_repository_by_its_folder(home: Home, indexed: Path) -> None:
    from cli.commands.watch import _resolve

    assert _resolve(home, str(indexed), None) == ("toy", None)
    assert _resolve(home, "toy", None) == ("toy", None)
    assert _resolve(home, str(indexed), "other") == ("other", indexed)
