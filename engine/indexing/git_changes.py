"""What git knows about changes in a work tree since an indexed commit, or None when it can't say.

``engine reindex`` still walks the tree (the walk applies the engine's ignore rules, which
git does not know), but a file whose size or mtime changed need not be read when git vouches
that its content is what was indexed. That is what a checkout, a rebase, a stash or a
``touch`` leaves behind, and reading and hashing every such file is most of what an update
costs after one.

Each update takes a ``snapshot`` before it reads any file (HEAD, the paths not clean, the
time) and records it in the manifest. The next update vouches for a path when it is tracked,
unchanged between the recorded commit and HEAD, clean now, was clean at the snapshot, and
its indexed copy was last modified before the snapshot (a file edited during the previous
update may have been read with content the snapshot did not see). Every other path, and
every file git does not track (untracked, or ignored by git but indexed by the engine), is
checked by size, mtime and hash as before.

Every function answers None ("can't tell, walk and hash as before") when the root is not the
top of a git work tree, git is missing or fails, the commit is unknown (a shallow clone, a
rewritten history), or the tree has submodules (git reports a submodule as one path, not the
files changed inside it).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine.index.manifest import Manifest

GIT_TIMEOUT_S = 20.0
MAX_DIRTY_PATHS = 5_000  # more than this is not worth recording: the next update walks and hashes
# A file modified this close to a snapshot (or after it) may have been read with content the
# snapshot did not see; file system timestamps are coarser than the clock.
SNAPSHOT_SLACK_NS = 2_000_000_000


def _git(root: Path, args: Sequence[str]) -> bytes | None:
    """stdout of ``git -C root args``, or None when git is missing or fails."""
    # No optional locks: a read-only status must never take index.lock from a user's git.
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _paths(output: bytes) -> set[str]:
    return {p.decode("utf-8", "surrogateescape") for p in output.split(b"\0") if p}


def _usable(root: Path) -> bool:
    """True when ``root`` is the top of a git work tree without submodules."""
    if not (root / ".git").exists() or (root / ".gitmodules").exists():
        return False
    top = _git(root, ["rev-parse", "--show-toplevel"])
    if top is None:
        return False
    try:
        return Path(top.decode("utf-8", "surrogateescape").strip()).resolve() == root.resolve()
    except OSError:
        return False


def _work_tree_changes(root: Path) -> set[str] | None:
    """Paths modified, staged, deleted or untracked (not ignored) in the work tree."""
    output = _git(root, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"])
    if output is None:
        return None
    # Each record is "XY path"; with --no-renames there are no second "from" paths.
    return {record[3:] for record in _paths(output) if len(record) > 3}


def changed_paths_since(root: Path, commit: str) -> set[str] | None:
    """Paths that may differ from ``commit``: changed in commits since, or in the work tree."""
    if not commit or not _usable(root):
        return None
    work_tree = _work_tree_changes(root)
    if work_tree is None:
        return None
    return _changed(root, commit, "HEAD", work_tree)


def _changed(root: Path, commit: str, head: str, work_tree: set[str]) -> set[str] | None:
    committed = _git(root, ["diff", "--name-only", "-z", "--no-renames", commit, head, "--"])
    if committed is None:
        return None  # the commit is gone (shallow clone, rewritten history) or git failed
    return _paths(committed) | work_tree


@dataclass(frozen=True, slots=True)
class GitSnapshot:
    """The work tree's git state, taken before an update reads any file."""

    commit: str
    dirty: list[str]  # paths not clean at that moment
    taken_ns: int  # wall clock (time.time_ns) just before git was asked

    def recorded_in(self, manifest: Manifest) -> Manifest:
        """``manifest`` noting this snapshot, for the next update's ``vouched_since``."""
        return replace(
            manifest,
            source_commit=self.commit,
            source_dirty=tuple(self.dirty),
            source_checked_ns=self.taken_ns,
        )


def snapshot(root: Path) -> GitSnapshot | None:
    taken_ns = time.time_ns()
    if not _usable(root):
        return None
    head = _git(root, ["rev-parse", "HEAD"])
    dirty = _work_tree_changes(root)
    if head is None or dirty is None or len(dirty) > MAX_DIRTY_PATHS:
        return None
    return GitSnapshot(head.decode().strip(), sorted(dirty), taken_ns)


@dataclass(frozen=True, slots=True)
class Vouched:
    """Paths whose content git vouches is unchanged since the previous update read them."""

    paths: set[str]
    before_ns: int  # only files last modified before this were read with the vouched content

    def covers(self, path: str, indexed_mtime_ns: int) -> bool:
        return path in self.paths and indexed_mtime_ns < self.before_ns


def vouched_since(root: Path, manifest: Manifest, now: GitSnapshot | None) -> Vouched | None:
    """What git vouches for since the update that wrote ``manifest``; None: hash as before.

    A path is vouched for when it is tracked, unchanged between the manifest's commit and
    ``now``'s, clean now, and was clean when the manifest's update took its snapshot.
    """
    dirty, taken_ns = manifest.source_dirty, manifest.source_checked_ns
    if now is None or not manifest.source_commit:
        return None
    if dirty is None or taken_ns is None:
        return None  # built before snapshots were recorded, or outside git
    changed = _changed(root, manifest.source_commit, now.commit, set(now.dirty))
    tracked = _git(root, ["ls-files", "-z"])
    if changed is None or tracked is None:
        return None
    return Vouched(_paths(tracked) - changed - set(dirty), taken_ns - SNAPSHOT_SLACK_NS)
