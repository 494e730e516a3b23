"""A folder swapped for a link to outside the repository between the walk and the read.

The walk saw a real folder ``toy/``; by the time its files are read, ``toy`` is a link to a
folder outside the repository holding a file of the same name. Nothing outside the root may
enter the index under the folder's name (issue 15, defect 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.index.home import Home
from engine.indexing import indexer as indexer_module
from engine.indexing.source_file import NotRead, SourceText, read_source
from engine.indexing.walk import walk
from tests.reliability.conftest import index, stored_chunks, write

SECRET = "def outside_secret_function():\n    return 'from outside the repository'\n"


def swap_for_link(folder: Path, target: Path) -> None:
    folder.rename(folder.with_name(folder.name + "_tmp"))
    folder.symlink_to(target, target_is_directory=True)


def test_a_folder_swapped_for_an_outside_link_after_the_walk_is_not_followed(
    home: Home, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    write(outside, "greeter.py", SECRET)
    write(outside, "retry.py", SECRET)

    def walk_then_swap(root: Path, **kwargs: Any) -> Any:
        walked = walk(root, **kwargs)
        swap_for_link(root / "toy", outside)
        return walked

    monkeypatch.setattr(indexer_module, "walk", walk_then_swap)
    report = index(home, repo, full=True)
    texts = [text for *_, text in stored_chunks(home)]
    assert not any("outside_secret_function" in text for text in texts)
    assert report.skipped.get("symlink") == 2, report.skipped


def test_read_source_beneath_refuses_every_linked_folder(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(tmp_path / "outside", "deep/secret.py", SECRET)
    (root / "a").mkdir(parents=True)
    (root / "a" / "b").symlink_to(tmp_path / "outside" / "deep", target_is_directory=True)
    outcome = read_source(root / "a" / "b" / "secret.py", max_file_bytes=10_000, beneath=root)
    assert isinstance(outcome, NotRead) and outcome.reason == "symlink", outcome
    # Without the guard the same path reads the outside file, which is what the race exploited.
    assert isinstance(
        read_source(root / "a" / "b" / "secret.py", max_file_bytes=10_000), SourceText
    )
    assert read_source(
        tmp_path / "outside" / "deep" / "secret.py", max_file_bytes=10_000, beneath=root
    ) == NotRead("symlink-outside", "not inside the repository")
    write(root, "a/real.py", "x = 1\n")
    assert isinstance(
        read_source(root / "a" / "real.py", max_file_bytes=10_000, beneath=root), SourceText
    )
    assert (root / "a" / "b").is_symlink()
