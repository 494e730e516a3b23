"""Ignore files with lines that are not valid patterns (issue 15, defect 2).

Git skips such a line and applies the rest of the file; so does the walk, and every run that
walks (``index``, ``reindex``, ``status``, ``watch``) counts the skipped lines instead of
stopping with a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.index.home import Home
from engine.indexing.walk import walk
from tests.reliability.conftest import cli, index, stored_chunks, write

BAD_LINES = ("!", "\\", "a\\", "[z-a]")


@pytest.mark.parametrize("where", [".gitignore", "toy/.gitignore", ".engineignore"])
@pytest.mark.parametrize("bad", BAD_LINES)
def test_a_bad_ignore_line_is_skipped_and_counted(
    home: Home, repo: Path, where: str, bad: str
) -> None:
    write(repo, where, f"*.log\n{bad}\nretry.py\n")
    write(repo, "toy/noise.log", "ignored\n")
    walked = walk(repo)
    assert [(b.path, b.line_number, b.line) for b in walked.bad_ignore_lines] == [(where, 2, bad)]
    # The file's good lines still apply, before and after the bad one.
    assert {f.path for f in walked.files} >= {"toy/greeter.py"}
    assert "toy/retry.py" not in {f.path for f in walked.files}
    assert "toy/noise.log" not in {f.path for f in walked.files}

    report = index(home, repo)
    assert report.ignore_lines_skipped == 1
    assert any(f"{where}:2" in problem for problem in report.problems), report.problems
    assert {p for p, *_ in stored_chunks(home) if p.endswith(".py")} == {"toy/greeter.py"}


def test_status_and_reindex_survive_a_bad_ignore_line(home: Home, indexed: Path) -> None:
    write(indexed, ".gitignore", "[z-a]\n!\n")
    code, data = cli("status", "toy")
    assert code == 0, data
    code, data = cli("reindex", "toy")
    assert code == 0, data
