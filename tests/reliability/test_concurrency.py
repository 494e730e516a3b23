"""One writer per repository, and readers that are never blocked and never see partial state.

Writers are real ``engine`` processes (the lock is an OS file lock, so threads of one process
would not show what two processes do). Readers are threads searching in a loop, both the way
the CLI does (open the published generation per query) and the way ``engine serve`` does (a
long-lived ``IndexCache``), while the repository is reindexed again and again with changing
files. Every answer a reader gets must be exactly the answer of one published generation.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from cli.serve.indexes import IndexCache
from engine.index.generations import current_generation, writer_lock
from engine.index.home import Home
from engine.index.manifest import read_manifest
from engine.index.opening import open_index
from engine.index.store import STORE_FILE, ChunkStore
from engine.search.searcher import Searcher
from engine.signal import OpenOptions, Signal
from signals import registry
from tests.reliability.conftest import (
    assert_same_ranking,
    cli,
    index,
    indexer,
    search,
    stored_chunks,
    write,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ENGINE = (
    "from tests.conftest import install_fake_registry; install_fake_registry(); "
    "from cli.main import main; main()"
)
HOLD_LOCK = (
    "import sys; from pathlib import Path; from engine.index.generations import writer_lock\n"
    "with writer_lock(Path(sys.argv[1]), wait=False, slug='toy'):\n"
    "    print('locked', flush=True); sys.stdin.readline()\n"
)
HANG_GUARD_S = 120  # fails a test that would otherwise hang; not a speed check
QUERIES = ("greet", "iteration function", "backoff delay", "shout text upper")
REINDEXES = 5

Answer = tuple[tuple[str, int, int, str, str], ...]


def engine(home: Home, *args: str, wait: bool = True) -> subprocess.Popen[bytes]:
    """An ``engine`` CLI process (fake embedder) on ``home``."""
    return subprocess.Popen(
        [sys.executable, "-c", ENGINE, *args],
        cwd=PROJECT_ROOT,
        env={"ENGINE_HOME": str(home.root), "PATH": "/usr/bin:/bin", "HOME": str(home.root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(process: subprocess.Popen[bytes]) -> tuple[int, Any]:
    out, err = process.communicate(timeout=HANG_GUARD_S)
    assert b"Traceback" not in err, err.decode()
    return process.returncode, orjson.loads(out)


@pytest.fixture
def lock_holder(home: Home, indexed: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the repository's writer lock until its stdin gets a line."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(home.repo_dir("toy"))],
        cwd=PROJECT_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield holder
        if holder.poll() is None:
            holder.kill()


def release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.wait(HANG_GUARD_S) == 0


def test_second_writer_is_refused_with_a_clear_message(
    home: Home, indexed: Path, lock_holder: subprocess.Popen[str]
) -> None:
    write(indexed, "toy/late.py", "def late_function():\n    pass\n")
    for args in (("reindex", "toy"), ("index", str(indexed), "--name", "toy")):
        code, data = finish(engine(home, *args, "--json"))
        assert code == 1
        assert data["error"] == (
            "toy is being indexed by another process — wait for it to finish, or pass --wait "
            "to queue behind it"
        )
    # Readers are not blocked by the writer.
    code, data = cli("query", "toy", "greet")
    assert code == 0 and data["results"][0]["filePath"] == "toy/greeter.py"
    release(lock_holder)
    code, data = finish(engine(home, "reindex", "toy", "--json"))
    assert code == 0 and data["filesAdded"] == 1


def test_wait_queues_behind_the_writer(
    home: Home, indexed: Path, lock_holder: subprocess.Popen[str]
) -> None:
    write(indexed, "toy/late.py", "def late_function():\n    pass\n")
    waiting = engine(home, "reindex", "toy", "--wait", "--json")
    try:
        # Still queued while the lock is held (it cannot finish before the release).
        with pytest.raises(subprocess.TimeoutExpired):
            waiting.wait(2)
    finally:
        release(lock_holder)
    code, data = finish(waiting)
    assert code == 0
    assert data["filesAdded"] == 1
    assert search(home, "late_function")[0][0][0] == "toy/late.py"


def test_many_writers_at_once_serialise_and_converge(
    home: Home, indexed: Path, tmp_path: Path
) -> None:
    write(indexed, "toy/late.py", "def late_function():\n    pass\n")
    waiting = [engine(home, "reindex", "toy", "--wait", "--json") for _ in range(3)]
    impatient = [engine(home, "reindex", "toy", "--json") for _ in range(2)]
    for process in waiting:
        assert finish(process)[0] == 0
    for process in impatient:
        code, data = finish(process)
        assert code == 0 or "being indexed by another process" in data["error"]
    clean = Home(tmp_path / "clean")
    index(clean, indexed)
    assert stored_chunks(home) == stored_chunks(clean)
    for text in QUERIES:
        assert_same_ranking(home, clean, text)


# --- readers during a stream of reindexes --------------------------------------------------


def answer(searcher: Searcher, text: str) -> tuple[Answer, tuple[str, ...]]:
    response = searcher.search(text, limit=5)
    results = tuple(
        (r.path, r.start_line, r.end_line, r.symbol_name, r.content) for r in response.results
    )
    return results, tuple(response.warnings)


def generation_answers(generation: Path) -> dict[str, tuple[Answer, tuple[str, ...]]]:
    """What a searcher over exactly this generation answers, opened like ``open_index``."""
    manifest = read_manifest(generation)
    store = ChunkStore.open_readonly(generation / STORE_FILE)
    signals: dict[str, Signal] = {}
    for name, plugin in registry.plugins().items():
        state = manifest.signal(name)
        if state.ready:
            signals[name] = plugin.open(generation / name, state.meta, OpenOptions(Path()))
    searcher = Searcher("toy", store, signals)
    try:
        return {text: answer(searcher, text) for text in QUERIES}
    finally:
        searcher.close()
        store.close()


@dataclass
class Seen:
    generation: str
    query: str
    results: Answer
    warnings: tuple[str, ...]
    during_write: bool


class Readers:
    """Reader threads searching until stopped; every answer and error is recorded."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.stop = threading.Event()
        self.writing = threading.Event()
        self.seen: list[Seen] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._guard, args=(self._like_cli,), daemon=True),
            threading.Thread(target=self._guard, args=(self._like_server,), daemon=True),
        ]

    def _guard(self, loop: Any) -> None:
        try:
            loop()
        except Exception as exc:  # recorded, so the test fails with the reason
            with self._lock:
                self.errors.append(f"{type(exc).__name__}: {exc}")

    def _record(self, generation: Path, text: str, got: tuple[Answer, tuple[str, ...]]) -> None:
        with self._lock:
            self.seen.append(Seen(generation.name, text, *got, self.writing.is_set()))

    def _like_cli(self) -> None:
        options = OpenOptions(home=self.home.root)
        while not self.stop.is_set():
            for text in QUERIES:
                opened = open_index(self.home, "toy", registry.plugins(), options)
                try:
                    self._record(opened.generation, text, answer(opened.searcher, text))
                finally:
                    opened.close()

    def _like_server(self) -> None:
        # Without the freshness check: the files change under the readers on purpose, and
        # each answer is compared with its generation's, not with the disk.
        cache = IndexCache(self.home, registry.plugins(), files=None)
        try:
            while not self.stop.is_set():
                for text in QUERIES:
                    with cache.use("toy") as opened:
                        self._record(opened.generation, text, answer(opened.searcher, text))
        finally:
            cache.close()

    def __enter__(self) -> Readers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(HANG_GUARD_S)
            assert not thread.is_alive(), "a reader hung"


def change(repo: Path, iteration: int) -> None:
    write(
        repo,
        f"toy/iteration_{iteration}.py",
        f"def iteration_{iteration}_function():\n    return {iteration}\n",
    )
    old = repo / "toy" / f"iteration_{iteration - 2}.py"
    if old.exists():
        old.unlink()
    write(
        repo,
        "toy/retry.py",
        f"def backoff_delay(attempt):\n    return attempt * {iteration}\n" * (1 + iteration % 3),
    )


def test_readers_see_only_whole_generations_while_writers_publish(
    home: Home, indexed: Path
) -> None:
    expected: dict[str, dict[str, tuple[Answer, tuple[str, ...]]]] = {}

    def learn_published() -> None:
        # Every generation on disk now (the fast one and the complete one of the last run).
        for generation in home.repo_dir("toy").glob("gen-*"):
            if generation.name not in expected and (generation / "manifest.json").is_file():
                expected[generation.name] = generation_answers(generation)

    learn_published()
    writer = indexer(home)
    with Readers(home) as readers:
        for iteration in range(REINDEXES):
            change(indexed, iteration)
            readers.writing.set()
            writer.reindex("toy")
            readers.writing.clear()
            learn_published()
            assert not readers.errors
    assert readers.errors == []
    assert any(s.during_write for s in readers.seen), "no search ran during a reindex"
    generations = {s.generation for s in readers.seen}
    assert len(generations) > 1, "the readers never saw a new generation"
    for seen in readers.seen:
        assert seen.warnings == ()
        assert (seen.results, seen.warnings) == expected[seen.generation][seen.query], seen
    final = current_generation(home.repo_dir("toy"))
    assert final is not None
    # The last two iterations' functions tie; exact ties are ordered by path.
    assert any(
        result[3].endswith(f"iteration_{REINDEXES - 1}_function")
        for result in expected[final.name]["iteration function"][0][:2]
    )


def test_a_search_runs_while_the_writer_lock_is_held(home: Home, indexed: Path) -> None:
    with writer_lock(home.repo_dir("toy"), wait=False, slug="toy"):
        assert search(home, "greet")[0][0][0] == "toy/greeter.py"
        code, data = cli("status", "toy")
        assert code == 0 and data["files"] == 2


@pytest.mark.parametrize("stall_in", ["load_manifest", "open_signal"])
def test_reader_that_stalls_while_writers_collect_its_generation(
    home: Home, indexed: Path, monkeypatch: pytest.MonkeyPatch, stall_in: str
) -> None:
    """Two reindexes publish and collect the generation a slow reader was about to open."""
    import engine.index.opening

    writer = indexer(home)
    stalled = [False]

    def two_reindexes() -> None:
        if not stalled[0]:
            stalled[0] = True
            for iteration in range(2):
                change(indexed, iteration)
                writer.reindex("toy")

    if stall_in == "load_manifest":
        real_load = engine.index.opening.load_manifest

        def slow_load(entry: Any) -> Any:
            found = real_load(entry)
            two_reindexes()
            return found

        monkeypatch.setattr(engine.index.opening, "load_manifest", slow_load)
        plugins = registry.plugins()
    else:
        plugins = registry.plugins()
        lexical = plugins["lexical"]

        def slow_open(directory: Path, meta: Any, options: OpenOptions) -> Signal:
            two_reindexes()
            return lexical.open(directory, meta, options)

        plugins["lexical"] = type(lexical)(lexical.name, lexical.make_builder, slow_open)
    published = current_generation(home.repo_dir("toy"))
    opened = open_index(home, "toy", plugins, OpenOptions(home=home.root))
    try:
        assert stalled[0]
        assert published is not None and not published.exists()  # it was collected
        assert opened.generation == current_generation(home.repo_dir("toy"))
        assert opened.warnings == []
        response = opened.searcher.search("iteration function", limit=1)
        assert response.results[0].symbol_name.endswith("iteration_1_function")
    finally:
        opened.close()
