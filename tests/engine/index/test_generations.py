from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import IndexBusy, IndexCorrupt
from engine.index.generations import (
    FORMAT_VERSION,
    MANIFEST,
    collect_garbage,
    current_generation,
    next_generation,
    publish,
    write_json_atomic,
    writer_lock,
)
from engine.index.manifest import read_manifest


def make(repo: Path) -> Path:
    gen = next_generation(repo)
    write_json_atomic(gen / MANIFEST, {"format_version": FORMAT_VERSION})
    return gen


def test_publish_switches_pointer(tmp_path: Path) -> None:
    assert current_generation(tmp_path) is None
    first = make(tmp_path)
    publish(tmp_path, first)
    second = make(tmp_path)
    assert current_generation(tmp_path) == first  # unpublished work is invisible
    publish(tmp_path, second)
    assert current_generation(tmp_path) == second
    assert read_manifest(second).format_version == FORMAT_VERSION


def test_a_pointer_naming_a_missing_generation_is_corrupt(tmp_path: Path) -> None:
    (tmp_path / "CURRENT").write_text("gen-000042\n")
    with pytest.raises(IndexCorrupt, match="missing"):
        current_generation(tmp_path)


def test_garbage_collection_keeps_recent_and_drops_unpublished(tmp_path: Path) -> None:
    gens = []
    for _ in range(5):
        gens.append(make(tmp_path))
        publish(tmp_path, gens[-1])
    leftover = make(tmp_path)  # a crashed writer's generation
    collect_garbage(tmp_path)
    assert not leftover.exists()
    assert [g.exists() for g in gens] == [False, False, True, True, True]


def test_single_writer(tmp_path: Path) -> None:
    # flock locks belong to the open file description, so a second open conflicts.
    with (
        writer_lock(tmp_path, wait=False, slug="toy"),
        pytest.raises(IndexBusy, match="--wait"),
        writer_lock(tmp_path, wait=False, slug="toy"),
    ):
        pass
    with writer_lock(tmp_path, wait=False, slug="toy"):
        pass
