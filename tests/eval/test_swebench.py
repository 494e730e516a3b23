"""The swebench-dev runner's scoring, loader, work trees and query reduction."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from engine.errors import UsageError
from eval.benchmark import BenchmarkError
from eval.dataset import Target
from eval.metrics import Ranked
from eval.swebench import (
    Instance,
    InstanceResult,
    VariantResult,
    accuracy,
    check_out,
    code_query,
    function_hit,
    gold_file_rank,
    load_instances,
    rankings_named,
    replay_swebench,
    run_json,
    run_swebench,
    summarize,
    summary_table,
    work_tree,
)


def instance(gold_files: tuple[str, ...], functions: tuple[Target, ...] = ()) -> Instance:
    return Instance("o__r-1", "o/r", "abc", "2020-01-01T00:00:00Z", "q", gold_files, functions)


def r(path: str, start: int = 1, end: int = 10) -> Ranked:
    return Ranked(path, start, end)


# --- scoring ---------------------------------------------------------------------------------


def test_gold_file_rank_counts_distinct_files() -> None:
    # a.py twice, then b.py, then gold: the gold file is the third distinct file.
    ranked = [r("a.py"), r("a.py", 20, 30), r("b.py"), r("gold.py"), r("a.py", 40, 50)]
    assert gold_file_rank(ranked, instance(("gold.py",))) == 3


def test_gold_file_rank_takes_the_first_of_several_gold_files() -> None:
    ranked = [r("a.py"), r("g2.py"), r("g1.py")]
    assert gold_file_rank(ranked, instance(("g1.py", "g2.py"))) == 2


def test_gold_file_rank_is_none_when_missing() -> None:
    assert gold_file_rank([r("a.py")], instance(("gold.py",))) is None


def test_accuracy_at_k_by_hand() -> None:
    ranks = [1, 3, 7, None, 12]
    assert accuracy(ranks, 1) == pytest.approx(1 / 5)
    assert accuracy(ranks, 5) == pytest.approx(2 / 5)
    assert accuracy(ranks, 10) == pytest.approx(3 / 5)
    assert accuracy([], 10) == 0.0


def test_function_hit_needs_line_overlap_within_the_first_ten() -> None:
    gold = instance(("g.py",), (Target("g.py", 100, 120),))
    assert function_hit([r("g.py", 1, 99), r("g.py", 121, 140)], gold) is False
    assert function_hit([r("g.py", 110, 130)], gold) is True
    assert function_hit([r("g.py", 120, 120)], gold) is True  # inclusive end
    eleventh = [r("other.py")] * 10 + [r("g.py", 100, 120)]
    assert function_hit(eleventh, gold) is False
    assert function_hit([r("other.py", 100, 120)], gold) is False


def test_function_hit_is_none_without_gold_functions() -> None:
    assert function_hit([r("g.py")], instance(("g.py",))) is None


def test_summarize_by_hand() -> None:
    def result(rank: int | None, hit: bool | None, seconds: float, full: bool) -> InstanceResult:
        out = InstanceResult("i", "o/r", seconds, full, 0)
        out.variants["as-is"] = VariantResult(1, rank, hit, [])
        return out

    s = summarize(
        [result(1, True, 30.0, True), result(4, False, 2.0, False), result(None, None, 4.0, False)],
        "as-is",
    )
    assert (s["acc1"], s["acc5"], s["acc10"]) == pytest.approx((1 / 3, 2 / 3, 2 / 3))
    assert s["functionHit10"] == pytest.approx(0.5)
    assert s["withFunctions"] == 2
    assert s["indexSeconds"] == 30.0
    assert s["reindexSecondsMean"] == pytest.approx(3.0)
    assert s["reindexSecondsMax"] == 4.0


# --- loader and work trees -------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes(b"\n".join(orjson.dumps(row) for row in rows) + b"\n")
    return path


def row(id: str, repo: str, created_at: str, commit: str = "abc") -> dict[str, object]:
    return {
        "id": id,
        "repo": repo,
        "base_commit": commit,
        "created_at": created_at,
        "query": "it breaks",
        "gold_files": ["src/core.py"],
        "gold_functions": [{"path": "src/core.py", "name": "run", "startLine": 1, "endLine": 2}],
        "gold_hunks": [],
    }


def test_load_orders_by_created_at_within_repositories(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "b.jsonl",
        [
            row("a-2", "o/alpha", "2021-01-01T00:00:00Z"),
            row("b-1", "o/beta", "2019-01-01T00:00:00Z"),
            row("a-1", "o/alpha", "2020-01-01T00:00:00Z"),
            row("a-3", "o/alpha", "2022-01-01T00:00:00Z"),
        ],
    )
    loaded = load_instances(path)
    assert [i.id for i in loaded] == ["a-1", "a-2", "a-3", "b-1"]
    assert loaded[0].gold_functions == (Target("src/core.py", 1, 2),)
    assert loaded[0].name == "alpha"
    assert [i.id for i in load_instances(path, ["beta"])] == ["b-1"]
    assert [i.id for i in load_instances(path, ["o/alpha"], 2)] == ["a-1", "a-2"]
    with pytest.raises(UsageError, match="gamma"):
        load_instances(path, ["gamma"])


def test_load_rejects_a_broken_line(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"id": "x"}\n')
    with pytest.raises(UsageError, match="line 1"):
        load_instances(path)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_work_tree_clones_the_snapshot_and_checks_out_base_commits(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "core.py").write_text("def run():\n    return 1\n")
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "one")
    first = git(work, "rev-parse", "HEAD")
    (work / "src" / "core.py").write_text("def run():\n    return 2\n")
    (work / "src" / "new.py").write_text("x = 1\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "two")
    second = git(work, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(mirror / "o+tool" / "repo"))

    tree = work_tree("o/tool", tmp_path / "checkouts", mirror)
    assert tree == tmp_path / "checkouts" / "tool"
    check_out(tree, second)
    assert (tree / "src" / "new.py").is_file()
    (tree / "build").mkdir()
    (tree / "build" / "junk.o").write_text("left by a build")
    (tree / "src" / "core.py").write_text("edited")
    check_out(tree, first)
    assert (tree / "src" / "core.py").read_text() == "def run():\n    return 1\n"
    assert not (tree / "src" / "new.py").exists()
    assert not (tree / "build").exists()
    assert work_tree("o/tool", tmp_path / "checkouts", mirror) == tree  # reused
    with pytest.raises(BenchmarkError, match="fetch github:o/missing"):
        work_tree("o/missing", tmp_path / "checkouts", mirror)


def test_an_instance_whose_commit_cannot_be_checked_out_is_skipped_not_fatal(
    tmp_path: Path,
) -> None:
    from engine.index.home import Home
    from signals.registry import plugins

    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "core.py").write_text("def run_the_tool():\n    return 1\n")
    (work / "src" / "other.py").write_text("def unrelated():\n    return 2\n")
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "one")
    commit = git(work, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(mirror / "o+tool" / "repo"))
    missing = "0" * 40  # a commit the snapshot lacks, as a missing blob makes checkout fail
    instances = [
        Instance(
            "tool-1", "o/tool", missing, "2020-01-01", "run_the_tool fails", ("src/core.py",), ()
        ),
        Instance(
            "tool-2", "o/tool", commit, "2021-01-01", "run_the_tool fails", ("src/core.py",), ()
        ),
    ]

    seen: list[str] = []
    results = run_swebench(
        Home(tmp_path / "home"),
        plugins(),
        instances,
        tmp_path / "checkouts",
        variants={"as-is": lambda text: text},
        mirror_root=mirror,
        on_result=lambda r: seen.append(r.id),
    )

    assert seen == ["tool-1", "tool-2"]
    assert missing in results[0].skipped and not results[0].variants
    assert not results[1].skipped and results[1].variants["as-is"].file_rank == 1
    data = run_json(results)
    overall = data["summary"]["as-is"]["overall"]
    assert (overall["instances"], overall["skipped"], overall["acc1"]) == (1, 1, 1.0)
    assert data["instances"][0]["skipped"] == results[0].skipped
    assert "skipped" not in data["instances"][1]
    assert f"skipped tool-1: {results[0].skipped}" in summary_table(data)


def tool_repository(tmp_path: Path) -> tuple[Path, str]:
    """A snapshot folder holding o/tool (src/tool.py with four functions, src/other.py with
    one), and its one commit."""
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "tool.py").write_text(
        "".join(f"def run_the_tool_{n}():\n    return {n}\n\n\n" for n in "abcd")
    )
    (work / "src" / "other.py").write_text("def run_the_tool_elsewhere():\n    return 2\n")
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "one")
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(mirror / "o+tool" / "repo"))
    return mirror, git(work, "rev-parse", "HEAD")


def test_ranking_variants_replay_the_same_runs_through_another_ranking_stage(
    tmp_path: Path,
) -> None:
    from engine.index.home import Home
    from signals.registry import plugins

    mirror, commit = tool_repository(tmp_path)
    query = "run_the_tool_a run_the_tool_b run_the_tool_c run_the_tool_d run_the_tool_elsewhere"
    instances = [Instance("tool-1", "o/tool", commit, "2020", query, ("src/tool.py",), ())]

    [result] = run_swebench(
        Home(tmp_path / "home"),
        plugins(),
        instances,
        tmp_path / "checkouts",
        variants={"as-is": lambda text: text},
        rankings=rankings_named("per-file-1,per-file-5"),
        mirror_root=mirror,
    )

    assert list(result.variants) == ["as-is", "as-is+per-file-1", "as-is+per-file-5"]
    files = {name: [label.split(":")[0] for label in v.top] for name, v in result.variants.items()}
    assert files["as-is+per-file-1"][:2] == ["src/tool.py", "src/other.py"]  # one per file first
    assert files["as-is"][:3] == ["src/tool.py"] * 3  # the default shows three of one file
    assert files["as-is+per-file-5"][:4] == ["src/tool.py"] * 4
    assert set(run_json([result])["summary"]) == set(result.variants)
    with pytest.raises(UsageError, match="unknown ranking variant nope"):
        rankings_named("per-file-5,nope")


def test_saved_runs_replay_to_the_scores_the_live_pass_measured(tmp_path: Path) -> None:
    from engine.index.home import Home
    from signals.registry import plugins

    mirror, commit = tool_repository(tmp_path)
    query = "Traceback:\n  run_the_tool_b fails\n  in run_the_tool_elsewhere\n  and run_the_tool_c"
    gold = (Target("src/other.py", 1, 2),)
    instances = [Instance("tool-1", "o/tool", commit, "2020", query, ("src/tool.py",), gold)]
    rankings = rankings_named("per-file-1,k30")
    saved = tmp_path / "runs"

    [live] = run_swebench(
        Home(tmp_path / "home"),
        plugins(),
        instances,
        tmp_path / "checkouts",
        rankings=rankings,
        mirror_root=mirror,
        save_runs=saved,
    )
    [replayed] = replay_swebench(
        [*instances, replace(instances[0], id="tool-2")], saved, rankings=rankings
    )

    assert [p.name for p in saved.iterdir()] == ["tool-1.json.gz"]  # tool-2 was never run
    assert replayed.variants == live.variants  # every text and ranking variant, as measured
    assert (replayed.index_seconds, replayed.full_index) == (live.index_seconds, True)
    assert replayed.files_changed == live.files_changed == 2


# --- query reduction -------------------------------------------------------------------------


ISSUE = """\
Config.from_file fails with tomllib
I would like to use `tomllib.load` with app.config, e.g. for config.toml files.

```python
app.config.from_file("config.toml", tomllib.load)
array([[ True, False],
```

```
Traceback (most recent call last):
  File "/venv/flask/config.py", line 265, in from_file
    obj = load(f)
TypeError: File must be opened in binary mode
```

Environment:
numpy: 1.18.1
machine: x86_64
It happens in src/flask/config.py when the load_json helper or JSONProvider is used.
"""


def test_code_query_keeps_code_lines_and_identifiers() -> None:
    assert code_query(ISSUE).splitlines() == [
        'app.config.from_file("config.toml", tomllib.load)',
        "array([[ True, False],",  # printed data with a word in it passes: a known leak
        "Traceback (most recent call last):",
        'File "/venv/flask/config.py", line 265, in from_file',
        "obj = load(f)",
        "TypeError: File must be opened in binary mode",
        "Config.from_file tomllib.load app.config config.toml src/flask/config.py "
        "load_json JSONProvider",
    ]


def test_code_query_keeps_prose_without_code_unchanged() -> None:
    text = "The plot looks wrong when I pass colours.\nIt used to work."
    assert code_query(text) == text


def test_code_query_drops_a_duplicated_line_and_plain_abbreviations() -> None:
    text = ">>> plot(x)\n>>> plot(x)\n>>> 1 + 2\nSee e.g. the docs, i.e. the guide."
    assert code_query(text) == ">>> plot(x)"
