"""Load: several MCP clients, thousands of tool calls, while the repository is reindexed.

Three ``engine serve`` processes (fake embedder) share one index home; each is driven by the
official MCP client with several calls in flight. One client edits the repository and calls
``reindex`` again and again, so every server swaps generations under load. Every answer must
be well-formed, with no error and no warning but the freshness one (files do change under
the searches, and each server's own watcher reindexes them too; a reindex another process is
running answers "running"); the servers' memory must stay bounded.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import sysconfig
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import orjson
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from engine.index.home import Home
from tests.reliability.conftest import index, stored_chunks, write

pytestmark = pytest.mark.slow

PROJECT_ROOT = Path(__file__).resolve().parents[2]
FAKE = "from tests.conftest import install_fake_registry; install_fake_registry()"
CHILD_CODE = f"{FAKE}; from cli.serve.reindex import child_main; child_main()"
SERVER_CODE = (
    f"import sys; {FAKE}; from cli.serve.server import serve; "
    f"serve(reindex_command=[sys.executable, '-c', {CHILD_CODE!r}])"
)
CLIENTS = 3
IN_FLIGHT = 4  # concurrent calls per client
CALLS_PER_CLIENT = int(os.environ.get("RELIABILITY_CALLS_PER_CLIENT", "800"))
HANG_GUARD_S = 900  # fails a test that would otherwise hang; not a speed check
MAX_GROWTH_MIB = 150.0  # RSS a server may gain from warm to the end of the run
STDLIB_PACKAGES = ("asyncio", "email", "json", "http", "logging")
QUERIES = (
    "parse an email address header",
    "json decoder error position",
    "http cookie expiry",
    "run the event loop until complete",
    "rotating file handler",
    "getLogger",
    "BaseEventLoop.run_until_complete",
    "where is the Content-Type header parsed",
    "retry when the connection is reset",
    "!!! ??? ...",
    "函数 ünïcode 🚀 header",
    "x" * 5000,
    "Traceback (most recent call last):\n  File 'x.py', line 3, in <module>\n" * 50,
    "reliability_marker_function",
)


def rss_mib(pid: int, field_name: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field_name}:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field_name} for {pid}")


def server_pids(home: Path) -> list[int]:
    """Live ``engine serve`` processes on ``home`` (found through /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"from cli.serve.server import serve" in cmdline
            and f"ENGINE_HOME={home}".encode() in environ
        ):
            found.append(int(proc.name))
    return sorted(found)


@dataclass
class Tally:
    calls: int = 0
    by_tool: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    reindexes: int = 0
    generations: set[str] = field(default_factory=set)


@asynccontextmanager
async def connected(home: Path, errlog: TextIO) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", SERVER_CODE],
        env={"ENGINE_HOME": str(home), "PATH": os.environ.get("PATH", ""), "HOME": str(home)},
        cwd=PROJECT_ROOT,
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write_stream),
        ClientSession(read, write_stream) as session,
    ):
        await session.initialize()
        yield session


FRESHNESS_WARNING = "changed on disk since"  # engine/search/freshness.py's warning


async def call(session: ClientSession, tally: Tally, name: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(name, arguments)
    tally.calls += 1
    tally.by_tool[name] = tally.by_tool.get(name, 0) + 1
    try:
        (item,) = result.content
        data = orjson.loads(item.text)  # type: ignore[union-attr]
    except Exception as exc:
        tally.errors.append(f"{name}: unreadable answer ({exc!r})")
        return {}
    if result.is_error or "error" in data:
        tally.errors.append(f"{name} {str(arguments)[:80]}: {data.get('error')}")
    elif "warning" in data and FRESHNESS_WARNING not in data["warning"]:
        # Files are edited while the clients search: saying so is the freshness contract.
        tally.errors.append(f"{name} {str(arguments)[:80]}: warning {data['warning']}")
    return data


def check_results(data: dict[str, Any], tally: Tally) -> None:
    results = data.get("results")
    if not isinstance(results, list) or data.get("total") != len(results):
        tally.errors.append(f"malformed answer: {str(data)[:200]}")
        return
    for item in results:
        lines = item["content"].split("\n") if item.get("content") else []
        if item["startLine"] < 1 or item["endLine"] < item["startLine"]:
            tally.errors.append(f"bad line range: {item}")
        elif lines and len(lines) != item["endLine"] - item["startLine"] + 1:
            tally.errors.append(f"content does not span its lines: {item['filePath']}")


async def searcher(session: ClientSession, tally: Tally, rng: random.Random, calls: int) -> None:
    for _ in range(calls):
        roll = rng.random()
        if roll < 0.8:
            arguments: dict[str, Any] = {"repo": "corpus", "query": rng.choice(QUERIES)}
            if rng.random() < 0.3:
                arguments["limit"] = rng.randint(1, 30)
            if rng.random() < 0.2:
                arguments["path"] = rng.choice(["email", "asyncio/*", "*.py", "http"])
            check_results(await call(session, tally, "semanticSearch", arguments), tally)
        elif roll < 0.9:
            name = rng.choice(["getLogger", "parseaddr", "run_until_complete", "Header"])
            check_results(
                await call(session, tally, "findSymbol", {"repo": "corpus", "name": name}), tally
            )
        else:
            symbol = rng.choice(["getLogger", "decode", "Header"])
            check_results(
                await call(session, tally, "findReferences", {"repo": "corpus", "symbol": symbol}),
                tally,
            )


async def editor(
    session: ClientSession, tally: Tally, repo: Path, done: anyio.Event, rng: random.Random
) -> None:
    """Edit the repository and reindex, until the searchers are done."""
    round_number = 0
    while not done.is_set():
        round_number += 1
        write(
            repo,
            f"edits/round_{round_number % 3}.py",
            f"def reliability_marker_function():\n    return {round_number}\n",
        )
        victim = rng.choice(sorted((repo / "json").glob("*.py")))
        victim.write_text(victim.read_text() + f"\n# edited in round {round_number}\n")
        data = await call(session, tally, "reindex", {"repo": "corpus"})
        while data.get("status") == "running":  # longer than the tool waits: poll the status
            await anyio.sleep(1)
            status = await call(session, tally, "indexStatus", {"repo": "corpus"})
            data = status.get("reindex", {})
        if data.get("status") == "done":
            tally.reindexes += 1
            tally.generations.add(str(data.get("generation")))


def test_many_clients_thousands_of_calls_while_reindexing(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    repo = tmp_path / "corpus"
    for name in STDLIB_PACKAGES:
        shutil.copytree(stdlib / name, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    index(Home(home), repo, "corpus")
    chunks = len(stored_chunks(Home(home), "corpus"))
    tally = Tally()
    memory: dict[int, dict[str, float]] = {}
    elapsed_s = [0.0]
    sampling = threading.Event()
    peaks: dict[int, float] = {}

    def sample() -> None:
        while not sampling.wait(0.5):
            for pid in server_pids(home):
                with suppress(OSError, AssertionError):
                    peaks[pid] = max(peaks.get(pid, 0.0), rss_mib(pid))

    async def main() -> None:
        with (tmp_path / "servers.log").open("w") as errlog, anyio.fail_after(HANG_GUARD_S):
            async with (
                connected(home, errlog) as first,
                connected(home, errlog) as second,
                connected(home, errlog) as third,
            ):
                sessions = [first, second, third]
                for session in sessions:  # warm: every server has the index open
                    check_results(
                        await call(
                            session, tally, "semanticSearch", {"repo": "corpus", "query": "x"}
                        ),
                        tally,
                    )
                for pid in server_pids(home):
                    memory[pid] = {"warm": rss_mib(pid)}
                sampler = threading.Thread(target=sample, daemon=True)
                sampler.start()
                done = anyio.Event()
                started = time.perf_counter()

                async def searchers() -> None:
                    async with anyio.create_task_group() as group:
                        for n, session in enumerate(sessions):
                            for k in range(IN_FLIGHT):
                                rng = random.Random(n * 100 + k)
                                group.start_soon(
                                    searcher, session, tally, rng, CALLS_PER_CLIENT // IN_FLIGHT
                                )
                    done.set()

                async with anyio.create_task_group() as group:
                    group.start_soon(searchers)
                    group.start_soon(editor, first, tally, repo, done, random.Random(7))
                elapsed_s[0] = time.perf_counter() - started
                for pid in server_pids(home):
                    memory.setdefault(pid, {})["end"] = rss_mib(pid)
                    memory[pid]["peak_hwm"] = rss_mib(pid, "VmHWM")
                sampling.set()
                sampler.join()
                # The last reindex is visible to every server.
                for session in sessions:
                    data = await call(
                        session,
                        tally,
                        "semanticSearch",
                        {"repo": "corpus", "query": "reliability_marker_function"},
                    )
                    assert data["results"][0]["filePath"].startswith("edits/")

    anyio.run(main)
    seconds = elapsed_s[0]
    log = (tmp_path / "servers.log").read_text()
    summary = {
        "test": "serve-load",
        "repository": f"{chunks} chunks",
        "clients": CLIENTS,
        "in_flight_per_client": IN_FLIGHT,
        "calls": tally.calls,
        "by_tool": tally.by_tool,
        "errors": len(tally.errors),
        "reindexes": tally.reindexes,
        "seconds": round(seconds, 1),
        "calls_per_s": round(tally.calls / seconds, 1),
        "rss_mib": {
            str(pid): {k: round(v, 1) for k, v in values.items()} for pid, values in memory.items()
        },
        "peak_rss_sampled_mib": round(max(peaks.values(), default=0.0), 1),
    }
    figures_file = tmp_path_factory.getbasetemp() / "reliability-figures.jsonl"
    with figures_file.open("ab") as handle:
        handle.write(orjson.dumps(summary) + b"\n")
    print(summary)

    assert tally.errors == [], tally.errors[:10]
    assert "Traceback" not in log
    assert tally.calls >= CLIENTS * CALLS_PER_CLIENT
    assert tally.reindexes >= 2
    assert len(memory) == CLIENTS
    for pid, values in memory.items():
        assert values["end"] - values["warm"] <= MAX_GROWTH_MIB, (pid, values)
