from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.errors import IndexBusy, RepoNotFound, UsageError
from engine.index.generations import current_generation, writer_lock
from engine.index.home import Home
from engine.index.manifest import read_manifest
from engine.index.opening import open_index
from engine.index.store import STORE_FILE, ChunkStore
from engine.indexing.indexer import Indexer
from engine.signal import (
    BuildJob,
    BuildReport,
    IndexOptions,
    OpenOptions,
    SignalBuilder,
    SignalPlugin,
)
from engine.types import Chunk, ChunkDraft, Definition
from signals import registry

GREETER = '''"""Greeting helpers."""


class Greeter:
    """Greets people."""

    def __init__(self, name: str) -> None:
        self.name = name

    def greet(self) -> str:
        return f"Hello {self.name}"


def shout(text: str) -> str:
    return text.upper()
'''


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "toy"
    write(root, "toy/greeter.py", GREETER)
    write(root, "toy/util.py", "def add(a, b):\n    return a + b\n")
    write(root, "README.md", "# Toy\n\nA toy project.\n\n## Usage\n\nCall greet.\n")
    write(root, "node_modules/dep/index.js", "module.exports = 1\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


def indexer(home: Home) -> Indexer:
    return Indexer(home, registry.plugins(), IndexOptions(home=home.root))


def search(home: Home, text: str) -> list[tuple[str, int, int, str]]:
    opened = open_index(home, "toy", registry.plugins(), OpenOptions(home=home.root))
    try:
        results = opened.searcher.search(text, limit=5).results
        return [(r.path, r.start_line, r.end_line, r.symbol_name) for r in results]
    finally:
        opened.close()


def test_index_then_query(repo: Path, home: Home) -> None:
    report = indexer(home).index("toy", repo)
    assert report.files_indexed == 3
    assert report.skipped["ignored-dir"] == 1
    assert report.skipped["binary"] == 1
    assert search(home, "greet")[0] == (
        "toy/greeter.py",
        10,
        11,
        "Greeter.greet",
    )  # short; qualifiedName is full
    manifest = read_manifest(current_generation(home.repo_dir("toy")))  # type: ignore[arg-type]
    assert manifest.files == 3
    assert manifest.signal("lexical").ready


def test_incremental_reindex_touches_only_changed_files(repo: Path, home: Home) -> None:
    idx = indexer(home)
    idx.index("toy", repo)
    write(repo, "toy/util.py", "def multiply(a, b):\n    return a * b\n")
    (repo / "README.md").unlink()
    write(repo, "toy/new.py", "def fresh():\n    pass\n")
    report = idx.reindex("toy")
    assert (report.files_added, report.files_changed, report.files_removed) == (1, 1, 1)
    assert report.files_unchanged == 1
    assert not report.full_rebuild
    assert search(home, "multiply")[0][0] == "toy/util.py"
    assert not [r for r in search(home, "add") if r[3] == "toy.util.add"]
    assert all(r[0] != "README.md" for r in search(home, "usage toy project"))


def test_unchanged_content_with_new_mtime_is_not_rechunked(repo: Path, home: Home) -> None:
    idx = indexer(home)
    idx.index("toy", repo)
    os.utime(repo / "toy/util.py", ns=(1, 1))
    report = idx.reindex("toy")
    assert report.files_changed == 0 and report.chunks_added == 0
    again = idx.reindex("toy")
    assert again.up_to_date


def test_incremental_equals_clean_build(repo: Path, home: Home, tmp_path: Path) -> None:
    idx = indexer(home)
    idx.index("toy", repo)
    write(repo, "toy/util.py", "def multiply(a, b):\n    return a * b\n")
    idx.reindex("toy")
    clean = Home(tmp_path / "clean")
    indexer(clean).index("toy", repo)
    for text in ("multiply", "greet", "toy project usage"):
        assert search(home, text) == search(clean, text)


def test_one_indexer_makes_its_builders_and_loads_the_model_once(repo: Path, home: Home) -> None:
    """engine watch keeps one Indexer for all its updates: none of them may make the signal
    builders again, which reloaded the embedding model on every update (issue 8)."""
    from signals.vector.builder import VectorBuilder
    from signals.vector.embedder import HashingEmbedder
    from signals.vector.loader import LoadedModel
    from tests.fakes import fake_loader

    made: Counter[str] = Counter()
    loads: list[tuple[Any, ...]] = []
    load: Callable[..., LoadedModel] = fake_loader(HashingEmbedder(64))

    def counting_load(*args: Any) -> LoadedModel:
        loads.append(args)
        return load(*args)

    def counted(plugin: SignalPlugin) -> SignalPlugin:
        def make(options: IndexOptions) -> SignalBuilder:
            made[plugin.name] += 1
            if plugin.name == "vector":
                return VectorBuilder(options, load_model=counting_load)
            return plugin.make_builder(options)

        return SignalPlugin(plugin.name, make, plugin.open)

    plugins = {name: counted(plugin) for name, plugin in registry.plugins().items()}
    idx = Indexer(home, plugins, IndexOptions(home=home.root))
    idx.index("toy", repo)
    for n in range(3):
        write(repo, "toy/util.py", f"def add(a, b):\n    return a + b + {n}\n")
        assert idx.reindex("toy").chunks_added == 1
    assert made == dict.fromkeys(plugins, 1)
    assert len(loads) == 1


def test_bad_input(tmp_path: Path, home: Home, repo: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        indexer(home).index("toy", tmp_path / "nope")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        indexer(home).index("toy", tmp_path / "file.txt")
    with pytest.raises(RepoNotFound, match="engine index PATH --name ghost"):
        indexer(home).reindex("ghost")
    indexer(home).index("toy", repo)
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(UsageError, match="already registered"):
        indexer(home).index("toy", other)


def test_second_writer_is_refused(repo: Path, home: Home) -> None:
    indexer(home).index("toy", repo)
    with writer_lock(home.repo_dir("toy"), wait=False, slug="toy"), pytest.raises(IndexBusy):
        indexer(home).reindex("toy")


def test_failed_build_keeps_previous_generation(
    repo: Path, home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = indexer(home)
    idx.index("toy", repo)
    before = current_generation(home.repo_dir("toy"))
    write(repo, "toy/util.py", "def multiply(a, b):\n    return a * b\n")

    def crash(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("engine.indexing.indexer.publish", crash)
    with pytest.raises(KeyboardInterrupt):
        idx.reindex("toy")
    assert current_generation(home.repo_dir("toy")) == before
    assert before is not None
    newest = max(p.name for p in home.repo_dir("toy").glob("gen-*"))
    assert newest == before.name  # the unpublished generation was removed
    assert search(home, "add")[0][3] == "add"


def test_definition_outranks_a_mention_when_the_query_names_it(home: Home, tmp_path: Path) -> None:
    root = tmp_path / "mentions"
    write(
        root,
        "app/uses.py",
        "from app.core import render_page\n\n\ndef main():\n"
        "    # render_page is called twice: render_page, render_page\n"
        "    return render_page() + render_page()\n",
    )
    write(root, "app/core.py", "def render_page():\n    return '<html>'\n")
    indexer(home).index("toy", root)
    assert search(home, "render_page")[0][:2] == ("app/core.py", 1)


def first_lines(drafts: Sequence[ChunkDraft]) -> list[str]:
    """A ChunkAnalyzer for the recording plugin below."""
    return [d.text.split("\n")[0] for d in drafts]


class RecordingBuilder:
    name = "recording"
    slow = False

    def __init__(self, *, read_definitions: bool = False) -> None:
        self.jobs: list[tuple[BuildJob, list[Chunk]]] = []  # each job and its source's chunks
        self.read_definitions = read_definitions
        self.definitions: list[str] = []

    def build(self, job: BuildJob) -> BuildReport:
        self.jobs.append((job, list(job.source.iter_chunks())))
        if self.read_definitions:
            self.definitions = [d.qualified_name for d in job.definitions]
        return BuildReport(ready=True)


def test_builders_get_the_analyses_of_the_chunks_just_chunked(repo: Path, home: Home) -> None:
    builder = RecordingBuilder()
    plugin = SignalPlugin(
        "recording", lambda options: builder, registry.plugins()["lexical"].open, first_lines
    )
    idx = Indexer(home, {"recording": plugin}, IndexOptions(home=home.root))
    idx.index("toy", repo)
    job, source_chunks = builder.jobs[-1]
    assert len(job.added) > 3
    assert job.analyses == {c.id: c.text.split("\n")[0] for c in job.added}
    # The first build's source serves its chunks from memory, exactly as the store holds them.
    assert source_chunks == list(job.added)
    generation = current_generation(home.repo_dir("toy"))
    assert generation is not None
    store = ChunkStore.open_readonly(generation / STORE_FILE)
    assert list(store.iter_chunks()) == source_chunks
    store.close()

    write(repo, "toy/extra.py", "def extra():\n    return 3\n")
    idx.reindex("toy")
    job, source_chunks = builder.jobs[-1]
    assert [c.path for c in job.added] == ["toy/extra.py"]
    assert job.analyses == {job.added[0].id: "def extra():"}
    assert {c.path for c in source_chunks} == {
        "toy/greeter.py",
        "toy/util.py",
        "toy/extra.py",
        "README.md",
    }


@pytest.mark.parametrize("read", [False, True])
def test_definitions_are_read_from_the_store_only_when_a_builder_uses_them(
    repo: Path, home: Home, monkeypatch: pytest.MonkeyPatch, read: bool
) -> None:
    reads: list[str] = []
    real = ChunkStore.definitions

    def counted(store: ChunkStore) -> list[Definition]:
        reads.append(store.path.name)
        return real(store)

    monkeypatch.setattr(ChunkStore, "definitions", counted)
    builder = RecordingBuilder(read_definitions=read)
    plugin = SignalPlugin("recording", lambda options: builder, registry.plugins()["lexical"].open)
    Indexer(home, {"recording": plugin}, IndexOptions(home=home.root)).index("toy", repo)
    assert len(reads) == (1 if read else 0)
    if read:
        assert builder.definitions == [
            "Greeter",
            "Greeter.__init__",
            "Greeter.greet",
            "shout",
            "add",
        ]


class SettingsBuilder(RecordingBuilder):
    """A builder whose recorded settings differ from what it was asked for."""

    def __init__(self, changed: bool) -> None:
        super().__init__()
        self.changed = changed
        self.asked: list[dict[str, Any]] = []

    def build(self, job: BuildJob) -> BuildReport:
        super().build(job)
        return BuildReport(ready=True, meta={"setting": "as built"})

    def settings_changed(self, previous_meta: Any) -> bool:
        self.asked.append(dict(previous_meta))
        return self.changed


@pytest.mark.parametrize("changed", [True, False])
def test_new_builder_settings_update_an_index_with_no_changed_file(
    repo: Path, home: Home, changed: bool
) -> None:
    builder = SettingsBuilder(changed)
    plugin = SignalPlugin("recording", lambda options: builder, registry.plugins()["lexical"].open)
    idx = Indexer(home, {"recording": plugin}, IndexOptions(home=home.root))
    idx.index("toy", repo)
    again = idx.reindex("toy")
    assert again.up_to_date is not changed
    assert builder.asked[-1] == {"setting": "as built"}  # asked against what it recorded
    assert len(builder.jobs) == (2 if changed else 1)


def test_a_file_that_crashes_the_parser_is_skipped_with_its_reason(
    repo: Path, home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A segfault of a native parser on one file used to end the whole run, and with it
    engine watch; now that file is recorded as not indexed, and not tried again until it
    changes."""
    import functools

    import engine.indexing.indexer
    from engine.indexing.parallel_chunking import CRASHED, chunk_files
    from engine.indexing.status import repo_status
    from tests.engine.indexing.test_parallel_chunking import crashing

    chunked: list[str] = []

    def recording(tasks: Sequence[Any], **kwargs: Any) -> Any:
        chunked.extend(t.path for t in tasks)
        return functools.partial(chunk_files, chunker=crashing)(tasks, **kwargs)

    monkeypatch.setattr(engine.indexing.indexer, "chunk_files", recording)
    write(repo, "toy/crash_me.py", "def never_indexed():\n    pass\n")
    idx = indexer(home)
    report = idx.index("toy", repo)
    assert report.files_indexed == 3
    assert report.skipped[CRASHED] == 1
    [problem] = [p for p in report.problems if p.startswith("toy/crash_me.py")]
    assert "SIGSEGV" in problem
    assert search(home, "greet")[0][0] == "toy/greeter.py"
    assert repo_status(home, "toy")["skipped"][CRASHED] == 1
    assert repo_status(home, "toy")["changedSinceBuild"]["total"] == 0

    chunked.clear()
    write(repo, "toy/util.py", "def multiply(a, b):\n    return a * b\n")
    again = idx.reindex("toy")
    # The crashing file is not tried again while unchanged (the others, written moments
    # before the first run, are racy and hashed again: see engine.indexing.freshness).
    assert "toy/util.py" in chunked
    assert "toy/crash_me.py" not in chunked
    assert again.skipped[CRASHED] == 1
    assert search(home, "multiply")[0][0] == "toy/util.py"
