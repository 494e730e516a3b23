"""Loading a benchmark folder and materializing its repositories from a bare snapshot."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from engine.errors import UsageError
from eval.benchmark import BenchmarkError, load_benchmark, materialize
from eval.dataset import Target


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def make_snapshot(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "work"
    (work / "src" / "pkg").mkdir(parents=True)
    (work / "src" / "pkg" / "core.py").write_text("def run():\n    return 1\n")
    (work / "README.md").write_text("outside the benchmark root\n")
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "one")
    revision = git(work, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror" / "acme+tool"
    mirror.parent.mkdir()
    git(tmp_path, "clone", "-q", "--bare", str(work), str(mirror / "repo"))
    return tmp_path / "mirror", revision


def make_benchmark(tmp_path: Path, revision: str) -> Path:
    folder = tmp_path / "bench"
    (folder / "annotations").mkdir(parents=True)
    repos = [
        {
            "name": "tool",
            "language": "python",
            "url": "https://github.com/acme/tool.git",
            "revision": revision,
            "benchmark_root": "src/pkg",
        }
    ]
    (folder / "repos.json").write_bytes(orjson.dumps(repos))
    items = [
        {
            "query": "run it",
            "relevant": ["src/pkg/core.py"],
            "secondary": [],
            "category": "semantic",
        },
        {
            "query": "the run function",
            "relevant": [{"path": "src/pkg/core.py", "start_line": 1, "end_line": 2}],
            "secondary": ["src/pkg/other.py"],
            "category": "symbol",
        },
    ]
    (folder / "annotations" / "tool.json").write_bytes(orjson.dumps(items))
    return folder


def test_load_reads_repositories_queries_and_both_kinds_of_target(tmp_path: Path) -> None:
    folder = make_benchmark(tmp_path, "abc")
    repos, queries = load_benchmark(folder)
    assert [(r.name, r.root) for r in repos] == [("tool", "src/pkg")]
    assert repos[0].repo_path("core.py") == "src/pkg/core.py"
    assert [q.id for q in queries] == ["tool-1", "tool-2"]
    assert queries[1].targets == (Target("src/pkg/core.py", 1, 2), Target("src/pkg/other.py"))


def test_unknown_repositories_and_folders_are_usage_errors(tmp_path: Path) -> None:
    folder = make_benchmark(tmp_path, "abc")
    with pytest.raises(UsageError, match="choose from tool"):
        load_benchmark(folder, ["nope"])
    with pytest.raises(UsageError, match="not a benchmark folder"):
        load_benchmark(tmp_path / "missing")


def test_materialize_extracts_only_the_benchmark_root_once(tmp_path: Path) -> None:
    mirror, revision = make_snapshot(tmp_path)
    repos, _ = load_benchmark(make_benchmark(tmp_path, revision))
    checkouts = tmp_path / "checkouts"
    scope = materialize(repos[0], checkouts, mirror)
    assert scope == checkouts / "tool" / "src" / "pkg"
    assert (scope / "core.py").read_text().startswith("def run")
    assert not (checkouts / "tool" / "README.md").exists()
    assert materialize(repos[0], checkouts, mirror) == scope  # reused, not extracted again
    assert [p.name for p in checkouts.iterdir()] == ["tool"]  # no partial folder left


def test_a_missing_snapshot_or_revision_says_what_to_fetch(tmp_path: Path) -> None:
    mirror, _ = make_snapshot(tmp_path)
    repos, _ = load_benchmark(make_benchmark(tmp_path, "0" * 40))
    with pytest.raises(BenchmarkError, match="fetch the repository again"):
        materialize(repos[0], tmp_path / "checkouts", mirror)
    assert not any((tmp_path / "checkouts").iterdir())
    with pytest.raises(BenchmarkError, match="fetch github:acme/tool"):
        materialize(repos[0], tmp_path / "other", tmp_path / "nowhere")


def test_targets_written_relative_to_the_benchmark_root_are_read_so(tmp_path: Path) -> None:
    folder = make_benchmark(tmp_path, "abc")
    items = [{"query": "run it", "relevant": ["core.py"], "category": "semantic"}]
    (folder / "annotations" / "tool.json").write_bytes(orjson.dumps(items))
    _, queries = load_benchmark(folder)
    assert queries[0].targets == (Target("src/pkg/core.py"),)
