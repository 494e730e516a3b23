"""Immutable index generations and the atomic pointer that publishes them.

A repository folder holds ``gen-NNNNNN/`` folders and a ``CURRENT`` file naming the published
one. A writer builds a new generation beside the current one and publishes it by replacing
``CURRENT`` with one ``os.replace``; readers open whatever ``CURRENT`` names and so never see a
half-written state. A crash leaves the previous generation published; the next writer deletes
the unpublished leftovers. Old generations are kept for a while (a long-running reader may
still hold one open) and then removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from engine.errors import IndexBusy, IndexCorrupt

FORMAT_VERSION = 1  # of the generation layout and its manifest (engine/index/manifest.py)
POINTER = "CURRENT"
MANIFEST = "manifest.json"
LOCK = "write.lock"
KEEP_GENERATIONS = 3  # the published one plus two older ones for readers still using them
_PREFIX = "gen-"


def generation_name(number: int) -> str:
    return f"{_PREFIX}{number:06d}"


def generation_number(name: str) -> int:
    if not name.startswith(_PREFIX) or not name[len(_PREFIX) :].isdigit():
        raise IndexCorrupt(f"unexpected generation name {name!r}")
    return int(name[len(_PREFIX) :])


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(path: Path) -> None:
    """Flush every file and folder under ``path`` to disk before it is published."""
    for dirpath, _, filenames in os.walk(path):
        for name in filenames:
            fd = os.open(Path(dirpath) / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(dirpath))


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as fh:
        fh.write(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def current_generation(repo_dir: Path) -> Path | None:
    """The published generation's folder, or None when nothing was ever published."""
    pointer = repo_dir / POINTER
    try:
        raw = pointer.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:  # a folder or an unreadable file where the pointer should be
        raise IndexCorrupt(f"{pointer} is unreadable ({exc.strerror or exc})") from None
    try:
        name = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise IndexCorrupt(f"{pointer} does not name a generation (not text)") from None
    generation_number(name)
    path = repo_dir / name
    if not path.is_dir():
        raise IndexCorrupt(f"{repo_dir / POINTER} names {name}, which is missing")
    return path


def next_generation(repo_dir: Path) -> Path:
    """Create and return an empty folder for the next generation."""
    numbers = [
        generation_number(p.name)
        for p in repo_dir.iterdir()
        if p.is_dir() and p.name.startswith(_PREFIX) and p.name[len(_PREFIX) :].isdigit()
    ]
    path = repo_dir / generation_name(max(numbers, default=0) + 1)
    path.mkdir()
    return path


def publish(repo_dir: Path, generation: Path) -> None:
    """Make ``generation`` the current one: flush it, then swap the pointer atomically."""
    fsync_tree(generation)
    fsync_dir(repo_dir)
    tmp = repo_dir / f".{POINTER}.{os.getpid()}.tmp"
    with tmp.open("w") as fh:
        fh.write(generation.name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    pointer = repo_dir / POINTER
    if pointer.is_dir() and not pointer.is_symlink():
        shutil.rmtree(pointer)  # damage in the pointer's place; os.replace cannot overwrite it
    tmp.replace(pointer)
    fsync_dir(repo_dir)


def collect_garbage(repo_dir: Path) -> None:
    """Remove unpublished leftovers (newer than current) and all but the newest old ones.

    Only a writer holding the lock may call this.
    """
    try:
        current = current_generation(repo_dir)
    except IndexCorrupt:
        # A damaged pointer says nothing about which folders are leftovers: keep them all
        # until a build publishes a good generation (this runs again after it).
        return
    current_number = generation_number(current.name) if current else 0
    older: list[Path] = []
    for path in repo_dir.iterdir():
        if not (path.is_dir() and path.name.startswith(_PREFIX)):
            continue
        try:
            number = generation_number(path.name)
        except IndexCorrupt:
            continue
        if number > current_number:
            shutil.rmtree(path, ignore_errors=True)  # a crashed writer's unpublished work
        elif number < current_number:
            older.append(path)
    older.sort(key=lambda p: p.name)
    for path in older[: max(0, len(older) - (KEEP_GENERATIONS - 1))]:
        shutil.rmtree(path, ignore_errors=True)
    for tmp in repo_dir.glob(".*.tmp"):
        tmp.unlink(missing_ok=True)


def link_tree(source: Path, target: Path) -> None:
    """Copy a folder of immutable files by hard-linking them (falls back to copying)."""
    for dirpath, _, filenames in os.walk(source):
        rel = Path(dirpath).relative_to(source)
        (target / rel).mkdir(parents=True, exist_ok=True)
        for name in filenames:
            src = Path(dirpath) / name
            dst = target / rel / name
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)


def writer_busy(repo_dir: Path) -> bool:
    """True while some process holds the repository's writer lock (a build is running)."""
    try:
        fd = os.open(repo_dir / LOCK, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


@contextlib.contextmanager
def writer_lock(repo_dir: Path, *, wait: bool, slug: str) -> Iterator[None]:
    """Hold the repository's single-writer lock; released even when the process dies."""
    repo_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(repo_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            raise IndexBusy(
                f"{slug} is being indexed by another process — wait for it to finish, or pass "
                "--wait to queue behind it"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {time.time():.0f}\n".encode())
        yield
    finally:
        os.close(fd)
