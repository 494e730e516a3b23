"""``engine query --all`` with one damaged index answers from the others (issue 15)."""

from __future__ import annotations

from pathlib import Path

from engine.index.generations import POINTER
from engine.index.home import Home
from tests.reliability.conftest import GREETER, cli, index, write


def test_query_all_answers_from_the_healthy_repositories(
    home: Home, indexed: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    write(other, "other/greeter.py", GREETER)
    index(home, other, "other")
    (home.repo_dir("toy") / POINTER).write_bytes(b"\xff\xfe")
    code, data = cli("query", "--all", "greet")
    assert code == 0, data
    assert data["results"], data
    assert all(r["repo"] == "other" for r in data["results"]), data["results"]
    assert "toy was not searched" in data["warning"], data
    code, data = cli("query", "toy", "greet")
    assert code == 1 and "--full" in data["error"], data
