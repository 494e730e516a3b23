"""SIGKILL an indexer at random moments: the published index is always whole, and converges.

A real repository (a slice of the CPython standard library, ~100 files and ~44k lines) is
indexed by ``engine index`` processes (fake embedder) that are killed, with their whole
process group, after a random delay, while the repository flips between two versions.

Before each run, the index home is copied and the same run is completed in-process on the
copy: that gives the generations an uninterrupted run would publish (the fast one, then the
complete one) and their exact answers. After the kill, the published generation must be the
one from before the run, answering exactly as before, or one of those two, holding exactly
their chunks and answering exactly as they do. A final uninterrupted run must hold exactly a
clean build's files and chunks and rank exactly like it, every signal and the fusion.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from engine.errors import RepoNotFound
from engine.index.generations import current_generation, generation_number
from engine.index.home import Home
from engine.index.store import STORE_FILE, ChunkStore
from tests.reliability.conftest import (
    assert_same_ranking,
    generation_ranking,
    index,
    indexer,
    ranking,
    stored_chunks,
)

pytestmark = pytest.mark.slow

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ENGINE = (
    "from tests.conftest import install_fake_registry; install_fake_registry(); "
    "from cli.main import main; main()"
)
STDLIB_PACKAGES = ("asyncio", "email", "json", "http", "logging", "concurrent", "importlib")
KILLS = int(os.environ.get("RELIABILITY_KILLS", "24"))
MAX_RUNS = 3 * KILLS  # runs that finish before their kill do not count as kills
HANG_GUARD_S = 300  # fails a test that would otherwise hang; not a speed check
QUERIES = (
    "parse an email address header",
    "json decoder error position",
    "http cookie expiry",
    "run the event loop until complete",
    "rotating file handler",
    "find a module spec for an import",
    "shutdown thread pool executor",
    "reliability_marker",
)
FAST = ["lexical", "symbol"]

Version = dict[str, bytes]


def source_tree(target: Path) -> Path:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    folders = [stdlib / name for name in STDLIB_PACKAGES if (stdlib / name).is_dir()]
    if len(folders) < 3:  # a Python without its library sources: index this project instead
        folders = [PROJECT_ROOT / "engine", PROJECT_ROOT / "signals"]
    for folder in folders:
        shutil.copytree(
            folder, target / folder.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    return target


def read_version(root: Path) -> Version:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def edited(version: Version, rng: random.Random) -> Version:
    """Version B: some files deleted, some edited, some added, one renamed."""
    paths = sorted(p for p in version if p.endswith(".py"))
    rng.shuffle(paths)
    result = dict(version)
    for path in paths[:10]:
        del result[path]
    for n, path in enumerate(paths[10:25]):
        marker = f'\n\ndef reliability_marker_{n}():\n    return "edited {n}"\n'.encode()
        result[path] = version[path].replace(b"return ", b"return  ", 1) + marker
    for n, path in enumerate(paths[25:35]):
        # Renamed definitions, so that no chunk duplicates another (duplicates collapse).
        text = version[path].replace(b"def ", f"def added{n}_".encode())
        result[f"added/copy_{n}.py"] = text.replace(b"class ", f"class Added{n}".encode())
    renamed = paths[35]
    result[renamed.replace(".py", "_renamed.py")] = result.pop(renamed)
    return result


def write_version(root: Path, version: Version) -> None:
    for path in read_version(root).keys() - version.keys():
        (root / path).unlink()
    for path, data in version.items():
        target = root / path
        if not target.is_file() or target.read_bytes() != data:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


@dataclass
class Figures:
    kills: int = 0
    finished_before_kill: int = 0
    kept_previous: int = 0  # killed before anything was published
    fast_published: int = 0  # killed after the fast generation, before the complete one
    complete_published: int = 0  # killed after the complete generation (cleanup only left)


def engine_process(home: Home, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", ENGINE, *args],
        cwd=PROJECT_ROOT,
        env={"ENGINE_HOME": str(home.root), "PATH": "/usr/bin:/bin", "HOME": str(home.root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: chunking workers die with it
    )


def run_to_end(home: Home, root: Path) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    process = engine_process(home, "index", str(root), "--name", "toy", "--json")
    out, err = process.communicate(timeout=HANG_GUARD_S)
    assert process.returncode == 0, err.decode()
    return time.perf_counter() - started, orjson.loads(out)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=HANG_GUARD_S)
    deadline = time.monotonic() + HANG_GUARD_S
    while True:  # every process of the group (chunking workers included) is gone
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, "a process of the killed group survived"
        time.sleep(0.05)


Answers = dict[str, Any]


def generation_state(generation: Path) -> tuple[list[tuple[Any, ...]], Answers]:
    """Everything a reader can observe of one generation: its chunk rows and its answers."""
    store = ChunkStore.open_readonly(generation / STORE_FILE)
    try:
        rows = [(c.id, c.path, c.start_line, c.end_line, c.text) for c in store.iter_chunks()]
    finally:
        store.close()
    return rows, {text: generation_ranking(generation, text) for text in QUERIES}


def uninterrupted(
    home: Home, repo: Path, scratch: Path
) -> tuple[float, dict[str, tuple[Any, Answers]]]:
    """What the run about to start would publish if nothing stopped it, generation by name,
    and how long that run took in-process."""
    shutil.rmtree(scratch, ignore_errors=True)
    if home.root.is_dir():
        shutil.copytree(home.root, scratch, symlinks=True)
    copy = Home(scratch)
    before = published(copy)
    started = time.perf_counter()
    report = indexer(copy).index("toy", repo)
    seconds = time.perf_counter() - started
    new = [
        p
        for p in copy.repo_dir("toy").glob("gen-*")
        if before is None or generation_number(p.name) > generation_number(before.name)
    ]
    assert report.up_to_date or new
    return seconds, {p.name: generation_state(p) for p in new}


def leftovers(home: Home) -> list[str]:
    directory = home.repo_dir("toy")
    current = current_generation(directory)
    number = generation_number(current.name) if current else 0
    return sorted(
        p.name for p in directory.glob("gen-*") if generation_number(p.name) > number
    ) + sorted(p.name for p in directory.glob(".*.tmp"))


def published(home: Home) -> Path | None:
    directory = home.repo_dir("toy")
    return current_generation(directory) if directory.is_dir() else None


def assert_converged(home: Home, clean: Home) -> None:
    """Same files and chunks as a clean build, and the same ranking (up to exact ties) from
    each signal alone and fused. Lexical scores are exact since issue 8: an update that would
    leave Tantivy counting deleted documents in its BM25 statistics rebuilds the lexical index
    when the index is small or the deletions many, and here both hold (a few thousand chunks;
    every version switch deletes over 10% of them)."""
    assert stored_chunks(home) == stored_chunks(clean)
    for text in QUERIES:
        for signals in (["lexical"], ["vector"], ["symbol"], None):
            assert_same_ranking(home, clean, text, signals=signals)


def test_sigkill_at_random_moments_never_breaks_the_published_index(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    rng = random.Random(20260430)
    repo = source_tree(tmp_path / "repo")
    version_a = read_version(repo)
    version_b = edited(version_a, rng)

    # A process's start-up before it does any work, to spread the kills over the work.
    scratch = Home(tmp_path / "scratch")
    full_s, _ = run_to_end(scratch, repo)
    shutil.rmtree(scratch.root)
    started = time.perf_counter()
    run_to_end(scratch, repo / "json")
    startup_s = time.perf_counter() - started

    home = Home(tmp_path / "home")
    figures = Figures()
    runs = 0
    while figures.kills < KILLS:
        runs += 1
        assert runs <= MAX_RUNS, f"only {figures.kills} kills in {runs} runs"
        write_version(repo, version_a if runs % 2 else version_b)
        before = published(home)
        before_state = generation_state(before) if before is not None else None
        work_s, expected = uninterrupted(home, repo, tmp_path / "expected")

        delay = rng.uniform(0.1, startup_s + 1.1 * work_s)
        process = engine_process(home, "index", str(repo), "--name", "toy", "--json")
        time.sleep(delay)
        finished = process.poll() is not None
        kill_group(process)
        if finished:
            figures.finished_before_kill += 1
            assert process.returncode == 0
            assert leftovers(home) == []
        else:
            figures.kills += 1

        after = published(home)
        if after is None:  # killed before the first generation was published
            assert before is None
            with pytest.raises(RepoNotFound, match="no finished index yet"):
                ranking(home, QUERIES[0])
            figures.kept_previous += not finished
            continue
        state = generation_state(after)
        if before is not None and after == before:
            assert state == before_state, "a published generation changed"
            figures.kept_previous += not finished
            continue
        assert after.name in expected, (after.name, sorted(expected))
        assert state == expected[after.name], f"{after.name} differs from an uninterrupted run"
        if not finished:
            if after.name == max(expected):
                figures.complete_published += 1
            else:
                figures.fast_published += 1

    # Converge: one uninterrupted run equals a clean build of the same version.
    write_version(repo, version_b)
    _, report = run_to_end(home, repo)
    assert all(state["ready"] and state["synced"] for state in report["signals"].values())
    assert leftovers(home) == []
    assert len(list(home.repo_dir("toy").glob("gen-*"))) <= 3
    clean = Home(tmp_path / "clean")
    index(clean, repo)
    assert_converged(home, clean)

    summary = {
        "test": "sigkill",
        "repository": f"{len(version_a)} files, {len(stored_chunks(clean))} chunks",
        "full_run_s": round(full_s, 2),
        "startup_s": round(startup_s, 2),
        "runs": runs,
        **vars(figures),
    }
    figures_file = tmp_path_factory.getbasetemp() / "reliability-figures.jsonl"
    with figures_file.open("ab") as handle:
        handle.write(orjson.dumps(summary) + b"\n")
    print(summary)
