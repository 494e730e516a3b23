"""cli/serve/watching.py and the freshness contract through ``engine serve``: results from
changed files are moved or stale (with a warning), the server reindexes on its own after a
burst of edits settles, ``--no-watch`` leaves the index alone, and shutdown leaves no orphan.

Waits poll with a generous timeout; nothing here asserts how long anything took.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli.serve.watching import RepoWatchers
from engine.index.home import Home
from engine.indexing.indexer import Indexer
from engine.indexing.watch import WatchOptions
from engine.signal import IndexOptions
from tests.conftest import fake_plugins

PROJECT_ROOT = Path(__file__).resolve().parents[3]
FAKE = "from tests.conftest import install_fake_registry; install_fake_registry()"
CHILD_CODE = f"{FAKE}; from cli.serve.reindex import child_main; child_main()"
# A reindex child that takes long enough to be caught running; stdin closing interrupts it.
SLOW_CHILD_CODE = (
    f"import time; {FAKE}; from cli.serve import reindex; "
    "reindex._reindex = lambda args: time.sleep(120) or {}; reindex.child_main()"
)
FAST_WATCH = "WatchOptions(quiet_s=0.3, poll_s=0.1)"
GUARD_S = 120.0  # fails a test that would otherwise hang; not a speed check

GREETER = (
    "def greet(name):\n    return f'Hello {name}'\n\n\ndef shout(text):\n    return text.upper()\n"
)
RETRY = (
    "class RetryPolicy:\n"
    "    def backoff_delay(self, attempt):\n"
    "        return min(30, 2 ** attempt)\n"
)


def server_command(watch: str, child_code: str = CHILD_CODE) -> list[str]:
    code = (
        f"import sys; {FAKE}; from cli.serve.server import serve; "
        "from engine.indexing.watch import WatchOptions; "
        f"serve(reindex_command=[sys.executable, '-c', {child_code!r}], watch={watch})"
    )
    return [sys.executable, "-c", code]


def build_home(tmp: Path) -> Path:
    home, repo = tmp / "home", tmp / "toy"
    (repo / "toy").mkdir(parents=True)
    (repo / "toy" / "greeter.py").write_text(GREETER)
    (repo / "toy" / "retry.py").write_text(RETRY)
    Indexer(Home(home), fake_plugins(), IndexOptions(home=home)).index("toy", repo)
    return home


def env(home: Path) -> dict[str, str]:
    return {"ENGINE_HOME": str(home), "PATH": os.environ.get("PATH", ""), "HOME": str(home)}


@asynccontextmanager
async def connected(command: list[str], home: Path, errlog: TextIO) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=env(home), cwd=PROJECT_ROOT
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def run_client(
    command: list[str],
    home: Path,
    tmp_path: Path,
    body: Callable[[ClientSession], Coroutine[Any, Any, None]],
) -> None:
    async def main() -> None:
        with (tmp_path / "server.log").open("w") as errlog, anyio.fail_after(GUARD_S):
            async with connected(command, home, errlog) as session:
                await body(session)

    anyio.run(main)


async def search(session: ClientSession, query: str) -> dict[str, Any]:
    result = await session.call_tool("semanticSearch", {"repo": "toy", "query": query})
    item = result.content[0]
    assert item.type == "text"
    data = json.loads(item.text)
    assert isinstance(data, dict) and "error" not in data, data
    return data


def hit(data: dict[str, Any], name: str) -> dict[str, Any] | None:
    for r in data["results"]:
        if r["symbolName"].endswith(name):
            assert isinstance(r, dict)
            return r
    return None


def test_moved_stale_and_deleted_through_the_server(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    repo = tmp_path / "toy" / "toy"

    async def body(session: ClientSession) -> None:
        fresh = await search(session, "greet")
        assert "warning" not in fresh
        assert hit(fresh, "greet") is not None

        (repo / "greeter.py").write_text("# 1\n# 2\n# 3\n# 4\n# 5\n" + GREETER)
        moved = await search(session, "greet")
        greet = hit(moved, "greet")
        assert greet is not None
        assert (greet["startLine"], greet["endLine"], greet.get("moved")) == (6, 7, True)
        assert "toy/greeter.py (moved)" in moved["warning"]

        (repo / "greeter.py").write_text(GREETER.replace("Hello", "Goodbye"))
        stale = await search(session, "greet")
        greet = hit(stale, "greet")
        assert greet is not None and greet.get("stale") is True
        assert "toy/greeter.py (stale)" in stale["warning"]

        (repo / "retry.py").unlink()
        gone = await search(session, "RetryPolicy backoff delay")
        policy = hit(gone, "backoff_delay") or hit(gone, "RetryPolicy")
        assert policy is not None and policy.get("stale") is True
        assert "toy/retry.py (deleted)" in gone["warning"]

    run_client(server_command("None"), home, tmp_path, body)
    assert "reindex of toy started" not in (tmp_path / "server.log").read_text()


def test_serve_notices_an_edit_and_answers_fresh_after_the_burst(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    repo = tmp_path / "toy" / "toy"

    async def body(session: ClientSession) -> None:
        await search(session, "greet")  # opens the index, and so starts watching it
        (repo / "greeter.py").write_text(
            "# 1\n# 2\n# 3\n# 4\n# 5\n" + GREETER + "\n\ndef wave(hand):\n    return hand\n"
        )
        deadline = time.monotonic() + GUARD_S
        while True:
            data = await search(session, "wave hand")
            wave = hit(data, "wave")
            if wave is not None and "warning" not in data:
                break
            assert time.monotonic() < deadline, "the server never reindexed the edit"
            await anyio.sleep(0.2)
        assert wave["filePath"] == "toy/greeter.py"
        assert "moved" not in wave and "stale" not in wave
        greet = hit(await search(session, "greet"), "greet")
        assert greet is not None and "moved" not in greet
        lines = (repo / "greeter.py").read_text().split("\n")
        # The index is current again: its lines are the file's lines.
        assert greet["content"] == "\n".join(lines[greet["startLine"] - 1 : greet["endLine"]])

    run_client(server_command(FAST_WATCH), home, tmp_path, body)
    log = (tmp_path / "server.log").read_text()
    assert "toy: watching" in log
    assert "reindex of toy started" in log  # by the watcher: the test never calls reindex


def test_no_watch_leaves_the_index_alone(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    repo = tmp_path / "toy" / "toy"

    async def body(session: ClientSession) -> None:
        await search(session, "greet")
        (repo / "greeter.py").write_text("\n\n" + GREETER)
        # Several times the quiet period the watching test uses: a watcher would have run.
        for _ in range(15):
            await anyio.sleep(0.2)
            greet = hit(await search(session, "greet"), "greet")
            assert greet is not None and greet.get("moved") is True

    run_client(server_command("None"), home, tmp_path, body)
    log = (tmp_path / "server.log").read_text()
    assert "watching" not in log
    assert "reindex of toy started" not in log


def reindex_children(home: Path) -> list[int]:
    """Live reindex processes started for ``home`` (found through /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if (
            b"cli.serve" in cmdline
            and b"child_main" in cmdline
            and f"ENGINE_HOME={home}".encode() in environ.split(b"\0")
            and state != "Z"
        ):
            found.append(int(proc.name))
    return found


def poll(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_stdin_close_during_a_watch_reindex_exits_cleanly_without_orphans(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    log_path = tmp_path / "server.log"
    with log_path.open("w") as errlog:
        process = subprocess.Popen(
            server_command(FAST_WATCH, SLOW_CHILD_CODE),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=env(home),
            cwd=PROJECT_ROOT,
        )
        try:
            assert process.stdin is not None and process.stdout is not None
            lines: list[bytes] = []
            stdout = process.stdout

            def read() -> None:
                with stdout:
                    lines.extend(stdout)

            reader = threading.Thread(target=read)
            reader.start()

            def send(message: dict[str, Any]) -> None:
                assert process.stdin is not None
                process.stdin.write(json.dumps(message).encode() + b"\n")
                process.stdin.flush()

            send(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw-test", "version": "0"},
                    },
                }
            )
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {
                        "name": "semanticSearch",
                        "arguments": {"repo": "toy", "query": "x"},
                    },
                }
            )
            poll(lambda: len(lines) >= 2, "the search was never answered")
            (tmp_path / "toy" / "toy" / "greeter.py").write_text("\n" + GREETER)
            poll(lambda: bool(reindex_children(home)), "the watcher never started a reindex")
            process.stdin.close()
            assert process.wait(GUARD_S) == 0
            reader.join(GUARD_S)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert reindex_children(home) == []
    assert "Traceback" not in log_path.read_text()


# --- RepoWatchers in-process -------------------------------------------------------------------


class FailingJobs:
    """A ``Reindexer`` whose every reindex fails, counting the attempts."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def run(self, slug: str, *, wait_s: float) -> dict[str, Any]:
        self.runs.append(slug)
        return {"error": "disk full"}

    def wait(self, slug: str, timeout_s: float) -> bool:
        return True


def test_a_failing_reindex_is_logged_retried_and_stops_cleanly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = build_home(tmp_path)
    (tmp_path / "toy" / "toy" / "greeter.py").write_text("\n" + GREETER)
    jobs = FailingJobs()
    options = WatchOptions(quiet_s=0.0, poll_s=0.05, retry_s=0.05, max_retry_s=0.1)
    watchers = RepoWatchers(Home(home), jobs, options, limit=1)
    with caplog.at_level(logging.INFO, logger="cli.serve.watching"):
        watchers.watch("toy")
        watchers.watch("toy")  # once per repository
        watchers.watch("other")  # over the cap: refused, with a warning
        poll(lambda: len(jobs.runs) >= 2, "the failed reindex was not retried")
        assert watchers.watched() == ["toy"]
        watchers.stop()
        watchers.join(GUARD_S)
    assert not any(t.name.startswith("watch-") for t in threading.enumerate())
    assert "the reindex after a change failed, will retry: disk full" in caplog.text
    assert "other: not watched for changes" in caplog.text


def test_a_repository_removed_while_watched_ends_its_watch(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    watchers = RepoWatchers(Home(home), FailingJobs(), WatchOptions(quiet_s=0.0, poll_s=0.05))
    watchers.watch("ghost")  # not indexed: the watch ends by itself
    poll(lambda: watchers.watched() == [], "the watch of a missing repository went on")
    watchers.stop()
    watchers.join(GUARD_S)
