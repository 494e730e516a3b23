from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import SignalUnavailable
from engine.signal import IndexOptions
from signals.symbol.lookup import SymbolLocation, find_definitions, find_references
from tests.fakes import FakeChunkSource
from tests.signals.symbol.repos import PYTHON_DEFINITIONS, PYTHON_INDEX, build, python_chunks

STORE = FakeChunkSource(python_chunks())


@pytest.fixture
def scip_generation(tmp_path: Path) -> Path:
    """A generation whose symbols come from the real scip-python fixture (with references)."""
    options = IndexOptions(tmp_path, scip_file=PYTHON_INDEX)
    build(tmp_path / "gen" / "symbol", tmp_path, python_chunks(), PYTHON_DEFINITIONS, options)
    return tmp_path / "gen"


@pytest.fixture
def tree_sitter_generation(tmp_path: Path) -> Path:
    """A generation with only the engine's own symbols (no references)."""
    options = IndexOptions(tmp_path)
    build(tmp_path / "gen" / "symbol", tmp_path, python_chunks(), PYTHON_DEFINITIONS, options)
    return tmp_path / "gen"


def brief(locations: list[SymbolLocation]) -> list[tuple[str, str, int, bool]]:
    return [(loc.role, loc.path, loc.line, loc.indexed) for loc in locations]


def test_definitions_exact_first_then_fuzzy(scip_generation: Path) -> None:
    found = find_definitions(scip_generation, "greet")
    assert [f.symbol for f in found[:3]] == [
        "toy.greeter.greet",
        "toy.greeter.Greeter.greet",
        "toy.greeter.Greeter",  # a prefix match comes after the exact ones
    ]
    first = found[0]
    assert (first.path, first.line, first.start_line, first.end_line) == ("toy/greeter.py", 4, 4, 6)
    assert (first.kind, first.chunk_id, first.role, first.source) == (
        "function",
        3,
        "definition",
        "user-file",
    )
    assert len(find_definitions(scip_generation, "greet", limit=1)) == 1


def test_definitions_by_dotted_path_and_by_scip_symbol(scip_generation: Path) -> None:
    assert find_definitions(scip_generation, "Greeter.default")[0].symbol == (
        "toy.greeter.Greeter.default"
    )
    symbol = "scip-python python toy 0.1 `toy.util`/shout()."
    assert [d.symbol for d in find_definitions(scip_generation, symbol)] == ["toy.util.shout"]


def test_references_from_the_index_callers_first(scip_generation: Path) -> None:
    found = find_references(scip_generation, STORE, "shout")
    assert brief(found) == [
        ("definition", "toy/util.py", 1, True),
        ("reference", "toy/greeter.py", 6, True),  # inside greet(): a caller
        ("reference", "toy/greeter.py", 1, True),  # the import, module level
    ]
    caller = found[1]
    assert (caller.kind, caller.enclosing, caller.chunk_id) == ("function", "greet", 3)
    assert (caller.start_line, caller.end_line, caller.symbol) == (4, 6, "toy.util.shout")
    assert caller.source == "user-file"


def test_references_of_a_class_by_its_qualified_name(scip_generation: Path) -> None:
    found = find_references(scip_generation, STORE, "toy.greeter.Greeter")
    assert brief(found) == [
        ("definition", "toy/greeter.py", 9, True),
        ("reference", "toy/greeter.py", 19, True),
        ("reference", "toy/greeter.py", 20, True),
    ]
    assert {f.enclosing for f in found[1:]} == {"Greeter.default"}


def test_without_indexed_references_the_name_is_matched_in_chunks(
    tree_sitter_generation: Path,
) -> None:
    found = find_references(tree_sitter_generation, STORE, "shout")
    assert brief(found) == [
        ("definition", "toy/util.py", 1, True),
        ("reference", "toy/greeter.py", 6, False),
        ("reference", "toy/greeter.py", 1, False),
    ]
    assert {f.source for f in found[1:]} == {"text"}
    assert found[1].symbol == "toy.util.shout"


def test_a_name_with_no_definition_is_still_matched(tree_sitter_generation: Path) -> None:
    found = find_references(tree_sitter_generation, STORE, "upper")
    # Name matching cannot tell the docstring's word from the call: both are reported.
    assert brief(found) == [
        ("reference", "toy/util.py", 2, False),
        ("reference", "toy/util.py", 3, False),
    ]
    assert found[0].symbol == "upper"
    # Whole identifiers only: "greet" does not match inside "Greeter"; definitions' own
    # name lines are not references.
    greet = find_references(tree_sitter_generation, STORE, "greet")
    assert {(g.path, g.line) for g in greet if g.role == "reference"} == {("toy/greeter.py", 16)}


def test_limit_cuts_the_list(scip_generation: Path) -> None:
    assert len(find_references(scip_generation, STORE, "shout", limit=2)) == 2


def test_a_generation_without_a_symbol_table_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SignalUnavailable, match="reindex"):
        find_definitions(tmp_path, "greet")
    with pytest.raises(SignalUnavailable):
        find_references(tmp_path, STORE, "greet")
