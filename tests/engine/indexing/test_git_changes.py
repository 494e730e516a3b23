from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import engine.indexing.indexer
from engine.index.generations import current_generation
from engine.index.home import Home
from engine.index.manifest import Manifest, read_manifest
from engine.index.store import STORE_FILE, ChunkStore
from engine.indexing.git_changes import (
    SNAPSHOT_SLACK_NS,
    changed_paths_since,
    snapshot,
    vouched_since,
)
from engine.indexing.indexer import Indexer
from engine.indexing.parallel_chunking import ChunkedFile, FileTask, chunk_files
from engine.signal import IndexOptions
from signals import registry

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

AN_HOUR_AGO_S = time.time() - 3600


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def write(root: Path, rel: str, text: str, *, old: bool = True) -> None:
    """Write a file; ``old`` dates it an hour back, as a file indexed long ago would be."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if old:
        os.utime(path, (AN_HOUR_AGO_S, AN_HOUR_AGO_S))


def touch(root: Path, rel: str) -> None:
    os.utime(root / rel)  # now: what a checkout of the same content leaves


def function(name: str) -> str:
    return f"def {name}():\n    return {name!r}\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for name in "abcde":
        write(root, f"{name}.py", function(name))
    write(root, ".gitignore", "*.log\n*.gen.py\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    return root


def test_not_a_git_work_tree_cannot_tell(tmp_path: Path) -> None:
    write(tmp_path, "a.py", function("a"))
    assert changed_paths_since(tmp_path, "HEAD") is None
    assert snapshot(tmp_path) is None


def test_committed_and_work_tree_changes(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD")
    write(repo, "b.py", function("b2"))
    git(repo, "commit", "-qam", "b")
    write(repo, "c.py", function("c2"))  # modified, not staged
    write(repo, "new dir/d é.py", function("d"))  # untracked, odd name
    write(repo, "debug.log", "ignored\n")
    (repo / "a.py").unlink()
    assert changed_paths_since(repo, first) == {"a.py", "b.py", "c.py", "new dir/d é.py"}
    assert changed_paths_since(repo, git(repo, "rev-parse", "HEAD")) == {
        "a.py",
        "c.py",
        "new dir/d é.py",
    }


def test_cannot_tell_for_unknown_commits_subfolders_and_submodules(repo: Path) -> None:
    assert changed_paths_since(repo, "f" * 40) is None
    assert changed_paths_since(repo, "") is None
    (repo / "sub").mkdir()
    assert changed_paths_since(repo / "sub", "HEAD") is None
    write(repo, ".gitmodules", '[submodule "x"]\n\tpath = x\n')
    assert changed_paths_since(repo, "HEAD") is None


def test_vouched_paths_exclude_changes_and_what_was_dirty(repo: Path) -> None:
    write(repo, "e.py", function("e2"))  # dirty when the index is built
    then = snapshot(repo)
    assert then is not None and then.dirty == ["e.py"]
    manifest = then.recorded_in(Manifest())
    write(repo, "e.py", function("e"))  # reverted since: clean now, but indexed dirty
    write(repo, "b.py", function("b2"))  # changed since
    touch(repo, "a.py")
    vouched = vouched_since(repo, manifest, snapshot(repo))
    assert vouched is not None
    assert vouched.paths == {".gitignore", "a.py", "c.py", "d.py"}
    old_mtime = int(AN_HOUR_AGO_S * 1e9)
    assert vouched.covers("a.py", old_mtime)
    # A file modified near or after the snapshot may have been read with other content.
    assert not vouched.covers("a.py", then.taken_ns - SNAPSHOT_SLACK_NS // 2)
    assert vouched_since(repo, replace(manifest, source_commit="f" * 40), snapshot(repo)) is None
    assert vouched_since(repo, Manifest(source_commit=then.commit), snapshot(repo)) is None


# --- the indexer's git path --------------------------------------------------------------


@pytest.fixture
def read_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path the indexer hands to the reader and chunker."""
    seen: list[str] = []
    real = chunk_files

    def recording(tasks: Sequence[FileTask], **kwargs: Any) -> Iterator[ChunkedFile]:
        seen.extend(t.path for t in tasks)
        return real(tasks, **kwargs)

    monkeypatch.setattr(engine.indexing.indexer, "chunk_files", recording)
    return seen


def index(home: Home, root: Path, *, full: bool = False) -> engine.indexing.indexer.IndexReport:
    return Indexer(home, registry.plugins(), IndexOptions(home=home.root)).index(
        "repo", root, full=full
    )


def contents(home: Home) -> tuple[dict[str, str], list[tuple[str, int, int, str]]]:
    generation = current_generation(home.get("repo").directory)
    assert generation is not None
    store = ChunkStore.open_readonly(generation / STORE_FILE)
    try:
        files = {path: r.content_hash for path, r in store.files().items()}
        chunks = sorted((c.path, c.start_line, c.end_line, c.text) for c in store.iter_chunks())
    finally:
        store.close()
    return files, chunks


def test_git_path_and_walk_path_converge(repo: Path, tmp_path: Path, read_paths: list[str]) -> None:
    write(repo, ".engineignore", "!keep.gen.py\n")  # the engine indexes what git ignores
    write(repo, "keep.gen.py", function("keep"))
    write(repo, "e.py", function("e_dirty"))  # dirty while indexed
    home = Home(tmp_path / "home")
    index(home, repo)
    manifest = read_manifest(current_generation(home.get("repo").directory))  # type: ignore[arg-type]
    assert manifest.source_dirty == (".engineignore", "e.py")

    write(repo, "a.py", function("a2"))
    git(repo, "commit", "-qm", "a", "--", "a.py")
    write(repo, "b.py", function("b2"))  # modified, not committed
    touch(repo, "c.py")  # same content, new mtime
    touch(repo, "d.py")
    git(repo, "checkout", "-q", "e.py")  # reverted to the committed content
    write(repo, "keep.gen.py", function("keep2"))  # only the walk can see this one
    write(repo, "new.py", function("new"))
    write(repo, "debug.log", "ignored\n")
    (repo / ".gitignore").unlink()
    write(repo, ".gitignore", "*.log\n*.gen.py\n")  # same rules, rewritten
    read_paths.clear()
    report = index(home, repo)

    # Vouched for by git, so never read: the touched files.
    assert sorted(read_paths) == ["a.py", "b.py", "e.py", "keep.gen.py", "new.py"]
    assert report.files_changed == 4 and report.files_added == 1

    fresh = Home(tmp_path / "fresh")
    index(fresh, repo, full=True)
    assert contents(home) == contents(fresh)
    assert contents(home)[0]["e.py"] == contents(fresh)[0]["e.py"]


def test_without_a_recorded_snapshot_every_touched_file_is_read(
    repo: Path, tmp_path: Path, read_paths: list[str]
) -> None:
    shutil.move(repo / ".git", tmp_path / "git-away")  # indexed as a plain folder
    home = Home(tmp_path / "home")
    index(home, repo)
    shutil.move(tmp_path / "git-away", repo / ".git")
    touch(repo, "c.py")
    read_paths.clear()
    index(home, repo)
    assert read_paths == ["c.py"]  # no snapshot to trust: hashed as before

    time.sleep(0.01)
    touch(repo, "c.py")  # the last update recorded a snapshot, but c.py was read just now
    touch(repo, "d.py")
    read_paths.clear()
    index(home, repo)
    assert read_paths == ["c.py"]
