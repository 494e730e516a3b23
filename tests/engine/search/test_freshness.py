"""engine/search/freshness.py: results relocated when their code moved, marked when it is gone."""

from __future__ import annotations

from dataclasses import replace

from engine.search.freshness import FileNow, checked, relocate
from engine.search.searcher import Searcher
from engine.types import Hit, Result
from tests.fakes import FakeChunkSource, FakeFiles, FakeSignal, make_chunk

GREET = "def greet(name):\n    return name"


def result(path: str, start: int, content: str) -> Result:
    end = start + content.count("\n")
    return Result("toy", path, start, end, "greet", content, 1.0, ("lexical",))


def test_relocate_finds_whole_lines_nearest_the_indexed_ones() -> None:
    text = "x = 1\ndef greet(name):\n    return name\n\n" + "pad\n" * 20 + GREET + "\n"
    assert relocate(text, GREET, 1) == 2
    assert relocate(text, GREET, 30) == 25
    assert relocate(text, "def greet", 1) is None  # part of a line is not the chunk's lines
    assert relocate(text, "return name", 1) is None
    assert relocate(text, "", 1) is None
    assert relocate(GREET, GREET, 7) == 1  # the whole file, no final newline


def test_an_unchanged_file_keeps_its_results_and_no_warning() -> None:
    files = FakeFiles()
    results, warnings = checked([result("a.py", 1, GREET)], files, "toy")
    assert results[0].freshness == "current"
    assert warnings == []


def test_five_lines_added_on_top_moves_the_result_to_its_current_lines() -> None:
    now = "\n".join(f"# line {i}" for i in range(5)) + "\n" + GREET + "\n"
    files = FakeFiles({"a.py": FileNow("changed", now)})
    (moved,), warnings = checked([result("a.py", 1, GREET)], files, "toy")
    assert (moved.start_line, moved.end_line, moved.freshness) == (6, 7, "moved")
    assert moved.content == GREET
    assert moved.contract_json()["moved"] is True
    assert "stale" not in moved.contract_json()
    assert "a.py (moved)" in warnings[0]
    assert "engine reindex toy" in warnings[0]


def test_a_moved_chunk_moves_its_enclosing_definition_too() -> None:
    files = FakeFiles({"a.py": FileNow("changed", "\n\nclass A:\n" + GREET + "\n")})
    inside = replace(result("a.py", 2, GREET), definition_start_line=1, definition_end_line=3)
    (moved,), _ = checked([inside], files, "toy")
    assert (moved.start_line, moved.definition_start_line, moved.definition_end_line) == (4, 3, 5)


def test_a_change_elsewhere_in_the_file_is_not_a_move() -> None:
    files = FakeFiles({"a.py": FileNow("changed", GREET + "\n\nx = 2\n")})
    (same,), warnings = checked([result("a.py", 1, GREET)], files, "toy")
    assert same.freshness == "current"
    assert warnings == []


def test_an_edited_chunk_is_stale_with_its_indexed_lines_and_a_warning() -> None:
    files = FakeFiles({"a.py": FileNow("changed", "def greet(name):\n    return name.upper()\n")})
    (stale,), warnings = checked([result("a.py", 3, GREET)], files, "toy")
    assert (stale.start_line, stale.end_line, stale.freshness) == (3, 4, "stale")
    assert stale.content == GREET  # what matched, labelled: not the file's lines
    data = stale.contract_json()
    assert data["stale"] is True and "moved" not in data
    assert "a.py (stale)" in warnings[0]
    assert "no longer holds" in warnings[0]


def test_a_deleted_file_is_stale_and_named_deleted() -> None:
    files = FakeFiles({"a.py": FileNow("gone")})
    (gone,), warnings = checked([result("a.py", 1, GREET)], files, "toy")
    assert gone.freshness == "stale"
    assert "a.py (deleted)" in warnings[0]


def test_each_file_is_asked_about_once_and_the_warning_names_a_few() -> None:
    paths = [f"m{i}.py" for i in range(8)]
    files = FakeFiles({p: FileNow("gone") for p in paths})
    results = [result(p, 1, GREET) for p in paths for _ in range(2)]
    out, (warning,) = checked(results, files, "toy")
    assert sorted(files.asked) == sorted(paths)
    assert all(r.freshness == "stale" for r in out)
    assert warning.startswith("8 file(s) changed")
    assert "and 3 more" in warning


def test_the_searcher_checks_its_answers_when_given_the_files() -> None:
    store = FakeChunkSource([make_chunk(1, "src/a.py", GREET, name="greet")])
    lexical = FakeSignal("lexical", {"greet": [Hit(1, 1.0)]})
    files = FakeFiles({"src/a.py": FileNow("changed", "\n\n" + GREET)})
    response = Searcher("toy", store, {"lexical": lexical}, files=files).search("greet")
    (first,) = response.results
    assert (first.start_line, first.freshness) == (3, "moved")
    assert any("src/a.py (moved)" in w for w in response.warnings)
    unchecked = Searcher("toy", store, {"lexical": lexical}).search("greet")
    assert unchecked.results[0].start_line == 1
