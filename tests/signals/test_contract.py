"""The contract every registered signal keeps (engine/signal.py), checked through the
registry as the indexer and the searcher use it: build from a repository, search, update
incrementally from the previous generation, and take empty input.

The conftest's registry hands the vector signal the hashing fake embedder, so no real model
loads here; a test marked ``real_model`` would get the bundled one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.chunking.chunker import chunk_file
from engine.languages import detect_language
from engine.signal import IndexOptions, OpenOptions, Signal, SignalPlugin
from engine.types import Chunk, Definition, Hit, Query
from signals import registry
from tests.fakes import FakeChunkSource, Generations

# Collected from the real registry (importing it loads no backend); each test then takes
# the plugin from the registry the conftest installed.
SIGNAL_NAMES = list(registry.plugins())

HTTP_V1 = '''"""Requests and responses."""


def parse_request_body(request):
    """Decode the JSON body of an HTTP request."""
    return json.loads(request.body)


class ResponseWriter:
    def write_status(self, code):
        return f"HTTP/1.1 {code}"
'''

HTTP_V2 = '''"""Requests and responses."""


def send_compressed_response(payload):
    """Gzip a payload and send it."""
    return gzip.compress(payload)


class ResponseWriter:
    def write_status(self, code):
        return f"HTTP/1.1 {code}"
'''

DATABASE = '''def connect_database(url):
    """Open a connection to the SQLite database at url."""
    return sqlite3.connect(url)
'''


@dataclass
class Repo:
    """A repository on disk and its chunks, with ids given the way the store gives them."""

    root: Path
    chunks: dict[int, Chunk]
    definitions: list[Definition]
    next_id: int = 1

    def write(self, path: str, text: str) -> list[Chunk]:
        """Write ``path`` and chunk it; return its new chunks (old ones stay until dropped)."""
        (self.root / path).parent.mkdir(parents=True, exist_ok=True)
        (self.root / path).write_text(text, encoding="utf-8")
        found = chunk_file(path, text, detect_language(path))
        added = []
        for draft in found.chunks:
            chunk = Chunk.from_draft(self.next_id, draft)
            self.chunks[chunk.id] = chunk
            added.append(chunk)
            self.next_id += 1
        self.definitions = [d for d in self.definitions if d.path != path] + found.definitions
        return added

    def drop(self, ids: Sequence[int]) -> None:
        for chunk_id in ids:
            del self.chunks[chunk_id]

    def ids_of(self, path: str) -> list[int]:
        return sorted(i for i, c in self.chunks.items() if c.path == path)

    def id_named(self, name: str) -> int:
        (chunk_id,) = [i for i, c in self.chunks.items() if c.name == name]
        return chunk_id

    def source(self) -> FakeChunkSource:
        return FakeChunkSource(self.chunks.values())


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    root = tmp_path / "repo"
    root.mkdir()
    return Repo(root, {}, [])


@pytest.fixture(params=SIGNAL_NAMES)
def plugin(request: pytest.FixtureRequest) -> SignalPlugin:
    return registry.plugins()[request.param]


class Opened:
    """Opens generations of one signal and closes whatever it opened (the symbol signal
    holds a SQLite connection, which the test run treats as a leak if left open)."""

    def __init__(self, plugin: SignalPlugin, home: Path) -> None:
        self.plugin = plugin
        self.home = home
        self.signals: list[Signal] = []

    def open(self, directory: Path, generations: Generations) -> Signal:
        signal = self.plugin.open(directory, generations.previous_meta, OpenOptions(self.home))
        self.signals.append(signal)
        return signal

    def close(self) -> None:
        for signal in self.signals:
            close = getattr(signal, "close", None)
            if close is not None:
                close()


@pytest.fixture
def opened(plugin: SignalPlugin, home: Path) -> Iterator[Opened]:
    signals = Opened(plugin, home)
    yield signals
    signals.close()


def _generations(repo: Repo, plugin: SignalPlugin) -> Generations:
    generations = Generations(repo.root.parent / "index", signal=plugin.name)
    generations.root.mkdir()
    return generations


def _build_first(plugin: SignalPlugin, home: Path, repo: Repo, generations: Generations) -> Path:
    builder = plugin.make_builder(IndexOptions(home=home))
    assert builder.name == plugin.name
    directory, report = generations.build(
        builder,
        repo.source(),
        list(repo.chunks.values()),
        definitions=repo.definitions,
    )
    assert report.ready, report.problems
    return directory


def _chunk_ids(hits: Sequence[Hit]) -> list[int]:
    return [h.chunk_id for h in hits if h.chunk_id is not None]


def test_a_signal_is_registered_under_its_own_name(plugin: SignalPlugin) -> None:
    assert plugin.name in SIGNAL_NAMES
    assert plugin.make_builder(IndexOptions(home=Path("unused"))).name == plugin.name


def test_build_then_search_finds_the_chunk_by_what_it_does(
    plugin: SignalPlugin, home: Path, repo: Repo, opened: Opened
) -> None:
    repo.write("net/http.py", HTTP_V1)
    repo.write("db/conn.py", DATABASE)
    generations = _generations(repo, plugin)
    signal = opened.open(_build_first(plugin, home, repo, generations), generations)

    assert signal.name == plugin.name
    assert signal.warning == ""
    hits = signal.search(Query("parse_request_body"), 5)
    assert hits, "a definition's own name must find it"
    assert _chunk_ids(hits)[0] == repo.id_named("parse_request_body")
    assert set(_chunk_ids(hits)) <= set(repo.chunks)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True), "best first"
    assert len(signal.search(Query("parse_request_body"), 1)) <= 1


def test_an_incremental_update_finds_new_code_and_forgets_removed_code(
    plugin: SignalPlugin, home: Path, repo: Repo, opened: Opened
) -> None:
    repo.write("net/http.py", HTTP_V1)
    repo.write("db/conn.py", DATABASE)
    generations = _generations(repo, plugin)
    first = opened.open(_build_first(plugin, home, repo, generations), generations)
    old_body = repo.id_named("parse_request_body")

    # net/http.py changes: its old chunks go, its new ones come, db/conn.py is untouched.
    removed = repo.ids_of("net/http.py")
    repo.drop(removed)
    added = repo.write("net/http.py", HTTP_V2)
    builder = plugin.make_builder(IndexOptions(home=home))
    directory, report = generations.build(
        builder, repo.source(), added, removed_ids=removed, definitions=repo.definitions
    )
    assert report.ready, report.problems
    second = opened.open(directory, generations)

    new_hits = _chunk_ids(second.search(Query("send_compressed_response"), 5))
    assert new_hits[0] == repo.id_named("send_compressed_response")
    assert not set(_chunk_ids(second.search(Query("parse_request_body"), 10))) & set(removed)
    assert set(_chunk_ids(second.search(Query("connect_database"), 10))) <= set(repo.chunks)
    assert _chunk_ids(second.search(Query("connect_database"), 5))[0] == repo.id_named(
        "connect_database"
    )
    # The previous generation is left as it was: readers may still be using it.
    assert _chunk_ids(first.search(Query("parse_request_body"), 5))[0] == old_body


def test_an_empty_repository_builds_and_finds_nothing(
    plugin: SignalPlugin, home: Path, repo: Repo, opened: Opened
) -> None:
    generations = _generations(repo, plugin)
    signal = opened.open(_build_first(plugin, home, repo, generations), generations)
    assert signal.search(Query("parse_request_body"), 5) == []


def test_an_empty_or_wordless_query_finds_nothing_and_raises_nothing(
    plugin: SignalPlugin, home: Path, repo: Repo, opened: Opened
) -> None:
    repo.write("net/http.py", HTTP_V1)
    generations = _generations(repo, plugin)
    signal = opened.open(_build_first(plugin, home, repo, generations), generations)
    for text in ("", "   ", "()[]{}"):
        hits = signal.search(Query(text), 5)
        assert set(_chunk_ids(hits)) <= set(repo.chunks)
    assert signal.search(Query(""), 5) == []


def test_an_update_that_changes_nothing_keeps_every_answer(
    plugin: SignalPlugin, home: Path, repo: Repo, opened: Opened
) -> None:
    repo.write("net/http.py", HTTP_V1)
    repo.write("db/conn.py", DATABASE)
    generations = _generations(repo, plugin)
    first = opened.open(_build_first(plugin, home, repo, generations), generations)
    directory, report = generations.build(
        plugin.make_builder(IndexOptions(home=home)),
        repo.source(),
        [],
        definitions=repo.definitions,
    )
    assert report.ready, report.problems
    second = opened.open(directory, generations)
    for text in ("parse_request_body", "connect_database", "write_status"):
        assert _chunk_ids(second.search(Query(text), 5)) == _chunk_ids(first.search(Query(text), 5))
