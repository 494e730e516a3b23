"""Saved signal runs: what a snapshot keeps of the store, the round trip, cutting to a depth."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.types import Definition, Hit, Location, SignalRun
from eval.replay import ReplayMiss, ReplayStore, SavedQuery, cut, load, save, snapshot
from tests.fakes import make_chunk


def definition(path: str, name: str, start: int, end: int) -> Definition:
    return Definition(path, "python", "function", name, name, start, 4, 4 + len(name), start, end)


def source() -> ReplayStore:
    """A four-file repository: a.py and b.py with two chunks each, c.py and d.py one each."""
    chunks = [
        make_chunk(1, "a.py", name="f"),
        make_chunk(2, "a.py", name="g", start_line=5),
        make_chunk(3, "b.py", name="h"),
        make_chunk(4, "b.py", name="i", start_line=5),
        make_chunk(5, "c.py", name="j"),
        make_chunk(6, "d.py", name="k"),
    ]
    definitions = {
        p: [definition(p, c.name, c.start_line, c.end_line) for c in chunks if c.path == p]
        for p in ("a.py", "b.py", "c.py", "d.py")
    }
    return ReplayStore(
        {c.id: c for c in chunks}, ["a.py", "b.py", "c.py", "d.py"], definitions, frozenset({"pkg"})
    )


def test_a_snapshot_keeps_the_runs_chunks_their_first_files_whole_and_touched_definitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("eval.replay.WHOLE_FILES", 1)
    runs = [
        SignalRun("lexical", [Hit(1, 2.5), Hit(3, 1.0)], 1.5),
        SignalRun("symbol", [Hit(None, 9.0, "d.k", Location("d.py", 1, 2))], 0.1, tier="full"),
        SignalRun("vector", [], 3.0, error="RuntimeError: boom"),
    ]
    data = snapshot(source(), [SavedQuery("as-is", "why f", runs)], id="x-1", indexSeconds=2.0)
    path = tmp_path / "x-1.json.gz"
    save(path, data)
    saved = load(path)

    assert saved.meta["id"] == "x-1" and saved.meta["indexSeconds"] == 2.0
    [query] = saved.queries
    assert (query.variant, query.text) == ("as-is", "why f")
    assert query.runs == runs  # hits, locations, errors and tiers as they were
    store = saved.store
    # Whole: a.py (lexical's first file) and d.py (symbol's); b.py only for the chunk named.
    assert [c.id for c in store.chunks_in_file("a.py")] == [1, 2]
    assert set(store.chunks([1, 2, 3, 4, 5, 6])) == {1, 2, 3, 6}  # not b.py's 4, nor c.py
    with pytest.raises(ReplayMiss, match=r"b\.py was not saved whole"):
        store.chunks_in_file("b.py")
    assert [d.name for d in store.definitions_in_file("b.py")] == ["h", "i"]
    assert [d.name for d in store.definitions_in_file("d.py")] == ["k"]  # a location's file
    assert store.definitions_in_file("c.py") == []  # untouched by the runs
    assert store.package_dirs() == frozenset({"pkg"})
    assert not list(tmp_path.glob("*.partial"))
    # Not strict (a frame's trailing paths are looked up): an unsaved file reads as empty,
    # and is counted.
    lenient = load(path, strict=False).store
    assert lenient.chunks_in_file("b.py") == [] and lenient.missed == {"b.py"}


def test_cut_keeps_each_runs_first_hits() -> None:
    runs = [SignalRun("lexical", [Hit(1, 3.0), Hit(2, 2.0), Hit(3, 1.0)], 1.0, tier="t")]
    assert cut(runs, 2) == [SignalRun("lexical", [Hit(1, 3.0), Hit(2, 2.0)], 1.0, tier="t")]
    assert cut(runs, 9) == runs


def test_a_file_of_another_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.json.gz"
    save(path, {"format": 0})
    with pytest.raises(ValueError, match="replay format 0, expected 1"):
        load(path)
