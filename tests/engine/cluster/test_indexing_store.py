"""The shared store publishes whole generations only, whatever point a copy dies at (no Ray)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.cluster.indexing_store import SharedStore
from engine.errors import IndexBusy
from engine.index.generations import current_generation


def generation(root: Path, marker: str) -> Path:
    folder = root / marker
    (folder / "lexical").mkdir(parents=True)
    (folder / "chunks.sqlite").write_text(marker)
    (folder / "lexical" / "segment").write_text(marker)
    (folder / "manifest.json").write_text("{}")
    return folder


def test_a_copy_that_dies_midway_publishes_nothing_and_the_next_one_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SharedStore(tmp_path / "store")
    assert store.publish("repo", tmp_path, generation(tmp_path, "one")) == "gen-000001"
    copied: list[str] = []
    real_copy = shutil.copy2

    def dies_after_one_file(src: Any, dst: Any, **kwargs: Any) -> Any:
        if copied:
            raise OSError(28, "No space left on device")
        copied.append(str(src))
        return real_copy(src, dst, **kwargs)

    real_copytree = shutil.copytree

    def copytree(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
        if args:  # copytree's own recursion, which passes copy_function on
            return real_copytree(src, dst, *args, **kwargs)
        return real_copytree(src, dst, copy_function=dies_after_one_file, **kwargs)

    monkeypatch.setattr(shutil, "copytree", copytree)
    with pytest.raises(OSError, match="No space left"):
        store.publish("repo", tmp_path, generation(tmp_path, "two"))
    monkeypatch.undo()

    repo_dir = tmp_path / "store" / "repos" / "repo"
    current = current_generation(repo_dir)
    assert current is not None and current.name == "gen-000001"
    assert (current / "chunks.sqlite").read_text() == "one"
    assert sorted(p.name for p in repo_dir.iterdir() if p.is_dir()) == ["gen-000001"]

    # A coordinator killed between the rename and CURRENT leaves a newer numbered folder.
    shutil.copytree(generation(tmp_path, "killed"), repo_dir / "gen-000002")
    assert store.publish("repo", tmp_path, generation(tmp_path, "three")) == "gen-000002"
    current = current_generation(repo_dir)
    assert current is not None and (current / "lexical" / "segment").read_text() == "three"


def test_one_coordinator_per_store_and_staging_cleared_when_it_starts(tmp_path: Path) -> None:
    store = SharedStore(tmp_path / "store")
    left = store.stage("old-run", "repo", generation(tmp_path, "one"))
    assert left.is_dir()
    with store.coordinator():
        assert not (tmp_path / "store" / "staging").exists()
        with (
            pytest.raises(IndexBusy, match="another cluster build is writing"),
            store.coordinator(),
        ):
            pass


def test_a_store_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(Exception, match="is a file"):
        SharedStore(tmp_path / "file").check()
