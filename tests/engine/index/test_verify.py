from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.index.generations import current_generation
from engine.index.home import Home
from engine.index.store import STORE_FILE, ChunkStore
from engine.index.verify import verify_chunks
from engine.indexing.indexer import Indexer
from engine.signal import IndexOptions
from signals import registry

GREETER = (
    "def greet(name):\n    return 'Hello ' + name\n\n\n"
    "def shout(text):\n    return text.upper()\n\n\n"
    "class Greeter:\n    def hi(self):\n        return greet('x')\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "greeter.py").write_text(GREETER)
    (root / "pkg" / "util.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "pkg" / "dos.py").write_bytes(b"def dos():\r\n    return 1\r\n")
    return root


@pytest.fixture
def store(repo: Path, tmp_path: Path) -> Iterator[ChunkStore]:
    home = Home(tmp_path / "home")
    Indexer(home, registry.plugins(), IndexOptions(home=home.root)).index("repo", repo)
    generation = current_generation(home.get("repo").directory)
    assert generation is not None
    opened = ChunkStore.open_readonly(generation / STORE_FILE)
    yield opened
    opened.close()


def test_a_fresh_index_has_no_stale_chunks(repo: Path, store: ChunkStore) -> None:
    report = verify_chunks(repo, store, 1000)
    assert report.sampled == store.chunk_count() > 3
    assert report.stale == 0
    assert report.files == 3
    assert not report.reindex_suggested


def test_edited_and_deleted_files_make_chunks_stale(repo: Path, store: ChunkStore) -> None:
    greeter = repo / "pkg" / "greeter.py"
    greeter.write_text(GREETER.replace("text.upper()", "text.upper() + '!'"))
    (repo / "pkg" / "util.py").unlink()
    report = verify_chunks(repo, store, 1000)
    stale = {(s.path, s.start_line, s.reason) for s in report.examples}
    assert ("pkg/greeter.py", 5, "changed") in stale
    assert ("pkg/util.py", 1, "file gone") in stale
    assert not any(path == "pkg/greeter.py" and line == 1 for path, line, _ in stale)
    assert report.stale == len(report.examples) == 2
    assert report.stale_share == 2 / report.sampled
    assert report.reindex_suggested
    data = report.as_json("repo")
    assert data["reindexSuggested"] is True
    assert data["examples"][0]["filePath"] == "pkg/greeter.py"


def test_a_sample_is_a_repeatable_subset(repo: Path, store: ChunkStore) -> None:
    (repo / "pkg" / "util.py").unlink()
    first = verify_chunks(repo, store, 2, seed=7)
    again = verify_chunks(repo, store, 2, seed=7)
    assert first.sampled == 2
    assert first.examples == again.examples and first.stale == again.stale


def test_a_shifted_region_counts_as_changed(repo: Path, store: ChunkStore) -> None:
    greeter = repo / "pkg" / "greeter.py"
    greeter.write_text("import os\n" + GREETER)  # every line moves down by one
    report = verify_chunks(repo, store, 1000)
    assert {s.path for s in report.examples} == {"pkg/greeter.py"}
    assert report.stale >= 3
