from __future__ import annotations

from pathlib import Path

from engine.types import Filters
from signals.vector.chunk_table import ChunkTable, path_may_match
from tests.fakes import make_chunk


def _table() -> ChunkTable:
    table = ChunkTable()
    table.put(
        [
            make_chunk(1, "src/a.py", "x", name="f"),
            make_chunk(2, "src/sub/b.ts", "y", name="g", language="typescript", kind="class"),
            make_chunk(3, "docs/readme.md", "z", name="", language="markdown", kind="section"),
        ]
    )
    return table


def test_save_load_and_ids_under_paths(tmp_path: Path) -> None:
    _table().save(tmp_path)
    table = ChunkTable.load(tmp_path)
    assert table.ids() == [1, 2, 3]
    assert sorted(table.ids_under(["src/sub"])) == [2]
    assert sorted(table.ids_under(["src/a.py", "docs/"])) == [1, 3]
    assert table.ids_under(["src/a"]) == []


def test_filters() -> None:
    table = _table()
    ids = [1, 2, 3, 42]  # 42 is unknown: let through, the searcher decides
    assert table.allowed(ids, Filters(languages=("python",))).tolist() == [True, False, False, True]
    assert table.allowed(ids, Filters(kinds=("class",))).tolist() == [False, True, False, True]
    assert table.allowed(ids, Filters(path_globs=("src/**/*.ts",))).tolist() == [
        False,
        True,
        False,
        True,
    ]


def test_path_globs_match_generously() -> None:
    assert path_may_match("src/a.py", "src/**/*.py")
    assert path_may_match("src/x/a.py", "src/**/*.py")
    assert path_may_match("src/x/a.py", "src")
    assert path_may_match("src/x/a.py", "./src/")
    assert path_may_match("src/x/a.py", "*.py")
    assert path_may_match("lib/x/a.py", "x")
    assert not path_may_match("src/x/a.py", "lib/**")
    assert not path_may_match("src/x/a.py", "*.ts")
