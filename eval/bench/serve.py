"""Agent-server benchmark: warm ``semanticSearch`` latency through a real MCP client over stdio.

``python -m eval.bench.serve`` indexes a slice of the running interpreter's stdlib (or
``--corpus``) into a temporary $ENGINE_HOME, starts ``engine serve`` as a child process, talks
to it with the official MCP client, and prints: the first (cold) call, warm sequential call
latency (p50/p95/p99), the same searches in-process (so the protocol's share is visible),
throughput with concurrent callers, the server's RSS before, during and after the run, and
what the freshness check (every answer checked against the files on disk) costs per search.
Like the CLI, it is a composition root.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from engine.index.home import Home
from engine.index.opening import open_index
from engine.indexing.freshness import RACY_WINDOW_NS, DiskFiles
from engine.indexing.indexer import Indexer
from engine.search.freshness import checked
from engine.signal import IndexOptions, OpenOptions
from eval.bench.corpus import QUERIES
from eval.metrics import percentile
from signals.registry import plugins

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-c", "from cli.serve.server import main; main()"]
SKIPPED_PARTS = {"site-packages", "test", "tests", "idle_test", "__pycache__"}
SLUG = "corpus"


def stdlib_files(root: Path, limit: int) -> Iterator[Path]:
    """Up to ``limit`` stdlib sources in a stable order, test suites and site-packages left out."""
    found = 0
    for path in sorted(root.rglob("*.py")):
        if found >= limit:
            return
        if SKIPPED_PARTS.intersection(path.relative_to(root).parts):
            continue
        found += 1
        yield path


def copy_corpus(source: Path, target: Path, max_files: int) -> Path:
    for path in stdlib_files(source, max_files):
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    return target


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def server_pid() -> int:
    """The pid of the ``engine serve`` child this process started (found through /proc)."""
    me = str(os.getpid())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            status = (proc / "status").read_text()
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        parent = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("PPid:")), "")
        if parent == me and b"cli.serve" in cmdline:
            return int(proc.name)
    raise RuntimeError("the server process was not found")


def summary(values_ms: list[float]) -> str:
    return (
        f"p50 {percentile(values_ms, 50):6.2f} ms  p95 {percentile(values_ms, 95):6.2f} ms  "
        f"p99 {percentile(values_ms, 99):6.2f} ms  max {max(values_ms):7.2f} ms"
    )


async def timed_search(session: ClientSession, query: str, limit: int) -> float:
    started = time.perf_counter()
    result = await session.call_tool(
        "semanticSearch", {"repo": SLUG, "query": query, "limit": limit}
    )
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise RuntimeError(f"semanticSearch failed: {result.content}")
    return elapsed


async def drive(args: argparse.Namespace, home_dir: Path) -> None:
    params = StdioServerParameters(
        command=SERVER[0],
        args=SERVER[1:],
        env={**os.environ, "ENGINE_HOME": str(home_dir), "ENGINE_LOG_LEVEL": "WARNING"},
        cwd=PROJECT_ROOT,
    )
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        print(f"\nserver start + initialize: {time.perf_counter() - started:.2f} s")
        pid = server_pid()
        rss_start = rss_mib(pid)
        first = await timed_search(session, QUERIES[0], args.limit)
        print(f"first semanticSearch (opens the index): {first:.1f} ms")
        for query in QUERIES:  # warm every query path once
            await timed_search(session, query, args.limit)
        rss_warm = rss_mib(pid)

        floor: dict[str, list[float]] = {"ping": [], "listRepos": []}
        for _ in range(200):
            started = time.perf_counter()
            await session.send_ping()
            floor["ping"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await session.call_tool("listRepos", {})
            floor["listRepos"].append((time.perf_counter() - started) * 1000)

        latencies: list[float] = []
        rss_samples: list[float] = []
        for number in range(args.calls):
            latencies.append(
                await timed_search(session, QUERIES[number % len(QUERIES)], args.limit)
            )
            if (number + 1) % max(1, args.calls // 4) == 0:
                rss_samples.append(rss_mib(pid))
        print(f"\nwarm semanticSearch, sequential ({args.calls} calls, limit {args.limit})")
        print(f"  end to end over stdio  {summary(latencies)}")
        print("  protocol floor (200 calls each):")
        for name, values in floor.items():
            print(f"    {name:<20} {summary(values)}")

        concurrent: list[float] = []
        per_caller = max(1, args.calls // (4 * args.concurrency))
        rss_rounds: list[float] = []

        async def caller(offset: int) -> None:
            for number in range(per_caller):
                query = QUERIES[(offset + number) % len(QUERIES)]
                concurrent.append(await timed_search(session, query, args.limit))

        started = time.perf_counter()
        for _ in range(args.rounds):
            async with anyio.create_task_group() as group:
                for offset in range(args.concurrency):
                    group.start_soon(caller, offset)
            rss_rounds.append(rss_mib(pid))
        wall = time.perf_counter() - started
        print(
            f"  {args.concurrency} concurrent callers   {summary(concurrent)}  "
            f"({len(concurrent) / wall:.0f} calls/s, {len(concurrent)} calls)"
        )
        rss_end = rss_mib(pid)
        print("\nserver RSS")
        print(f"  after initialize {rss_start:7.1f} MiB")
        print(f"  index warm       {rss_warm:7.1f} MiB")
        samples = "  ".join(f"{value:.1f}" for value in rss_samples)
        print(f"  during the run   {samples} MiB (every {max(1, args.calls // 4)} calls)")
        rounds = "  ".join(f"{value:.1f}" for value in rss_rounds)
        print(f"  after each concurrent round  {rounds} MiB")
        print(f"  after all calls  {rss_end:7.1f} MiB ({rss_end - rss_warm:+.1f} MiB since warm)")


def in_process(
    home_dir: Path, calls: int, limit: int
) -> tuple[list[float], dict[str, list[float]]]:
    """The same searches without the server: the engine's own share, overall and per signal
    (the freshness check included, as the server runs it; ``freshness_cost`` prices it)."""
    home = Home(home_dir)
    opened = open_index(home, SLUG, plugins(), OpenOptions(home=home_dir), files=DiskFiles.of)
    try:
        for query in QUERIES:
            opened.searcher.search(query, limit=limit)
        latencies = []
        per_signal: dict[str, list[float]] = {}
        for number in range(calls):
            started = time.perf_counter()
            response = opened.searcher.search(QUERIES[number % len(QUERIES)], limit=limit)
            latencies.append((time.perf_counter() - started) * 1000)
            for run in response.runs:
                per_signal.setdefault(run.signal, []).append(run.latency_ms)
        return latencies, per_signal
    finally:
        opened.close()


def freshness_cost(home_dir: Path, calls: int, limit: int) -> dict[str, list[float]]:
    """What the freshness check (engine/search/freshness.py) adds to one warm search, on the
    results of the same queries: as the index stands (files written shortly before the index
    scanned them are hashed every time: the racy rule), with every stat trusted (the common
    case once the files are older than the scan), and with every result file hashed."""
    home = Home(home_dir)
    opened = open_index(home, SLUG, plugins(), OpenOptions(home=home_dir))
    try:
        root, store, scanned = opened.entry.root, opened.store, opened.manifest.scanned_at_ns
        views = {
            "as indexed": DiskFiles(root, store, scanned),
            "stat only": DiskFiles(root, store, time.time_ns() + 2 * RACY_WINDOW_NS),
            "hash every file": DiskFiles(root, store, 0),
        }
        answers = [
            opened.searcher.search(QUERIES[n % len(QUERIES)], limit=limit).results
            for n in range(min(calls, 4 * len(QUERIES)))
        ]
        costs: dict[str, list[float]] = {name: [] for name in views}
        for number in range(calls):
            results = answers[number % len(answers)]
            for name, view in views.items():
                started = time.perf_counter()
                checked(results, view, SLUG)
                costs[name].append((time.perf_counter() - started) * 1000)
        return costs
    finally:
        opened.close()


def index_corpus(args: argparse.Namespace, home_dir: Path, work: Path) -> None:
    """Index the corpus into ``home_dir``, unless a kept home already holds it."""
    home = Home(home_dir)
    if any(entry.slug == SLUG for entry in home.list()):
        print(f"corpus: already indexed in {home_dir} (kept from an earlier run)")
        return
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    corpus = args.corpus or copy_corpus(stdlib, home_dir.parent / "corpus", args.max_files)
    print(f"corpus: {args.corpus or f'{args.max_files} files of {stdlib}'}")
    started = time.perf_counter()
    options = IndexOptions(
        home=home_dir, embed_precision=args.embed_precision, document_tokens=args.document_tokens
    )
    report = Indexer(home, plugins(), options).index(SLUG, corpus)
    print(
        f"indexed {report.files_indexed} files, {report.chunks} chunks in "
        f"{time.perf_counter() - started:.1f} s, all signals "
        f"({', '.join(f'{k} {v:.1f} s' for k, v in report.stage_seconds.items())})"
    )
    print(f"  {report.signals['vector'].message}" if "vector" in report.signals else "")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, help="index this folder as is (default: stdlib)")
    parser.add_argument(
        "--max-files", type=int, default=400, help="stdlib files to copy (400: ~10k chunks)"
    )
    parser.add_argument("--calls", type=int, default=2000, help="sequential warm calls")
    parser.add_argument("--concurrency", type=int, default=20, help="concurrent callers")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of concurrent calls")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument(
        "--keep",
        type=Path,
        help="work folder to keep (and reuse on the next run: embedding 10k chunks takes minutes)",
    )
    parser.add_argument(
        "--embed-precision",
        choices=["fp32", "mixed", "int8"],
        help="as engine index (default: its own)",
    )
    parser.add_argument("--document-tokens", type=int, help="as engine index")
    args = parser.parse_args(argv)

    work = args.keep or Path(tempfile.mkdtemp(prefix="engine-bench-serve-"))
    try:
        home_dir = work / "home"
        print(f"# engine serve bench — {datetime.now(UTC).isoformat(timespec='seconds')}")
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}"
        )
        print(f"signals: {', '.join(plugins())}")
        index_corpus(args, home_dir, work)
        # 2 cores shared with other work: the load says how much of each number is waiting.
        print("load average before the calls: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
        anyio.run(drive, args, home_dir)
        print("load average after the calls: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
        latencies, per_signal = in_process(home_dir, args.calls, args.limit)
        print(f"\nsame searches in-process ({args.calls} calls)")
        print(f"  searcher.search        {summary(latencies)}")
        for name, values in per_signal.items():
            print(f"    {name:<20} {summary(values)}")
        print(f"\nfreshness check alone, per search ({args.calls} calls, limit {args.limit})")
        for name, values in freshness_cost(home_dir, args.calls, args.limit).items():
            print(f"    {name:<20} {summary(values)}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
