"""``engine context`` and ``engine verify`` end to end, over the scip-python fixture project
(with the symbol signal's resolver and the bundled tokenizer, as the CLI wires them)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.commands.context import context as context_command
from cli.commands.verify import verify as verify_command
from engine.context import assembly
from engine.index.home import Home
from engine.index.opening import OpenIndex, open_index
from engine.indexing.indexer import Indexer
from engine.search.tokens import agent_counter
from engine.signal import IndexOptions, OpenOptions
from signals import registry
from signals.symbol.resolver import SymbolResolver
from tests.signals.symbol.repos import PYTHON_INDEX, copy_python_toy

TEST_FILE = 'from toy.greeter import greet\n\n\ndef test_greet():\n    assert greet("x")\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    monkeypatch.setenv("ENGINE_HOME", str(tmp_path / "home"))
    return Home(tmp_path / "home")


def indexed(home: Home, tmp_path: Path, *, scip: bool) -> Path:
    root = copy_python_toy(tmp_path)
    (root / "tests").mkdir()
    (root / "tests" / "test_greeter.py").write_text(TEST_FILE)
    options = IndexOptions(home.root, scip_file=PYTHON_INDEX if scip else None)
    Indexer(home, registry.plugins(), options).index("toy", root)
    return root


@pytest.fixture
def opened(home: Home, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[OpenIndex]:
    indexed(home, tmp_path, scip=request.param == "scip")
    index = open_index(home, "toy", registry.plugins(), OpenOptions(home.root))
    yield index
    index.close()


def context_for(opened: OpenIndex, query: str, budget: int, **options: Any) -> dict[str, Any]:
    return assembly.context_for(
        opened, SymbolResolver, query, budget, counter=agent_counter(), **options
    )


def expanded(data: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    return [
        (e["filePath"], e["startLine"], e["endLine"], e["qualifiedName"]) for e in data["expanded"]
    ]


@pytest.mark.parametrize("opened", ["scip"], indirect=True)
def test_scip_references_pick_what_the_code_really_uses(opened: OpenIndex) -> None:
    resolver = SymbolResolver(opened)
    try:
        sites = resolver.definitions_named({"name"})["name"]
    finally:
        resolver.close()
    assert [s.symbol for s in sites] == ["toy.greeter.Greeter.name"]
    assert sites[0].indexed

    # greet() uses a parameter called `name`, not the field: the index knows.
    data = context_for(opened, "greet someone loudly", 2000, limit=1)
    assert [p["qualifiedName"] for p in data["primary"]] == ["toy.greeter.greet"]
    assert expanded(data) == [("toy/util.py", 1, 3, "toy.util.shout")]

    # Greeter.greet reads self.name and calls the module's greet().
    data = context_for(opened, "Greeter.greet", 2000, limit=1)
    assert [p["qualifiedName"] for p in data["primary"]] == ["toy.greeter.Greeter.greet"]
    assert expanded(data) == [
        ("toy/greeter.py", 4, 6, "toy.greeter.greet"),
        ("toy/greeter.py", 13, 13, "toy.greeter.Greeter.name"),
    ]
    assert data["expanded"][1]["content"] == "        self.name = name"


@pytest.mark.parametrize("opened", ["tree-sitter"], indirect=True)
def test_tree_sitter_fallback_resolves_names_by_how_they_are_used(opened: OpenIndex) -> None:
    data = context_for(opened, "greet someone loudly", 2000, limit=1)
    assert expanded(data) == [("toy/util.py", 1, 3, "toy.util.shout")]
    # No definition is named `name` without a real index; greet() is reached bare.
    data = context_for(opened, "Greeter.greet", 2000, limit=1)
    assert expanded(data) == [("toy/greeter.py", 4, 6, "toy.greeter.greet")]


@pytest.mark.parametrize("opened", ["tree-sitter"], indirect=True)
def test_related_tests_through_references(opened: OpenIndex) -> None:
    data = context_for(opened, "greet someone loudly", 2000, include_tests=True, limit=1)
    assert [(t["filePath"], t["symbolName"], t["tests"]) for t in data["tests"]] == [
        ("tests/test_greeter.py", "test_greet", ["toy.greeter.greet"])
    ]


def test_context_command_json_and_markdown(home: Home, tmp_path: Path) -> None:
    indexed(home, tmp_path, scip=True)
    runner = CliRunner()
    result = runner.invoke(
        context_command, ["toy", "Greeter.greet", "--budget", "300", "--json", "--limit", "1"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["budget"] == 300
    assert 0 < data["tokens"] <= 300
    assert data["expansionShare"] == 0.2
    assert expanded(data)[0][3] == "toy.greeter.greet"

    result = runner.invoke(context_command, ["toy", "Greeter.greet", "--budget", "300"])
    assert result.exit_code == 0, result.output
    assert "### toy/greeter.py:15-16 (toy.greeter.Greeter.greet)\n```python\n" in result.output
    assert "## Definitions it uses" in result.output


def test_context_command_errors_are_actionable(home: Home) -> None:
    result = CliRunner().invoke(context_command, ["nope", "x", "--budget", "100", "--json"])
    assert result.exit_code == 1
    assert "engine index" in json.loads(result.output)["error"]
    result = CliRunner().invoke(context_command, ["nope", "x"])
    assert result.exit_code == 2  # --budget is required
    assert "--budget" in result.output


def test_verify_command_on_a_stale_index(home: Home, tmp_path: Path) -> None:
    root = indexed(home, tmp_path, scip=False)
    runner = CliRunner()
    result = runner.invoke(verify_command, ["toy", "--json"])
    assert result.exit_code == 0, result.output
    clean = json.loads(result.output)
    assert clean["stale"] == 0 and not clean["reindexSuggested"]

    greeter = root / "toy" / "greeter.py"
    greeter.write_text(greeter.read_text().replace("Greet someone loudly", "Say hi"))
    result = runner.invoke(verify_command, ["toy"])
    assert result.exit_code == 0, result.output
    assert "toy/greeter.py:4-6  changed" in result.output
    assert "--name toy --full" in result.output  # the fix JSON gives (cli/commands/verify.py)
