from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import IndexBusy, IndexCorrupt, IndexIncompatible
from engine.index.generations import (
    FORMAT_VERSION,
    MANIFEST,
    collect_garbage,
    current_generation,
    next_generation,
    publish,
    read_manifest,
    write_json_atomic,
    writer_lock,
)


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
    assert read_manifest(second)["format_version"] == FORMAT_VERSION


def test_garbage_collection_keeps_recent_and_drops_unpublished(tmp_path: Path) -> None:
    gens = []
    for _ in range(5):
        gens.append(make(tmp_path))
        publish(tmp_path, gens[-1])
    leftover = make(tmp_path)  # a crashed writer's generation
    collect_garbage(tmp_path)
    assert not leftover.exists()
    assert [g.exists() for g in gens] == [False, False, True, True, True]


def test_incompatible_and_corrupt_manifests(tmp_path: Path) -> None:
    gen = next_generation(tmp_path)
    write_json_atomic(gen / MANIFEST, {"format_version": FORMAT_VERSION + 1})
    with pytest.raises(IndexIncompatible):
        read_manifest(gen)
    (gen / MANIFEST).write_text("{not json")
    with pytest.raises(IndexCorrupt):
        read_manifest(gen)
    (tmp_path / "CURRENT").write_text("gen-000042\n")
    with pytest.raises(IndexCorrupt, match="missing"):
        current_generation(tmp_path)


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
