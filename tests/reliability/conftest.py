"""Fixtures for the reliability tests: an index home, a small repository, and ways to use them.

Everything goes through the real code paths (``Indexer``, ``open_index``, ``Searcher``, the
click CLI) with the fake-embedder registry that ``tests/conftest.py`` installs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from engine.index.home import Home
from engine.index.manifest import read_manifest
from engine.index.opening import open_index
from engine.index.store import STORE_FILE, ChunkStore
from engine.indexing.indexer import Indexer, IndexReport
from engine.search.searcher import Searcher
from engine.signal import IndexOptions, OpenOptions, Signal
from signals import registry

GREETER = '''"""Greeting helpers."""


class Greeter:
    """Greets people."""

    def greet(self, name: str) -> str:
        return f"Hello {name}"


def shout(text: str) -> str:
    return text.upper()
'''

RETRY = """def backoff_delay(attempt: int) -> float:
    return min(30.0, 2.0 ** attempt)


def retry_request(send, attempts: int = 3):
    for attempt in range(attempts):
        try:
            return send()
        except OSError:
            continue
"""

ResultKey = tuple[str, int, int, str]


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """An empty index home, also named by ENGINE_HOME for the CLI."""
    root = tmp_path / "home"
    monkeypatch.setenv("ENGINE_HOME", str(root))
    return Home(root)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, "toy/greeter.py", GREETER)
    write(root, "toy/retry.py", RETRY)
    return root


def indexer(home: Home) -> Indexer:
    return Indexer(home, registry.plugins(), IndexOptions(home=home.root))


def index(home: Home, root: Path, slug: str = "toy", *, full: bool = False) -> IndexReport:
    return indexer(home).index(slug, root, full=full)


def search(
    home: Home, text: str, slug: str = "toy", *, limit: int = 5
) -> tuple[list[ResultKey], list[str]]:
    """The top results as (path, start, end, symbol), and the response's warnings."""
    opened = open_index(home, slug, registry.plugins(), OpenOptions(home=home.root))
    try:
        response = opened.searcher.search(text, limit=limit)
    finally:
        opened.close()
    results = [(r.path, r.start_line, r.end_line, r.symbol_name) for r in response.results]
    return results, response.warnings


def ranking(
    home: Home,
    text: str,
    slug: str = "toy",
    *,
    limit: int = 20,
    signals: list[str] | None = None,
) -> list[tuple[Any, ResultKey]]:
    """The results in order, each with its raw scores per signal."""
    opened = open_index(home, slug, registry.plugins(), OpenOptions(home=home.root))
    try:
        results = opened.searcher.search(text, limit=limit, signals=signals).results
    finally:
        opened.close()
    return [
        (
            tuple((c.signal, round(c.raw_score, 6)) for c in r.contributions),
            (r.path, r.start_line, r.end_line, r.symbol_name),
        )
        for r in results
    ]


def generation_ranking(
    generation: Path, text: str, *, limit: int = 20, signals: list[str] | None = None
) -> list[tuple[Any, ResultKey]]:
    """``ranking`` of one given generation (published or not), opened like ``open_index``."""
    manifest = read_manifest(generation)
    store = ChunkStore.open_readonly(generation / STORE_FILE)
    opened: dict[str, Signal] = {}
    for name, plugin in registry.plugins().items():
        state = manifest.signal(name)
        if state.ready and (signals is None or name in signals):
            opened[name] = plugin.open(generation / name, state.meta, OpenOptions(Path()))
    searcher = Searcher("toy", store, opened)
    try:
        results = searcher.search(text, limit=limit).results
    finally:
        searcher.close()
        store.close()
    return [
        (
            tuple((c.signal, round(c.raw_score, 6)) for c in r.contributions),
            (r.path, r.start_line, r.end_line, r.symbol_name),
        )
        for r in results
    ]


def assert_same_ranking(
    home: Home,
    reference: Home,
    text: str,
    slug: str = "toy",
    *,
    limit: int = 20,
    signals: list[str] | None = None,
) -> None:
    """``home`` ranks ``text`` as ``reference`` does, up to the order inside exact ties.

    An incremental build numbers chunks differently from a clean one, and exact score ties
    come back in chunk-id order; so results the reference scores identically (same raw score
    from every signal) may swap. A tie cut off by ``limit`` is only compared by size.
    """
    got = [key for _, key in ranking(home, text, slug, limit=limit, signals=signals)]
    want = ranking(reference, text, slug, limit=limit, signals=signals)
    assert len(got) == len(want), (text, got, want)
    groups: list[tuple[Any, list[ResultKey]]] = []
    for signature, key in want:
        if groups and groups[-1][0] == signature:
            groups[-1][1].append(key)
        else:
            groups.append((signature, [key]))
    if len(want) == limit and groups:
        groups.pop()
    position = 0
    for _, keys in groups:
        assert set(got[position : position + len(keys)]) == set(keys), (text, got, want)
        position += len(keys)


def stored_chunks(home: Home, slug: str = "toy") -> list[tuple[str, int, int, str]]:
    """Every chunk of the published generation as (path, start, end, text), sorted."""
    from engine.index.generations import current_generation

    generation = current_generation(home.repo_dir(slug))
    assert generation is not None
    store = ChunkStore.open_readonly(generation / STORE_FILE)
    try:
        return sorted((c.path, c.start_line, c.end_line, c.text) for c in store.iter_chunks())
    finally:
        store.close()


def cli(*args: str) -> tuple[int, Any]:
    """Run the CLI in-process with ``--json``: the exit code and the parsed stdout.

    Fails the test when stdout is not one JSON document (a traceback, a stray print).
    """
    result = CliRunner().invoke(main, [*args, "--json"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"the CLI raised {result.exception!r}") from result.exception
    try:
        data = json.loads(result.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"not one JSON document on stdout: {result.output!r}") from exc
    return result.exit_code, data


@pytest.fixture
def indexed(home: Home, repo: Path) -> Iterator[Path]:
    """The toy repository, indexed as ``toy``."""
    index(home, repo)
    yield repo
