"""Where a cluster build's index files live: a shared folder laid out like ``$ENGINE_HOME``.

``--cluster-store DIR`` holds ``repos/<slug>/{repo.json, CURRENT, gen-*}`` exactly as a local
home does, so a search node (or ``ENGINE_HOME=DIR``) opens it as it opens its own, after
copying a generation to local disk: SQLite is never opened over the shared path. Two more
folders serve the build: ``staging/<run>/`` receives the workers' fast generations (each
copied under a hidden name and renamed when whole) and is removed after the run, and
``cluster-index.lock`` keeps one coordinator per store.

Publishing keeps the local rules (engine/index/generations.py): the generation is copied in
under a hidden name, flushed, renamed to the next ``gen-NNNNNN`` and only then named by
``CURRENT``, written last with one ``os.replace``. A coordinator killed at any point leaves
either the previous generation current or the new one complete; the next run removes the
leftovers (hidden copies, numbered folders newer than ``CURRENT``, the staging folder).

An object store would carry the same layout through ``pyarrow.fs`` (S3, GCS, Azure; Ray Data
already brings pyarrow), with ``CURRENT`` as the object written last. Not built: a shared path
is what this session's clusters have.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from engine.errors import IndexBusy, UsageError
from engine.index.generations import (
    collect_garbage,
    fsync_dir,
    fsync_tree,
    generation_name,
    generation_number,
    publish,
    writer_lock,
)
from engine.index.home import Home

STAGING = "staging"
STORE_LOCK = "cluster-index.lock"
_HIDDEN = ".incoming-"


def copy_tree(source: Path, target: Path) -> None:
    """Copy a generation's files (never hard links: the target may be another disk), whole or
    not at all: into a hidden sibling first, flushed, then renamed to ``target``."""
    partial = target.with_name(f"{_HIDDEN}{target.name}-{uuid.uuid4().hex[:8]}")
    try:
        shutil.copytree(source, partial)
        fsync_tree(partial)
        partial.rename(target)
        fsync_dir(target.parent)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


class SharedStore:
    """The shared folder of a cluster build (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = Home(root)

    def check(self) -> None:
        """A usable store folder: created if missing, refused when it is a file."""
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(f"--cluster-store {self.root} is a file — give a folder")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"--cluster-store {self.root} cannot be created ({exc.strerror or exc})"
            ) from None

    @contextlib.contextmanager
    def coordinator(self) -> Iterator[None]:
        """Be the one coordinator of this store; clear what an interrupted run left staged."""
        self.check()
        fd = os.open(self.root / STORE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise IndexBusy(
                    f"another cluster build is writing {self.root} — wait for it to finish"
                ) from None
            shutil.rmtree(self.root / STAGING, ignore_errors=True)
            yield
        finally:
            os.close(fd)

    def staging(self, run_id: str) -> Path:
        return self.root / STAGING / run_id

    def stage(self, run_id: str, slug: str, generation: Path) -> Path:
        """A worker's fast generation, copied whole into this run's staging folder."""
        folder = self.staging(run_id)
        folder.mkdir(parents=True, exist_ok=True)
        # A retried task (its node died) stages under another name: never half of two.
        target = folder / f"{slug}-{uuid.uuid4().hex[:8]}"
        copy_tree(generation, target)
        return target

    def publish(self, slug: str, repo_root: Path, generation: Path) -> str:
        """Copy a finished generation in and make it current; its name in the store."""
        entry = self.home.register(slug, repo_root)
        with writer_lock(entry.directory, wait=True, slug=slug):
            collect_garbage(entry.directory)
            for leftover in entry.directory.glob(f"{_HIDDEN}*"):
                shutil.rmtree(leftover, ignore_errors=True)
            numbers = [
                generation_number(p.name)
                for p in entry.directory.iterdir()
                if p.is_dir() and p.name.startswith("gen-") and p.name[4:].isdigit()
            ]
            target = entry.directory / generation_name(max(numbers, default=0) + 1)
            copy_tree(generation, target)
            publish(entry.directory, target)  # CURRENT, written last
            collect_garbage(entry.directory)
        return target.name
