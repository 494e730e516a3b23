"""Indexed code that carries terminal escape sequences (issue 15): the text listing shows them
escaped, so a file cannot clear the screen or retitle the terminal of whoever searches it.
``--json`` keeps the exact text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from engine.index.home import Home
from tests.reliability.conftest import index, write

HOSTILE = (
    "def wipe_screen():\n"
    '\treturn "\x1b[2J\x1b[H"  # clear\n'
    'TITLE = "\x1b]0;owned\x07"\n'
    'BELL = "\x07\x9b31m"\r\n'
)


@pytest.fixture
def hostile(home: Home, tmp_path: Path) -> Path:
    root = tmp_path / "hostile"
    write(root, "screen.py", HOSTILE)
    index(home, root, "screen")
    return root


@pytest.mark.parametrize(
    "args",
    [
        ("query", "screen", "wipe_screen TITLE BELL"),
        ("context", "screen", "wipe_screen TITLE BELL", "--budget", "500"),
    ],
    ids=["query", "context"],
)
def test_escape_sequences_in_code_are_escaped_in_text_output(
    hostile: Path, args: tuple[str, ...]
) -> None:
    result = CliRunner().invoke(main, list(args), color=True)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "wipe_screen" in out
    for raw in ("\x1b[2J", "\x1b]0;", "\x07", "\x9b"):
        assert raw not in out
    assert "\\x1b[2J" in out and "\\x1b]0;owned\\x07" in out
    assert "\treturn" in out  # a tab is the code's layout, not an escape
    assert "\\r" not in out  # a CRLF line end is a line end


def test_json_keeps_the_exact_code(hostile: Path) -> None:
    result = CliRunner().invoke(main, ["query", "screen", "wipe_screen TITLE", "--json"])
    assert result.exit_code == 0, result.output
    contents = "".join(r["content"] for r in json.loads(result.stdout)["results"])
    assert "\x1b[2J" in contents
