"""``engine query`` (and ``defs``) answer true of the files on disk: moved code relocated,
edited or deleted code marked stale with a warning, in JSON and in the text listing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main

GREETER = (
    "def greet(name):\n    return f'Hello {name}'\n\n\ndef shout(text):\n    return text.upper()\n"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGINE_HOME", str(tmp_path / "home"))
    root = tmp_path / "toy-repo"
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "greeter.py").write_text(GREETER)
    result = CliRunner().invoke(main, ["index", str(root)])
    assert result.exit_code == 0, result.output
    return root


def query_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["query", "toy-repo", *args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert isinstance(data, dict)
    return data


def query_text(*args: str) -> str:
    result = CliRunner().invoke(main, ["query", "toy-repo", *args])
    assert result.exit_code == 0, result.output
    return result.output  # stdout and stderr (the warning)


def greet_result(data: dict[str, Any]) -> dict[str, Any]:
    found = next(r for r in data["results"] if r["symbolName"].endswith("greet"))
    assert isinstance(found, dict)
    return found


def test_an_unchanged_repository_has_no_freshness_fields(repo: Path) -> None:
    data = query_json("greet")
    assert "warning" not in data
    assert all("stale" not in r and "moved" not in r for r in data["results"])


def test_five_lines_added_on_top_relocates_the_result(repo: Path) -> None:
    (repo / "toy" / "greeter.py").write_text("# one\n# two\n# three\n# four\n# five\n" + GREETER)
    data = query_json("greet")
    first = greet_result(data)
    assert (first["startLine"], first["endLine"]) == (6, 7)
    assert first["moved"] is True and "stale" not in first
    assert first["content"] == "def greet(name):\n    return f'Hello {name}'"
    assert "toy/greeter.py (moved)" in data["warning"]
    assert "engine reindex toy-repo" in data["warning"]

    text = query_text("greet")
    assert "toy/greeter.py:6-7" in text
    assert "moved: the file changed" in text
    assert "     6 def greet(name):" in text


def test_an_edited_chunk_is_stale_in_json_and_text(repo: Path) -> None:
    (repo / "toy" / "greeter.py").write_text(GREETER.replace("Hello", "Goodbye"))
    data = query_json("greet")
    first = greet_result(data)
    assert first["stale"] is True and "moved" not in first
    assert (first["startLine"], first["endLine"]) == (1, 2)  # as indexed, and labelled so
    assert "toy/greeter.py (stale)" in data["warning"]
    shout = next(r for r in data["results"] if r["symbolName"].endswith("shout"))
    assert "stale" not in shout and "moved" not in shout  # same file, code still in place

    text = query_text("greet")
    assert "toy/greeter.py:1-2 (as indexed)" in text
    assert "stale: the file changed and no longer holds this code" in text
    assert "     ~ def greet(name):" in text  # no line numbers presented as the file's
    assert "warning: 1 file(s) changed on disk" in text


def test_a_deleted_file_is_stale(repo: Path) -> None:
    (repo / "toy" / "greeter.py").unlink()
    data = query_json("greet")
    assert all(r["stale"] is True for r in data["results"])
    assert "toy/greeter.py (deleted)" in data["warning"]


def test_after_reindex_the_answer_is_current_again(repo: Path) -> None:
    (repo / "toy" / "greeter.py").write_text("\n\n" + GREETER)
    assert greet_result(query_json("greet"))["moved"] is True
    assert CliRunner().invoke(main, ["reindex", "toy-repo"]).exit_code == 0
    data = query_json("greet")
    first = greet_result(data)
    assert (first["startLine"], "moved" in first, "warning" in data) == (3, False, False)


def test_defs_locations_are_checked_too(repo: Path) -> None:
    (repo / "toy" / "greeter.py").write_text("# one\n# two\n" + GREETER)
    result = CliRunner().invoke(main, ["defs", "toy-repo", "greet", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    first = data["results"][0]
    assert (first["startLine"], first["line"], first["moved"]) == (3, 3, True)
    assert "toy/greeter.py (moved)" in data["warning"]
