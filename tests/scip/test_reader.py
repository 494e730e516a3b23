from __future__ import annotations

from pathlib import Path

import pytest

from scip import scip_pb2
from scip.errors import ScipError
from scip.reader import ScipDefinition, ScipIndex, read_index, read_index_bytes

FIXTURES = Path(__file__).parents[1] / "fixtures" / "scip"
PYTHON_INDEX = FIXTURES / "python" / "index.scip"
TS_INDEX = FIXTURES / "typescript" / "index.scip"
PY = "scip-python python toy 0.1 "
TS = "scip-typescript npm toyts 0.1.0 "


def by_readable(index: ScipIndex) -> dict[str, ScipDefinition]:
    return {d.readable_name: d for d in index.definitions}


# ---------------------------------------------------------------- scip-python fixture


def test_python_fixture_metadata() -> None:
    index = read_index(PYTHON_INDEX)
    assert (index.tool.name, index.tool.version) == ("scip-python", "0.6.6")
    assert index.paths == ("toy/__init__.py", "toy/greeter.py", "toy/util.py")
    assert index.source == str(PYTHON_INDEX)
    assert not index.is_empty
    assert index.problems == []


def test_python_function_definition() -> None:
    greet = by_readable(read_index(PYTHON_INDEX))["toy.greeter.greet"]
    assert greet.symbol == PY + "`toy.greeter`/greet()."
    assert (greet.path, greet.name, greet.kind) == ("toy/greeter.py", "greet", "function")
    assert (greet.name_line, greet.start_line, greet.end_line) == (4, 4, 6)
    assert greet.signature.startswith("def greet(")
    assert greet.documentation == "Greet someone loudly."


def test_python_class_and_methods() -> None:
    defs = by_readable(read_index(PYTHON_INDEX))
    greeter = defs["toy.greeter.Greeter"]
    assert (greeter.kind, greeter.start_line, greeter.end_line) == ("type", 9, 20)
    assert greeter.documentation == "Remembers a name and greets it."
    init = defs["toy.greeter.Greeter.__init__"]
    assert init.symbol == PY + "`toy.greeter`/Greeter#__init__()."
    assert (init.kind, init.name_line, init.start_line, init.end_line) == ("method", 12, 12, 13)
    # The decorator line starts the enclosing range; the name is on the next line.
    default = defs["toy.greeter.Greeter.default"]
    assert (default.name_line, default.start_line, default.end_line) == (19, 18, 20)
    shout = defs["toy.util.shout"]
    assert (shout.path, shout.start_line, shout.end_line) == ("toy/util.py", 1, 3)


def test_parameters_are_left_out_unless_asked_for() -> None:
    param = PY + "`toy.greeter`/Greeter#__init__().(name)"
    assert param not in {d.symbol for d in read_index(PYTHON_INDEX).definitions}
    with_params = read_index(PYTHON_INDEX, include_parameters=True).definitions
    (found,) = [d for d in with_params if d.symbol == param]
    assert (found.suffix, found.name, found.name_line) == ("parameter", "name", 12)


def test_python_cross_file_references() -> None:
    refs = read_index(PYTHON_INDEX).references
    shout_refs = sorted(
        (r.path, r.line, r.roles) for r in refs if r.symbol == PY + "`toy.util`/shout()."
    )
    # The import on line 1 and the call on line 6 of greeter.py.
    assert shout_refs == [("toy/greeter.py", 1, 8), ("toy/greeter.py", 6, 8)]
    assert all(not r.symbol.startswith("local ") for r in refs)


# ---------------------------------------------------------------- scip-typescript fixture


def test_typescript_class_implements_interface() -> None:
    defs = by_readable(read_index(TS_INDEX))
    circle = defs["src/shapes.ts.Circle"]
    assert circle.symbol == TS + "src/`shapes.ts`/Circle#"
    assert (circle.path, circle.start_line, circle.end_line, circle.name_line) == (
        "src/shapes.ts",
        7,
        13,
        7,
    )
    assert circle.implements == (TS + "src/`shapes.ts`/Shape#",)
    assert circle.documentation == "A circle of a given radius."
    area = defs["src/shapes.ts.Circle.area"]
    assert area.implements == (TS + "src/`shapes.ts`/Shape#area().",)
    assert defs["src/shapes.ts.Circle.<constructor>"].kind == "method"


def test_typescript_functions_and_arrow_functions() -> None:
    defs = by_readable(read_index(TS_INDEX))
    total = defs["src/shapes.ts.totalArea"]
    assert (total.kind, total.start_line, total.end_line) == ("function", 15, 17)
    parse = defs["src/index.ts.parseRadii"]
    assert (parse.kind, parse.name_line, parse.start_line, parse.end_line) == ("term", 4, 4, 5)
    assert parse.documentation == "Parse a comma-separated list of radii."
    # The module's half-open range ends at char 0 past the last line: 1-based line 17.
    module = defs["src/shapes.ts"]
    assert (module.kind, module.start_line, module.end_line) == ("namespace", 2, 17)


def test_typescript_references_skip_locals() -> None:
    index = read_index(TS_INDEX)
    total_refs = sorted(
        (r.path, r.line)
        for r in index.references
        if r.symbol == TS + "src/`shapes.ts`/totalArea()."
    )
    assert total_refs == [("src/index.ts", 1), ("src/index.ts", 9)]
    assert all(not r.symbol.startswith("local ") for r in index.references)
    assert all(not d.symbol.startswith("local ") for d in index.definitions)


# ---------------------------------------------------------------- broken files


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScipError, match=r"cannot read SCIP index .*nope\.scip"):
        read_index(tmp_path / "nope.scip")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "index.scip"
    path.write_bytes(b"")
    with pytest.raises(ScipError, match=r"index\.scip is empty \(0 bytes\)"):
        read_index(path)


def test_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "index.scip"
    path.write_bytes(PYTHON_INDEX.read_bytes()[:-7])
    with pytest.raises(ScipError, match=r"index\.scip is truncated or not a SCIP file"):
        read_index(path)


@pytest.mark.parametrize("data", [b"\xff\xff\xff\xff", b"hello, this is not protobuf\n"])
def test_malformed_bytes(data: bytes) -> None:
    with pytest.raises(ScipError, match="truncated or not a SCIP file"):
        read_index_bytes(data)


def test_protobuf_that_is_not_scip() -> None:
    # Field 10, varint 1: valid protobuf, unknown to scip.Index.
    with pytest.raises(ScipError, match="not a SCIP index: it has no metadata and no documents"):
        read_index_bytes(b"\x50\x01", source="other.pb")


def test_index_with_no_documents_is_empty_not_an_error() -> None:
    index = scip_pb2.Index()
    index.metadata.tool_info.name = "scip-python"
    index.metadata.project_root = "file:///repo"
    result = read_index_bytes(index.SerializeToString())
    assert result.is_empty
    assert (result.tool.name, result.definitions, result.references) == ("scip-python", [], [])


def test_bad_occurrences_and_paths_become_problems() -> None:
    index = scip_pb2.Index()
    index.metadata.tool_info.name = "t"
    outside = index.documents.add()
    outside.relative_path = "../etc/passwd"
    doc = index.documents.add()
    doc.relative_path = "a\\b.py"
    bad_range = doc.occurrences.add()
    bad_range.range.extend([1, 2])
    bad_range.symbol = "s . . . f()."
    bad_range.symbol_roles = 1
    bad_symbol = doc.occurrences.add()
    bad_symbol.range.extend([1, 2, 3])
    bad_symbol.symbol = "s . . . f("
    bad_symbol.symbol_roles = 1
    good = doc.occurrences.add()
    good.range.extend([4, 0, 3])
    good.enclosing_range.extend([4, 5, 2])  # ends before it starts: only it is dropped
    good.symbol = "s . . . g()."
    good.symbol_roles = 1
    result = read_index_bytes(index.SerializeToString())
    assert result.paths == ("a/b.py",)
    assert [d.symbol for d in result.definitions] == ["s . . . g()."]
    assert result.definitions[0].enclosing_range is None
    assert len(result.problems) == 4
    assert "'../etc/passwd': not a relative path" in result.problems[0]
    assert "3 or 4 ints" in result.problems[1]
    assert "invalid SCIP symbol" in result.problems[2]
    assert "ends before it starts" in result.problems[3]
