"""A damaged ``CURRENT`` pointer or manifest (issue 15, defect 5 and rough edges).

Whatever sits where the pointer or the manifest should be (bytes that are not text, a
folder, a ``signals`` table that is not a table), every command reports damage with the
``--full`` fix instead of a traceback, and ``engine index ... --full`` always repairs it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from engine.index.generations import MANIFEST, POINTER, current_generation
from engine.index.home import Home
from tests.reliability.conftest import cli


def pointer_not_text(repo_dir: Path) -> None:
    (repo_dir / POINTER).write_bytes(b"\xff\xfe\x80gen-\x00\x01")


def pointer_a_folder(repo_dir: Path) -> None:
    (repo_dir / POINTER).unlink()
    (repo_dir / POINTER / "inside").mkdir(parents=True)


def manifest_field(value: object) -> Callable[[Path], None]:
    def damage(repo_dir: Path) -> None:
        generation = current_generation(repo_dir)
        assert generation is not None
        path = generation / MANIFEST
        data = orjson.loads(path.read_bytes())
        data["signals"] = value
        path.unlink()  # hard-linked into older generations: replace, do not edit in place
        path.write_bytes(orjson.dumps(data))

    return damage


def manifest_a_folder(repo_dir: Path) -> None:
    generation = current_generation(repo_dir)
    assert generation is not None
    (generation / MANIFEST).unlink()
    (generation / MANIFEST).mkdir()


DAMAGES: dict[str, Callable[[Path], None]] = {
    "pointer-not-utf8": pointer_not_text,
    "pointer-a-folder": pointer_a_folder,
    "signals-a-string": manifest_field("lexical"),
    "signals-null": manifest_field(None),
    "signal-state-a-list": manifest_field({"lexical": [1, 2]}),
    "manifest-a-folder": manifest_a_folder,
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_pointer_or_manifest_is_reported_and_full_repairs_it(
    home: Home, indexed: Path, damage: str
) -> None:
    DAMAGES[damage](home.repo_dir("toy"))
    hint = f"engine index {indexed.resolve()} --name toy --full"
    for command in (("query", "toy", "greet"), ("status", "toy"), ("defs", "toy", "greet")):
        code, data = cli(*command)
        assert code == 1, (command, data)
        assert hint in data["error"], (command, data)
    code, data = cli("query", "--all", "greet")
    assert code in (0, 1), data
    code, data = cli("index", str(indexed), "--name", "toy", "--full")
    assert code == 0, data
    code, data = cli("query", "toy", "greet")
    assert code == 0, data
    assert data["results"][0]["filePath"] == "toy/greeter.py"
    shutil.rmtree(home.repo_dir("toy"))
