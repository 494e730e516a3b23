"""``ENGINE_HOME`` set to something odd (issue 15, rough edges).

Inside the repository it indexes, the home is skipped by the walk (it carries a
``CACHEDIR.TAG``), so the repository can be up to date; set but empty, or naming a file, it
is a clear error rather than a silent fallback or a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.index.home import Home
from tests.reliability.conftest import cli, index, stored_chunks


def test_a_home_inside_the_repository_is_not_indexed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = Home(repo / "indexes")  # not a name the walk skips by itself
    monkeypatch.setenv("ENGINE_HOME", str(inside.root))
    index(inside, repo)
    assert all(not path.startswith("indexes/") for path, *_ in stored_chunks(inside))
    again = index(inside, repo)
    assert again.up_to_date, again
    code, status = cli("status", "toy")
    assert code == 0, status
    assert status["changedSinceBuild"]["total"] == 0, status


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_engine_home_is_an_error(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ENGINE_HOME", value)
    code, data = cli("repos")
    assert code == 1
    assert "ENGINE_HOME is set but empty" in data["error"]


def test_an_engine_home_that_is_a_file_is_an_error(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    monkeypatch.setenv("ENGINE_HOME", str(afile))
    for command in (("repos",), ("index", str(repo), "--name", "toy"), ("query", "toy", "x")):
        code, data = cli(*command)
        assert code == 1, (command, data)
        assert "is not a folder" in data["error"], (command, data)
    assert afile.read_text() == "not a folder"
