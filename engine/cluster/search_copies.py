"""A query node's own copy of a repository's published generation, taken from the shared path.

The shared path is laid out like any index home (``<shared>/repos/<slug>/{repo.json, CURRENT,
gen-*}``; cluster indexing writes CURRENT last). SQLite must never be opened over a network
filesystem, so a shard copies the generation CURRENT names onto its node's own disk and opens
it there, in a home of its own (``<disk>/engine-home``, laid out the same way), through the
same ``open_index`` the CLI uses. A copy is made under a temporary name and renamed into
place, so a crash mid-copy leaves no generation that looks whole; a copy already there (an
actor restarted on the same node) is reused. Pure file work: no Ray.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.errors import RepoNotFound
from engine.index.generations import POINTER, current_generation
from engine.index.home import Home

NODE_DISK_ENV = "ENGINE_NODE_DISK"  # the node's local disk; a temporary folder without it
LOCAL_HOME = "engine-home"


def node_home(disk: str | None = None) -> Home:
    """The index home on this node's local disk (created on first use)."""
    root = Path(disk or os.environ.get(NODE_DISK_ENV) or Path(tempfile.gettempdir()) / "engine")
    home = Home(root / LOCAL_HOME)
    home.repos_dir.mkdir(parents=True, exist_ok=True)
    return home


def shared_pointer(shared: Home, slug: str) -> str:
    """The generation name the shared CURRENT holds ("" when none): one small read, cheap
    enough to do on a timer while queries are answered."""
    try:
        return (shared.repo_dir(slug) / POINTER).read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


@dataclass(frozen=True, slots=True)
class LocalCopy:
    generation: str  # the copied generation's name, e.g. gen-000003
    path: Path  # its folder on the node's disk
    size_bytes: int


def copy_current(shared: Home, local: Home, slug: str) -> LocalCopy:
    """Copy the shared generation CURRENT names to ``local`` and publish it there.

    RepoNotFound when the shared path has no published generation of ``slug``."""
    entry = shared.get(slug)
    source = current_generation(entry.directory)
    if source is None:
        raise RepoNotFound(f"{slug} has no published generation in {shared.root}")
    target_dir = local.repo_dir(slug)
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / source.name
    if not target.is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=f".{source.name}.", dir=target_dir))
        try:
            shutil.copytree(source, tmp, dirs_exist_ok=True)
            try:
                tmp.rename(target)
            except OSError:
                if not target.is_dir():  # another actor on this node renamed first: fine
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    # The registration names the original checkout (results carry no local path); the
    # pointer is written last, as a writer would.
    local.register(slug, entry.root)
    tmp_pointer = target_dir / f".{POINTER}.{os.getpid()}.tmp"
    tmp_pointer.write_text(source.name + "\n", "ascii")
    tmp_pointer.replace(target_dir / POINTER)
    size = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    return LocalCopy(source.name, target, size)


def remove_copy(local: Home, slug: str, generation: str) -> None:
    """Delete a local generation no searcher uses any more (never the one CURRENT names)."""
    directory = local.repo_dir(slug)
    try:
        current = (directory / POINTER).read_text("ascii").strip()
    except OSError:
        current = ""
    if generation and generation != current:
        shutil.rmtree(directory / generation, ignore_errors=True)
