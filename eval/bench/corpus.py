"""Speed benchmark on a real corpus no one here wrote: the running interpreter's stdlib.

``make bench`` (``python -m eval.bench.corpus``) indexes the corpus into a temporary
$ENGINE_HOME and prints files/s and chunks/s per stage, in-process query latency per signal
and end-to-end, and the latency of a cold ``engine query`` process. Like the CLI, it is a
composition root.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from engine.index.home import Home
from engine.index.opening import open_index
from engine.indexing.indexer import Indexer
from engine.signal import IndexOptions, OpenOptions, SignalPlugin
from eval.metrics import percentile
from signals.registry import plugins

QUERIES = [
    "parse a URL into its components",
    "json decoder",
    "read a zip archive member",
    "HTTPConnection",
    "compute the sha256 digest of a file",
    "format a date according to a pattern",
    "shutil copytree ignore patterns",
    "thread pool executor submit",
    "quote a string for the shell",
    "how does the logging module rotate log files",
    "SequenceMatcher ratio",
    "temporary directory that deletes itself",
    "percent-encode a query string",
    "detect the encoding of a python source file",
    "walk a directory tree",
    "csv DictReader",
    "parse command line options with subcommands",
    "send an email over smtp with tls",
    "deep copy an object with cycles",
    "base64 decode",
]


def stdlib_corpus() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=stdlib_corpus())
    parser.add_argument("--signals", default="", help="comma-separated subset (default: all)")
    parser.add_argument("--repeat", type=int, default=5, help="in-process query repetitions")
    parser.add_argument("--cold", type=int, default=7, help="cold CLI query runs")
    args = parser.parse_args(argv)

    registry = plugins()
    if args.signals:
        registry = {n: p for n, p in registry.items() if n in args.signals.split(",")}
    home_dir = Path(tempfile.mkdtemp(prefix="engine-bench-"))
    try:
        _bench(args, registry, home_dir)
    finally:
        shutil.rmtree(home_dir, ignore_errors=True)


def _bench(args: argparse.Namespace, registry: dict[str, SignalPlugin], home_dir: Path) -> None:
    home = Home(home_dir)
    print(f"# engine bench — {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"corpus: {args.corpus}")
    print(f"signals: {', '.join(registry)}")

    load_before = os.getloadavg()
    cpu_before = _cpu_seconds()
    started = time.perf_counter()
    report = Indexer(home, registry, IndexOptions(home=home_dir)).index("corpus", args.corpus)
    total_s = time.perf_counter() - started
    main_cpu, workers_cpu = (a - b for a, b in zip(_cpu_seconds(), cpu_before, strict=True))
    files, chunks = report.files_indexed, report.chunks
    print(f"\nindexed {files} files, {chunks} chunks in {total_s:.1f} s")
    # CPU time moves less than wall time when other jobs share the cores.
    print(
        f"  CPU: {main_cpu:.1f} s in this process, {workers_cpu:.1f} s in chunking workers; "
        f"load average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    for stage, seconds in report.stage_seconds.items():
        if stage == "lexical":
            # A first build streams chunks into Tantivy during read+chunk; this stage only
            # finishes the stream, so a rate over it would mean nothing.
            print(f"  {stage:<12} {seconds:7.2f} s  (finishing what read+chunk streamed)")
            continue
        unit = files if stage in ("walk", "read+chunk") else chunks
        what = "files" if stage in ("walk", "read+chunk") else "chunks"
        print(f"  {stage:<12} {seconds:7.2f} s  {unit / max(seconds, 1e-9):9.0f} {what}/s")
    lexical_s = report.stage_seconds.get("read+chunk", 0) + report.stage_seconds.get("lexical", 0)
    print(f"  chunking + lexical: {files / max(lexical_s, 1e-9):.0f} files/s")

    started = time.perf_counter()
    noop = Indexer(home, registry, IndexOptions(home=home_dir)).reindex("corpus")
    seconds = time.perf_counter() - started
    print(f"  no-change reindex: {seconds:.2f} s ({noop.files_unchanged} unchanged)")

    opened = open_index(home, "corpus", registry, OpenOptions(home=home_dir))
    try:
        per_signal: dict[str, list[float]] = {}
        fused: list[float] = []
        for _ in range(args.repeat):
            for text in QUERIES:
                t0 = time.perf_counter()
                response = opened.searcher.search(text, limit=10)
                fused.append((time.perf_counter() - t0) * 1000)
                for run in response.runs:
                    per_signal.setdefault(run.signal, []).append(run.latency_ms)
    finally:
        opened.close()
    print(f"\nwarm in-process query latency ({len(fused)} queries)")
    for name, values in per_signal.items():
        p50, p95 = percentile(values, 50), percentile(values, 95)
        print(f"  {name:<8} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")
    print(
        f"  {'fused':<8} p50 {percentile(fused, 50):7.2f} ms  p95 {percentile(fused, 95):7.2f} ms"
    )

    engine_bin = shutil.which("engine") or str(Path(sys.executable).with_name("engine"))
    env = {**os.environ, "ENGINE_HOME": str(home_dir)}
    cold: list[float] = []
    for i in range(args.cold):
        t0 = time.perf_counter()
        subprocess.run(
            [engine_bin, "query", "corpus", QUERIES[i % len(QUERIES)], "--json"],
            env=env,
            check=True,
            capture_output=True,
        )
        cold.append(time.perf_counter() - t0)
    p50, p95 = percentile(cold, 50), percentile(cold, 95)
    print(f"\ncold `engine query` ({args.cold} runs): p50 {p50:.3f} s, p95 {p95:.3f} s")


def _cpu_seconds() -> tuple[float, float]:
    """User + system CPU seconds of this process and of its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


if __name__ == "__main__":
    main()
