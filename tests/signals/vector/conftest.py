"""Fixtures of the vector signal's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import Generations
from tests.signals.vector.embedding_servers import EmbeddingServer, running


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def generations(tmp_path: Path) -> Generations:
    return Generations(tmp_path / "index")


@pytest.fixture
def openai_server() -> Iterator[EmbeddingServer]:
    """A fake OpenAI-compatible embeddings API on 127.0.0.1 (embedding_servers.py)."""
    with running(EmbeddingServer("openai")) as server:
        yield server


@pytest.fixture
def voyage_server() -> Iterator[EmbeddingServer]:
    """A fake Voyage embeddings API on 127.0.0.1 (embedding_servers.py)."""
    with running(EmbeddingServer("voyage")) as server:
        yield server
