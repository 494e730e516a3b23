from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.commands.query import one_shot
from cli.main import main


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGINE_HOME", str(tmp_path / "home"))
    repo = tmp_path / "toy-repo"
    (repo / "toy").mkdir(parents=True)
    (repo / "toy" / "greeter.py").write_text(
        "def greet(name):\n    return f'Hello {name}'\n\n\n"
        "def shout(text):\n    return text.upper()\n"
    )
    return repo


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_index_query_json_contract(env: Path) -> None:
    code, _ = run("index", str(env))
    assert code == 0
    code, out = run("query", "toy-repo", "greet", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"query", "results", "total"}
    assert data["query"] == "greet"
    assert data["total"] == len(data["results"]) >= 1
    first = data["results"][0]
    assert list(first) == [
        "repo",
        "filePath",
        "startLine",
        "endLine",
        "symbolName",
        "content",
        "score",
        "sources",
        "qualifiedName",  # present for a chunk of a definition (issue 17)
    ]
    assert first["repo"] == "toy-repo"
    assert first["filePath"] == "toy/greeter.py"
    assert (first["startLine"], first["endLine"]) == (1, 2)
    assert (first["symbolName"], first["qualifiedName"]) == ("greet", "toy.greeter.greet")
    assert first["content"] == "def greet(name):\n    return f'Hello {name}'"
    assert 0.0 <= first["score"] <= 1.0
    assert first["sources"] == ["lexical", "vector", "symbol"]


def test_readable_listing_and_explain(env: Path) -> None:
    run("index", str(env), "--name", "toy")
    code, out = run("query", "toy", "shout", "--explain")
    assert code == 0
    assert "toy/greeter.py:5-6" in out
    assert "lexical" in out and "rank 1" in out


def test_text_output_escapes_control_characters_in_paths(env: Path, tmp_path: Path) -> None:
    """A file (or repository folder) named with a newline must not split the line that lists
    it (issue 8); --json keeps the exact name."""
    (env / "toy" / "new\nline.py").write_text("def newline_name_function():\n    pass\n")
    code, out = run("index", str(env), "--name", "toy")
    assert code == 0
    code, out = run("query", "toy", "newline_name_function")
    assert code == 0
    header = out.splitlines()[0]
    assert header.startswith(" 1. toy/new\\nline.py:1-2  newline_name_function ")
    data = json.loads(run("query", "toy", "newline_name_function", "--json")[1])
    assert data["results"][0]["filePath"] == "toy/new\nline.py"
    code, out = run("defs", "toy", "newline_name_function")
    assert out.splitlines()[0] == ("toy/new\\nline.py:1  newline_name_function  definition")

    odd = tmp_path / "odd\nrepo"
    (odd / "pkg").mkdir(parents=True)
    (odd / "pkg" / "a.py").write_text("def a():\n    pass\n")
    assert run("index", str(odd), "--name", "odd")[0] == 0
    code, out = run("status", "odd")
    assert code == 0
    assert out.splitlines()[0] == f"odd  ({tmp_path}/odd\\nrepo)"
    assert f"odd\t{tmp_path}/odd\\nrepo" in run("repos")[1].splitlines()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("query", "nope", "x", "--json"), "no index for nope — run engine index PATH --name nope"),
        (("query", "../etc", "x", "--json"), "invalid repository name"),
        (("reindex", "ghost", "--json"), "no index for ghost"),
        (("index", "/definitely/not/here", "--json"), "does not exist"),
        (("status", "ghost", "--json"), "no index for ghost"),
    ],
)
def test_errors_are_json_with_exit_code(env: Path, args: tuple[str, ...], message: str) -> None:
    code, out = run(*args)
    assert code == 1
    assert message in json.loads(out)["error"]


def test_empty_query_and_bad_signal(env: Path) -> None:
    run("index", str(env), "--name", "toy")
    code, out = run("query", "toy", "   ", "--json")
    assert code == 1 and "empty" in json.loads(out)["error"]
    code, out = run("query", "toy", "greet", "--signals", "telepathy", "--json")
    assert code == 1 and "telepathy" in json.loads(out)["error"]


def test_status_repos_remove(env: Path) -> None:
    run("index", str(env), "--name", "toy")
    code, out = run("status", "toy", "--json")
    status = json.loads(out)
    assert code == 0
    assert status["files"] == 1 and status["chunks"] == 2
    assert status["signals"]["lexical"]["ready"] is True
    assert status["changedSinceBuild"]["total"] == 0
    (env / "toy" / "new.py").write_text("x = 1\n")
    assert json.loads(run("status", "toy", "--json")[1])["changedSinceBuild"]["added"] == 1
    assert json.loads(run("repos", "--json")[1]) == [{"repo": "toy", "root": str(env)}]
    assert run("remove", "toy")[0] == 0
    assert json.loads(run("repos", "--json")[1]) == []


def test_cli_import_loads_no_heavy_library() -> None:
    code = (
        "import sys, cli.main, signals.registry, engine.index.opening, engine.indexing.indexer;"
        "heavy = {'torch', 'sentence_transformers', 'faiss', 'tantivy', 'onnxruntime',"
        " 'transformers', 'numpy', 'httpx2'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_defs_and_refs(env: Path) -> None:
    (env / "toy" / "main.py").write_text(
        "from toy.greeter import greet\n\n\ndef run():\n    return greet('x')\n"
    )
    run("index", str(env), "--name", "toy")
    code, out = run("defs", "toy", "greet", "--json")
    assert code == 0
    data = json.loads(out)
    first = data["results"][0]
    assert (first["filePath"], first["startLine"], first["role"]) == (
        "toy/greeter.py",
        1,
        "definition",
    )
    assert (first["symbolName"], first["qualifiedName"]) == ("greet", "toy.greeter.greet")
    code, out = run("refs", "toy", "greet", "--json")
    refs = [r for r in json.loads(out)["results"] if r["role"] == "reference"]
    assert any(
        r["filePath"] == "toy/main.py" and r["line"] == 5 and r["enclosing"] == "run" for r in refs
    )
    assert json.loads(run("defs", "nope", "x", "--json")[1])["error"].startswith(
        "no index for nope"
    )


def test_a_bad_scip_file_given_is_an_error_and_a_bad_repo_index_a_problem(
    env: Path, tmp_path: Path
) -> None:
    # The user asked for this file (issue 15): refused, nothing built.
    broken = tmp_path / "broken.scip"
    broken.write_bytes(b"\x0a\xff\xff garbage")
    code, out = run("index", str(env), "--name", "toy", "--scip", str(broken), "--json")
    assert code == 1
    assert "--scip: " in json.loads(out)["error"]
    # One found in the repository is only a source among others: a problem line.
    (env / "index.scip").write_bytes(b"\x0a\xff\xff garbage")
    code, out = run("index", str(env), "--name", "toy", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["signals"]["symbol"]["ready"] is True
    assert any("index.scip" in p for p in report["problems"])


def test_budget_packs_and_reports_tokens(env: Path) -> None:
    run("index", str(env), "--name", "toy")
    code, out = run("query", "toy", "greet shout", "--json", "--budget", "60")
    data = json.loads(out)
    assert code == 0
    assert data["budget"]["used"] <= 60
    assert data["budget"]["tokens"] == 60
    assert data["results"][0]["detail"] in ("full", "signature", "location")


def test_federated_query(env: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "lib").mkdir(parents=True)
    (other / "lib" / "shout.py").write_text("def shout_loudly(text):\n    return text + '!'\n")
    run("index", str(env), "--name", "toy")
    run("index", str(other), "--name", "other")
    code, out = run("query", "toy,other", "shout", "--json")
    assert code == 0
    repos = {r["repo"] for r in json.loads(out)["results"]}
    assert repos == {"toy", "other"}
    code, out = run("query", "--all", "shout", "--json")
    assert code == 0 and {r["repo"] for r in json.loads(out)["results"]} == {"toy", "other"}
    code, out = run("query", "toy", "--json")
    assert code == 1 and "query text" in json.loads(out)["error"]


def test_a_query_runs_without_the_cyclic_collector_and_restores_it(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from engine.index import opening as reader

    seen: list[bool] = []
    open_index = reader.open_index

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return open_index(*args, **kwargs)

    monkeypatch.setattr(reader, "open_index", spy)
    assert run("index", str(env))[0] == 0
    assert gc.isenabled()
    assert run("query", "toy-repo", "greet", "--json")[0] == 0
    assert run("query", "no-such-repo", "greet", "--json")[0] == 1  # failed: restored too
    assert seen == [False, False] and gc.isenabled()
    with one_shot():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_one_query_commands_tell_the_signals_they_answer_once(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.index import opening as reader

    seen: list[bool] = []
    open_index = reader.open_index

    def spy(home: Any, slug: str, plugins: Any, options: Any, **kwargs: Any) -> Any:
        seen.append(options.one_shot)
        return open_index(home, slug, plugins, options, **kwargs)

    monkeypatch.setattr(reader, "open_index", spy)
    assert run("index", str(env))[0] == 0
    assert run("query", "toy-repo", "greet", "--json")[0] == 0
    assert run("context", "toy-repo", "greet", "--budget", "500", "--json")[0] == 0
    # Servers and evaluation runs answer many queries: they keep the default.
    assert seen == [True, True]


def test_a_one_shot_process_starts_numpy_with_one_blas_thread(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "from cli.commands.query import one_shot\n"
        "with one_shot():\n"
        "    inside = os.environ.get('OPENBLAS_NUM_THREADS')\n"
        "    import numpy\n"
        "print(inside, os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["1", "None"]  # set while numpy loads, then given back
    env["OPENBLAS_NUM_THREADS"] = "2"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["2", "2"]  # the user's choice stands


def test_status_of_a_first_index_still_being_built(env: Path) -> None:
    from engine.index.generations import writer_lock
    from engine.index.home import Home

    home = Home(Path(os.environ["ENGINE_HOME"]))
    entry = home.register("toy", env)
    with writer_lock(entry.directory, wait=False, slug="toy"):  # as a running build holds it
        code, out = run("status", "toy")
        assert code == 0
        assert "first index being built: no progress written yet" in out
        assert json.loads(run("status", "toy", "--json")[1])["firstBuild"] is True
        code, out = run("query", "toy", "greet")
        assert code != 0 and "being indexed for the first time" in out
        building = entry.directory / "gen-000001"
        building.mkdir()
        (building / "progress.json").write_text(
            '{"stage": "embedding", "done": 100, "total": 1000, "at": "T", "stageSeconds": 10}'
        )
        out = run("status", "toy")[1]
        assert "first index being built: embedding 100 of 1000 (at T, ETA 1m30s)" in out
        shutil.rmtree(building)
    code, out = run("status", "toy")
    assert code != 0 and "run engine reindex toy" in out
