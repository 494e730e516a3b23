from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import RepoNotFound, UsageError
from engine.index.home import Home, engine_home, slug_from_folder, validate_slug


@pytest.mark.parametrize("slug", ["toy", "my-repo", "a.b_c", "x" * 64, "0day"])
def test_valid_slugs(slug: str) -> None:
    assert validate_slug(slug) == slug


@pytest.mark.parametrize(
    "slug", ["", "../etc", "a/b", "..", "Upper", "-dash", "x" * 65, "a..b", "sp ace", "nul\x00"]
)
def test_invalid_slugs(slug: str) -> None:
    with pytest.raises(UsageError, match="invalid repository name"):
        validate_slug(slug)


def test_slug_from_folder() -> None:
    assert slug_from_folder(Path("/x/My Project!")) == "my-project"
    assert slug_from_folder(Path("/x/...")) == "repo"


def test_engine_home_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ENGINE_HOME", str(tmp_path))
    assert engine_home() == tmp_path


def test_register_get_list(tmp_path: Path) -> None:
    home = Home(tmp_path)
    assert home.list() == []
    home.register("toy", Path("/src/toy"))
    assert home.get("toy").root == Path("/src/toy")
    assert [e.slug for e in home.list()] == ["toy"]
    with pytest.raises(RepoNotFound, match="engine index PATH --name nope"):
        home.get("nope")
