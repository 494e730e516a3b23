"""``engine eval --benchmark`` end to end on a tiny benchmark, with the fake-embedder registry."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import eval.benchmark
from cli.main import main
from tests.eval.test_benchmark import git


def tiny_benchmark(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "greeting.py").write_text(
        'class Greeter:\n    """Says hello to a person by name."""\n\n'
        "    def greet(self, name):\n        return f'hello {name}'\n"
    )
    (work / "pkg" / "storage.py").write_text(
        "def save_rows(rows, path):\n    with open(path, 'w') as out:\n"
        "        out.writelines(rows)\n"
    )
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "one")
    revision = git(work, "rev-parse", "HEAD")
    git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        str(work),
        str(tmp_path / "mirror" / "acme+tiny" / "repo"),
    )
    folder = tmp_path / "bench"
    (folder / "annotations").mkdir(parents=True)
    repo = {"name": "tiny", "language": "python", "url": "https://github.com/acme/tiny.git"}
    repo |= {"revision": revision, "benchmark_root": "pkg"}
    (folder / "repos.json").write_bytes(orjson.dumps([repo]))
    items = [
        {"query": "Greeter", "relevant": ["pkg/greeting.py"], "category": "symbol"},
        {"query": "write rows to a file", "relevant": ["pkg/storage.py"], "category": "semantic"},
    ]
    (folder / "annotations" / "tiny.json").write_bytes(orjson.dumps(items))
    negatives = tmp_path / "negatives.jsonl"
    negatives.write_text('{"id": "tiny-neg-1", "repo": "tiny", "query": "QuantumEntangler"}\n')
    return folder


def benchmark_args(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``engine eval --benchmark`` arguments for the tiny benchmark, its snapshot and a home."""
    folder = tiny_benchmark(tmp_path)
    monkeypatch.setattr(eval.benchmark, "MIRROR_ROOT", tmp_path / "mirror")
    monkeypatch.setenv("ENGINE_HOME", str(tmp_path / "home"))
    return ["eval", "--benchmark", str(folder), "--checkouts", str(tmp_path / "co")]


def test_a_benchmark_is_materialized_indexed_run_and_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = benchmark_args(tmp_path, monkeypatch)
    args += ["--negatives", str(tmp_path / "negatives.jsonl"), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.output)
    assert data["repos"] == ["tiny"]
    assert data["replayMismatches"] == 0
    names = [c["name"] for c in data["configs"]]
    assert names[0] == "fused" and "lexical" in names and "-definitions" in names
    fused = data["configs"][0]
    assert fused["perQuery"]["tiny-1"] == 1.0  # the definition of Greeter, first
    assert fused["top"]["tiny-1"][0].startswith("pkg/greeting.py:")  # repo-root paths
    assert set(fused["perQuery"]) == {"tiny-1", "tiny-2"}  # negatives are not scored
    assert data["lowConfidence"]["negatives"] == 1
    assert data["lowConfidence"]["negativesFlagged"] == 1.0
    # A second run reuses the index and the checkout.
    again = CliRunner().invoke(main, [*args[:-1], "--no-ablation", "--json"])
    assert again.exit_code == 0, again.output
    assert orjson.loads(again.output)["indexSeconds"] == {"tiny": 0.0}


def test_ranking_variants_are_rows_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = benchmark_args(tmp_path, monkeypatch)
    args += ["--no-ablation", "--json", "--ranking", "definitions=false"]
    args += ["--ranking", "file_weight=0.3,question.k=40"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    configs = {c["name"]: c for c in orjson.loads(result.output)["configs"]}
    assert list(configs) == ["fused", "definitions=false", "file_weight=0.3,question.k=40"]
    assert set(configs["definitions=false"]["perQuery"]) == {"tiny-1", "tiny-2"}
    # A setting it cannot read fails before anything is indexed, naming the setting.
    bad = CliRunner().invoke(main, [*args[:-1], "file_wieght=0.3"])
    assert bad.exit_code == 1
    assert "no ranking option 'file_wieght'" in orjson.loads(bad.output)["error"]


def test_dataset_or_benchmark_is_required() -> None:
    result = CliRunner().invoke(main, ["eval", "--json"])
    assert result.exit_code == 1
    assert "--benchmark FOLDER" in orjson.loads(result.output)["error"]
