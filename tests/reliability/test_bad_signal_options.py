"""``engine index --model`` of a folder that is no model, ``--scip`` of a file that is no SCIP
index (issue 15): exit 1 with the fix, before anything is written. Before, the index was built
with the vector signal off, or without the SCIP file, and the command reported success."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.index.home import Home
from scip import scip_pb2
from tests.reliability.conftest import cli, index, write


def _not_a_model(tmp_path: Path) -> Path:
    folder = tmp_path / "not-a-model"
    write(folder, "config.json", "{}")
    write(folder, "README.md", "no weights here\n")
    return folder


def _scip_without_documents(tmp_path: Path) -> Path:
    empty = scip_pb2.Index()
    empty.metadata.tool_info.name = "hand-written"
    path = tmp_path / "empty.scip"
    path.write_bytes(empty.SerializeToString())
    return path


def _random_bytes(tmp_path: Path) -> Path:
    path = tmp_path / "random.scip"
    path.write_bytes(os.urandom(4096))
    return path


BAD_OPTIONS = {
    "model-without-weights": ("--model", _not_a_model, "--model: "),
    "scip-of-random-bytes": ("--scip", _random_bytes, "--scip: "),
    "scip-without-documents": ("--scip", _scip_without_documents, "holds no documents"),
}


@pytest.mark.parametrize("case", list(BAD_OPTIONS))
def test_a_bad_model_or_scip_file_is_an_error_before_anything_is_written(
    home: Home, repo: Path, tmp_path: Path, case: str
) -> None:
    option, make, message = BAD_OPTIONS[case]
    code, data = cli("index", str(repo), "--name", "toy", option, str(make(tmp_path)))
    assert code == 1
    assert message in data["error"]
    assert "--model <folder>" in data["error"] or "leave --scip out" in data["error"]
    assert not home.root.exists() or home.list() == []


@pytest.mark.skipif(not Path("/etc").is_dir(), reason="needs /etc")
def test_model_etc_is_an_error(home: Home, repo: Path) -> None:
    code, data = cli("index", str(repo), "--model", "/etc")
    assert code == 1
    assert "/etc holds no model weights" in data["error"]


@pytest.mark.parametrize("case", list(BAD_OPTIONS))
def test_a_bad_option_leaves_an_existing_index_as_it_was(
    home: Home, repo: Path, tmp_path: Path, case: str
) -> None:
    before = index(home, repo).generation
    write(repo, "toy/later.py", "def later():\n    pass\n")
    option, make, _ = BAD_OPTIONS[case]
    code, _data = cli("index", str(repo), "--name", "toy", option, str(make(tmp_path)))
    assert code == 1
    code, status = cli("status", "toy")
    assert status["generation"] == before
