from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from engine.errors import IndexCorrupt, IndexIncompatible
from engine.index.generations import FORMAT_VERSION, MANIFEST, next_generation, write_json_atomic
from engine.index.home import Home
from engine.index.manifest import NOT_BUILT, Manifest, parse_manifest, read_manifest
from engine.indexing.indexer import Indexer
from engine.signal import IndexOptions
from signals import registry


def build(tmp_path: Path, *, in_git: bool) -> list[Path]:
    """Index a small repository and update it once; every generation either wrote, in order
    (each run publishes a fast and a slow one)."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "greet.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    (root / "pkg" / "data.bin").write_bytes(b"\x00\x01" * 100)
    if in_git:
        git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(root)]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "first"], check=True)
    home = Home(tmp_path / "home")
    indexer = Indexer(home, registry.plugins(), IndexOptions(home=home.root))
    kept = tmp_path / "kept"  # copies: the update collects the first build's generations
    indexer.index("toy", root)
    shutil.copytree(home.repo_dir("toy"), kept, ignore=shutil.ignore_patterns("*.lock"))
    (root / "pkg" / "more.py").write_text("class Shout:\n    def loud(self):\n        pass\n")
    indexer.reindex("toy")
    shutil.copytree(home.repo_dir("toy"), kept, dirs_exist_ok=True)
    return sorted(p for p in kept.iterdir() if p.name.startswith("gen-"))


@pytest.mark.parametrize("in_git", [True, False])
def test_every_written_manifest_round_trips_to_the_same_json(tmp_path: Path, in_git: bool) -> None:
    generations = build(tmp_path, in_git=in_git)
    assert [g.name for g in generations] == [f"gen-00000{n}" for n in (1, 2, 3, 4)]
    states = set()
    for generation in generations:
        written = orjson.loads((generation / MANIFEST).read_bytes())
        manifest = read_manifest(generation)
        assert manifest.to_json() == written
        states.add(manifest.signal("vector").message)
        assert ("source_dirty" in written) == in_git
    # The first build's fast generation holds the vector signal's static tier; the update's
    # carries the full one forward.
    assert any(s.startswith("fast tier") for s in states) and "updating" in states


def test_fields_read_as_typed_attributes(tmp_path: Path) -> None:
    generation = build(tmp_path, in_git=True)[-1]
    manifest = read_manifest(generation)
    assert (manifest.repo, manifest.files, manifest.skipped["binary"]) == ("toy", 2, 1)
    assert manifest.source_dirty == ("pkg/more.py",)  # untracked when the update began
    assert len(manifest.source_commit) == 40
    lexical = manifest.signal("lexical")
    assert lexical.ready and lexical.synced and lexical.seconds is not None
    assert lexical.meta["documents"] == manifest.chunks
    assert manifest.signal("no-such-signal") == NOT_BUILT


def test_a_minimal_manifest_takes_the_defaults() -> None:
    manifest = parse_manifest({"format_version": FORMAT_VERSION})
    assert manifest == Manifest()
    assert manifest.source_dirty is None and manifest.signals == {}
    # Before slow signals were carried forward, "synced" was not written: it is "ready".
    state = parse_manifest(
        {"format_version": FORMAT_VERSION, "signals": {"lexical": {"ready": True}}}
    ).signal("lexical")
    assert state.synced and state.meta == {} and state.seconds is None


def test_another_format_or_unreadable_json(tmp_path: Path) -> None:
    generation = next_generation(tmp_path)
    write_json_atomic(generation / MANIFEST, {"format_version": FORMAT_VERSION + 1})
    with pytest.raises(IndexIncompatible):
        read_manifest(generation)
    (generation / MANIFEST).write_text("{not json")
    with pytest.raises(IndexCorrupt, match="unreadable"):
        read_manifest(generation)


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"signals": "lexical"}, "signals is a string, not an object"),
        ({"signals": None}, "signals is null, not an object"),
        ({"signals": {"lexical": [1, 2]}}, "signals.lexical is a list, not an object"),
        ({"signals": {"lexical": {"ready": "yes"}}}, "signals.lexical.ready is a string"),
        ({"signals": {"lexical": {"ready": True, "meta": []}}}, "signals.lexical.meta is a list"),
        ({"signals": {"vector": {"message": 3}}}, "signals.vector.message is a number"),
        ({"signals": {"vector": {"seconds": "1"}}}, "signals.vector.seconds is a string"),
        ({"files": "3"}, "files is a string, not a whole number"),
        ({"chunker_version": True}, "chunker_version is a boolean"),
        ({"languages": {"python": "2"}}, "languages.python is a string"),
        ({"problems": "none"}, "problems is a string, not a list of strings"),
        ({"source_dirty": [1]}, "source_dirty is a list, not a list of strings"),
        ({"scanned_at_ns": 1.5}, "scanned_at_ns is a number, not a whole number"),
    ],
)
def test_a_field_of_the_wrong_type_is_corrupt_and_named(
    tmp_path: Path, fields: dict[str, Any], named: str
) -> None:
    generation = next_generation(tmp_path)
    write_json_atomic(generation / MANIFEST, {"format_version": FORMAT_VERSION, **fields})
    with pytest.raises(
        IndexCorrupt, match=re.escape(f"manifest of {generation} is damaged: {named}")
    ):
        read_manifest(generation)


def test_not_an_object_is_corrupt(tmp_path: Path) -> None:
    generation = next_generation(tmp_path)
    write_json_atomic(generation / MANIFEST, [1])
    with pytest.raises(IndexCorrupt, match="it is a list, not an object"):
        read_manifest(generation)
