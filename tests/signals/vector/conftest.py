"""Fixtures of the vector signal's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import Generations


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def generations(tmp_path: Path) -> Generations:
    return Generations(tmp_path / "index")
