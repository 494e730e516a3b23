from __future__ import annotations

from pathlib import Path

import pytest

from scip.emit import write_index
from scip.errors import ScipError
from scip.reader import read_index
from signals.symbol.emitter import INDEX_FILE, emit_index, merge_index
from tests.signals.symbol.repos import PYTHON_DEFINITIONS, definition


def test_emitted_definitions_read_back_with_their_lines(tmp_path: Path) -> None:
    paths = {"toy/greeter.py", "toy/util.py"}
    output, problems = emit_index(PYTHON_DEFINITIONS, paths, tmp_path, tmp_path)
    assert (output, problems) == (tmp_path / INDEX_FILE, [])
    index = read_index(output)
    found = {
        (d.readable_name, d.kind, d.name_line, d.start_line, d.end_line) for d in index.definitions
    }
    assert found == {
        ("toy/greeter.py.greet", "function", 4, 4, 6),
        ("toy/greeter.py.Greeter", "class", 9, 9, 20),
        ("toy/greeter.py.Greeter.__init__", "method", 12, 12, 13),
        ("toy/greeter.py.Greeter.greet", "method", 15, 15, 16),
        ("toy/greeter.py.Greeter.default", "method", 19, 18, 20),
        ("toy/util.py.shout", "function", 1, 1, 3),
    }
    greet = next(d for d in index.definitions if d.readable_name == "toy/greeter.py.greet")
    assert (greet.name_range.start_char, greet.name_range.end_char) == (4, 9)


def test_only_the_asked_paths_are_emitted(tmp_path: Path) -> None:
    output, _ = emit_index(PYTHON_DEFINITIONS, {"toy/util.py"}, tmp_path, tmp_path)
    assert read_index(output).paths == ("toy/util.py",)


def test_a_definition_scip_cannot_express_is_reported_and_the_rest_written(
    tmp_path: Path,
) -> None:
    broken = definition("toy/util.py", "function", "Outer..inner", 2, 4, 2, 3)
    output, problems = emit_index(
        [*PYTHON_DEFINITIONS, broken], {"toy/util.py"}, tmp_path, tmp_path
    )
    assert len(problems) == 1
    assert problems[0].startswith("toy/util.py:2: definition 'Outer..inner' left out")
    assert [d.name for d in read_index(output).definitions] == ["shout"]


def test_merge_keeps_the_chosen_documents_of_the_base(tmp_path: Path) -> None:
    base, _ = emit_index(PYTHON_DEFINITIONS, {"toy/greeter.py", "toy/util.py"}, tmp_path, tmp_path)
    fresh = definition("new.py", "function", "fresh", 1, 4, 1, 2)
    addition, _ = emit_index([fresh], {"new.py"}, tmp_path, tmp_path, "fresh.scip")
    output = tmp_path / "merged.scip"
    merge_index(base, {"toy/util.py"}, addition, output)
    merged = read_index(output)
    assert sorted(merged.paths) == ["new.py", "toy/util.py"]
    assert sorted(d.name for d in merged.definitions) == ["fresh", "shout"]
    assert merged.tool.name == "engine-tree-sitter"


def test_merge_refuses_a_damaged_base(tmp_path: Path) -> None:
    base = tmp_path / "base.scip"
    base.write_bytes(b"\xff\xff")
    addition = tmp_path / "add.scip"
    write_index(addition, "t", str(tmp_path), [])
    with pytest.raises(ScipError):
        merge_index(base, {"a.py"}, addition, tmp_path / "out.scip")
