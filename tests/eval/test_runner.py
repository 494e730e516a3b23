"""``engine eval DATASET``: the ablation's rows, one per signal subset and one per ranking
feature switched off, on a tiny indexed repository with the fake-embedder registry."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from cli.main import main
from engine.search.ranking.options import FEATURES
from eval.runner import subsets


def indexed_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "tiny"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "greeting.py").write_text(
        "class Greeter:\n    def greet(self, name):\n        return f'hello {name}'\n"
    )
    monkeypatch.setenv("ENGINE_HOME", str(tmp_path / "home"))
    indexed = CliRunner().invoke(main, ["index", str(repo), "--name", "tiny"])
    assert indexed.exit_code == 0, indexed.output
    dataset = tmp_path / "tiny.jsonl"
    queries = [
        {"id": "q1", "query": "greet a person by name", "relevant": ["pkg/greeting.py"]},
        {"id": "q2", "query": "Greeter", "relevant": ["pkg/greeting.py"]},
    ]
    dataset.write_bytes(b"\n".join(orjson.dumps(q) for q in queries) + b"\n")
    return dataset


def test_the_ablation_has_a_row_per_signal_subset_then_per_ranking_feature_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = indexed_dataset(tmp_path, monkeypatch)
    out = tmp_path / "run.json"
    args = ["eval", str(dataset), "--repo", "tiny", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    runs = orjson.loads(out.read_bytes())["runs"]
    signals = runs[0]["signals"] + runs[1]["signals"] + runs[2]["signals"]
    combos = ["+".join(c) for c in subsets(signals)]
    assert [r["name"] for r in runs] == combos + [f"-{f}" for f in FEATURES]
    full = runs[len(combos) - 1]
    assert all(r["signals"] == full["signals"] == signals for r in runs[len(combos) :])
    # each feature row is ranked without its feature: "greet ..." names greeting.py whole,
    # which lifts its best chunk's score only while file_names is on
    score = {r["name"]: {q["id"]: q["topScore"] for q in r["perQuery"]} for r in runs}
    assert score["-file_names"]["q1"] < score[full["name"]]["q1"]
    assert score["-definitions"]["q2"] != score[full["name"]]["q2"]
    assert "-definitions" in result.output and "configuration" in result.output

    again = CliRunner().invoke(main, [*args[:-2], "--baseline", str(out)])
    assert again.exit_code == 0, again.output
    lines = again.output.splitlines()
    below = lines[next(i for i, line in enumerate(lines) if line.startswith("-priors")) + 1]
    assert "Δ vs baseline" in below
