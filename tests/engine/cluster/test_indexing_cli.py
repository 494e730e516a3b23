"""``engine index --cluster``: clear errors for bad input, and a whole run from the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from signals.vector import cluster_embedding
from signals.vector.embedder import HashingEmbedder
from tests.engine.cluster.conftest import SimulatedCluster
from tests.engine.cluster.indexing_helpers import make_repos, rows
from tests.fakes import fake_loader

# Nothing listens there: a fast test whose check let the run through fails on connecting
# instead of starting Ray in the test process.
NOWHERE = "127.0.0.1:1"


def run(*args: str, home: Path) -> tuple[int, str]:
    """The exit code and what was printed, stdout and stderr together (the error)."""
    result = CliRunner().invoke(main, list(args), env={"ENGINE_HOME": str(home)})
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def run_json(*args: str, home: Path) -> tuple[int, dict[str, Any]]:
    """The exit code and the JSON on stdout (Ray Data logs to stderr)."""
    result = CliRunner().invoke(main, [*args, "--json"], env={"ENGINE_HOME": str(home)})
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ("a/path name extra\n", "list.txt:1: expected 'PATH [NAME]', got 3 fields"),
        ("# only comments\n\n", "names no repositories"),
        ("one x\ntwo x\n", "the name x is given to both"),
        ("somewhere Bad/Name\n", "list.txt:1: invalid repository name 'Bad/Name'"),
    ],
)
def test_a_bad_list_file_is_a_clear_error(tmp_path: Path, lines: str, expected: str) -> None:
    listing = tmp_path / "list.txt"
    listing.write_text(lines)
    code, output = run(
        "index",
        str(listing),
        "--cluster",
        NOWHERE,
        "--cluster-store",
        str(tmp_path / "s"),
        home=tmp_path / "home",
    )
    assert code == 1 and expected in output


def test_a_missing_list_is_a_clear_error(tmp_path: Path) -> None:
    code, output = run(
        "index",
        str(tmp_path / "nope.txt"),
        "--cluster",
        NOWHERE,
        "--cluster-store",
        str(tmp_path / "s"),
        home=tmp_path / "home",
    )
    assert code == 1 and "nope.txt does not exist" in output


def test_an_unreachable_address_is_a_clear_error(tmp_path: Path) -> None:
    make_repos(tmp_path / "repos")
    code, output = run(
        "index",
        str(tmp_path / "repos"),
        "--cluster",
        "127.0.0.1:1",
        "--cluster-store",
        str(tmp_path / "s"),
        home=tmp_path / "home",
    )
    assert code == 1 and "cannot reach a Ray cluster at 127.0.0.1:1" in output


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--cluster", NOWHERE], "--cluster needs --cluster-store DIR"),
        (["--cluster-store", "s"], "--cluster-store goes with --cluster"),
        (["--cluster", NOWHERE, "--cluster-store", "s", "--name", "x"], "does not take --name"),
        (["--cluster", NOWHERE, "--cluster-store", "s", "--vectors", "fast"], "--vectors fast"),
        # The signals' own checks run too: a --model folder that holds no model.
        (["--cluster", NOWHERE, "--cluster-store", "s", "--model", "EMPTY"], "--model: "),
    ],
)
def test_options_a_cluster_build_cannot_take(
    tmp_path: Path, extra: list[str], expected: str
) -> None:
    make_repos(tmp_path / "repos")
    (tmp_path / "empty").mkdir()
    extra = [str(tmp_path / "empty") if arg == "EMPTY" else arg for arg in extra]
    code, output = run("index", str(tmp_path / "repos"), *extra, home=tmp_path / "home")
    assert code == 1 and expected in output


@pytest.mark.slow
def test_a_folder_of_checkouts_indexed_from_the_cli(
    ray_cluster3: SimulatedCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_embedding, "load_indexing_model", fake_loader(HashingEmbedder(64)))
    make_repos(tmp_path / "repos")
    (tmp_path / "repos" / "ghost-list.txt").write_text("")  # a file among the folders: skipped
    store = tmp_path / "store"
    code, report = run_json(
        "index",
        str(tmp_path / "repos"),
        "--cluster",
        ray_cluster3.address,
        "--cluster-store",
        str(store),
        home=tmp_path / "home",
    )
    assert code == 0, report
    assert [r["slug"] for r in report["repos"]] == ["alpha", "beta", "gamma"]
    assert all(r["generation"] == "gen-000001" for r in report["repos"])
    assert rows(store / "repos" / "alpha" / "gen-000001")["chunks"]

    listing = tmp_path / "list.txt"
    listing.write_text("repos/alpha\nrepos/missing gone\n")
    code, report = run_json(
        "index",
        str(listing),
        "--cluster",
        ray_cluster3.address,
        "--cluster-store",
        str(store),
        home=tmp_path / "home",
    )
    assert code == 1 and "gone: " in report["error"] and "does not exist" in report["error"]
    assert report["repos"][0]["generation"] == "gen-000002"
