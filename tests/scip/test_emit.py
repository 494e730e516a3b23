from __future__ import annotations

import os
from pathlib import Path

import pytest

from scip.emit import (
    EmitDefinition,
    EmitDocument,
    EmitReference,
    local_symbol_for,
    write_index,
)
from scip.errors import SymbolError
from scip.ranges import Range, from_lines
from scip.reader import read_index
from scip.symbols import parse_symbol, readable_name


def test_symbols_for_engine_definitions() -> None:
    assert local_symbol_for("toy/greeter.py", "Greeter.greet", "method") == (
        "engine . . . toy/`greeter.py`/Greeter#greet()."
    )
    assert local_symbol_for("toy/greeter.py", "greet", "function") == (
        "engine . . . toy/`greeter.py`/greet()."
    )
    assert local_symbol_for("src/shapes.ts", "Circle", "class", "myrepo") == (
        "engine . myrepo . src/`shapes.ts`/Circle#"
    )
    assert local_symbol_for("lib.rs", "tests", "module") == "engine . . . `lib.rs`/tests/"
    assert local_symbol_for("a.md", "Intro", "section") == "engine . . . `a.md`/Intro."


def test_engine_symbols_read_as_path_then_qualified_name() -> None:
    symbol = local_symbol_for("toy/greeter.py", "Greeter.greet", "method")
    assert readable_name(symbol) == "toy/greeter.py.Greeter.greet"
    assert parse_symbol(symbol).package.name == ""


@pytest.mark.parametrize(
    ("path", "qualified_name"),
    [
        ("", "f"),
        ("/abs/x.py", "f"),
        ("../x.py", "f"),
        ("a\\b.py", "f"),
        ("x.py", ""),
        ("x.py", "A..b"),
    ],
)
def test_bad_paths_and_names_are_refused(path: str, qualified_name: str) -> None:
    with pytest.raises(SymbolError):
        local_symbol_for(path, qualified_name, "function")


def greeter_document() -> EmitDocument:
    greeter = local_symbol_for("toy/greeter.py", "Greeter", "class")
    greet = local_symbol_for("toy/greeter.py", "Greeter.greet", "method")
    helper = local_symbol_for("toy/util.py", "shout", "function")
    return EmitDocument(
        relative_path="toy/greeter.py",
        language="python",
        definitions=[
            EmitDefinition(greeter, "class", "Greeter", Range(8, 6, 8, 13), from_lines(9, 20)),
            EmitDefinition(
                greet,
                "method",
                "greet",
                Range(14, 8, 14, 13),
                Range(14, 4, 15, 31),
                ("```python\ndef greet(self) -> str:\n```", "Say hello."),
            ),
        ],
        references=[EmitReference(helper, Range(15, 15, 15, 20))],
    )


def test_written_definitions_read_back(tmp_path: Path) -> None:
    path = tmp_path / "index.scip"
    util = EmitDocument(
        "toy/util.py",
        "python",
        [
            EmitDefinition(
                local_symbol_for("toy/util.py", "shout", "function"),
                "function",
                "shout",
                Range(0, 4, 0, 9),
            )
        ],
    )
    write_index(path, "engine-treesitter", str(tmp_path), [greeter_document(), util])
    index = read_index(path)
    assert index.tool.name == "engine-treesitter"
    assert index.project_root == tmp_path.as_uri()
    assert index.paths == ("toy/greeter.py", "toy/util.py")
    got = {
        (d.symbol, d.path, d.name, d.kind, d.display_name, d.name_range, d.enclosing_range)
        for d in index.definitions
    }
    expected_doc = greeter_document()
    expected = {
        (
            e.symbol,
            "toy/greeter.py",
            e.display_name,
            e.kind,
            e.display_name,
            e.name_range,
            e.enclosing_range,
        )
        for e in expected_doc.definitions
    }
    expected.add(
        (
            util.definitions[0].symbol,
            "toy/util.py",
            "shout",
            "function",
            "shout",
            Range(0, 4, 0, 9),
            None,
        )
    )
    assert got == expected
    lines = {d.readable_name: (d.start_line, d.end_line) for d in index.definitions}
    assert lines == {
        "toy/greeter.py.Greeter": (9, 20),
        "toy/greeter.py.Greeter.greet": (15, 16),
        "toy/util.py.shout": (1, 1),
    }
    greet = next(d for d in index.definitions if d.name == "greet")
    assert (greet.signature, greet.documentation) == ("def greet(self) -> str:", "Say hello.")
    (reference,) = index.references
    assert (reference.path, reference.line, reference.roles) == ("toy/greeter.py", 16, 8)
    assert reference.symbol == "engine . . . toy/`util.py`/shout()."


def test_write_replaces_an_existing_index_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "index.scip"
    path.write_bytes(b"old")
    write_index(path, "engine", "/repo", [greeter_document()])
    assert read_index(path).paths == ("toy/greeter.py",)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.scip"]


def test_a_failed_write_keeps_the_old_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "index.scip"
    path.write_bytes(b"old")

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        write_index(path, "engine", "/repo", [greeter_document()])
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.scip"]


def test_bad_symbols_are_refused_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "index.scip"
    bad = EmitDocument(
        "a.py", "python", [EmitDefinition("not a symbol", "function", "f", Range(0, 0, 0, 1))]
    )
    with pytest.raises(SymbolError):
        write_index(path, "engine", "/repo", [bad])
    assert not path.exists()


def test_references_cannot_claim_the_definition_role(tmp_path: Path) -> None:
    symbol = local_symbol_for("a.py", "f", "function")
    bad = EmitDocument("a.py", "python", references=[EmitReference(symbol, Range(0, 0, 0, 1), 1)])
    with pytest.raises(ValueError, match="Definition role"):
        write_index(tmp_path / "index.scip", "engine", "/repo", [bad])
