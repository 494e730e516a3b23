"""Where indexes come from, and what happens when one is broken: the others still serve."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.signal import BuildReport, IndexOptions
from engine.types import Query
from signals.symbol.search import SymbolSignal
from signals.symbol.table import SymbolTable
from tests.signals.symbol.repos import (
    PYTHON_DEFINITIONS,
    PYTHON_INDEX,
    build,
    copy_python_toy,
    fake_indexer,
    python_chunks,
    runs,
)

COPY_FIXTURE = f'cp "{PYTHON_INDEX}" "$out"'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_python_toy(tmp_path)


@pytest.fixture(autouse=True)
def no_installed_indexers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Only the fakes a test puts in its bin folder exist (not .tools' real ones)."""
    monkeypatch.setenv("ENGINE_SCIP_BIN_DIR", str(tmp_path / "no-such-bin"))
    monkeypatch.setenv("PATH", f"{tmp_path / 'empty-path'}:/usr/bin:/bin")


def build_toy(
    tmp_path: Path,
    root: Path,
    name: str,
    options: IndexOptions,
    **kwargs: object,
) -> BuildReport:
    return build(
        tmp_path / name,
        root,
        python_chunks(root),
        PYTHON_DEFINITIONS,
        options,
        **kwargs,  # type: ignore[arg-type]
    )


def top_symbol(directory: Path, text: str) -> str:
    signal = SymbolSignal.open(directory)
    try:
        return signal.search(Query(text), 1)[0].symbol
    finally:
        signal.close()


def definitions_by_source(directory: Path) -> dict[str, int]:
    table = SymbolTable.open(directory)
    try:
        return table.sources()
    finally:
        table.close()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\xff\xff\xff\xff", "truncated or not a SCIP file"),
        (PYTHON_INDEX.read_bytes()[:700], "truncated or not a SCIP file"),
        (b"", "empty (0 bytes)"),
    ],
    ids=["malformed", "truncated", "empty"],
)
def test_a_broken_user_file_is_reported_and_tree_sitter_still_serves(
    tmp_path: Path, root: Path, content: bytes, words: str
) -> None:
    given = tmp_path / "given.scip"
    given.write_bytes(content)
    report = build_toy(tmp_path, root, "g1", IndexOptions(tmp_path, scip_file=given))
    assert report.ready
    assert report.meta["sources"] == {"user-file": 0, "tree-sitter": 2}
    assert len(report.problems) == 1
    assert "the SCIP file given not used" in report.problems[0]
    assert words in report.problems[0]
    assert str(given) in report.problems[0]
    assert top_symbol(tmp_path / "g1", "greet") == "toy.greeter.greet"


def test_a_missing_user_file_is_reported(tmp_path: Path, root: Path) -> None:
    given = tmp_path / "nowhere.scip"
    report = build_toy(tmp_path, root, "g1", IndexOptions(tmp_path, scip_file=given))
    assert report.meta["sources"] == {"user-file": 0, "tree-sitter": 2}
    assert "cannot read SCIP index" in report.problems[0]


def test_a_user_file_with_no_documents_is_reported(tmp_path: Path, root: Path) -> None:
    from scip.emit import write_index

    given = tmp_path / "nothing.scip"
    write_index(given, "some-tool", str(root), [])
    report = build_toy(tmp_path, root, "g1", IndexOptions(tmp_path, scip_file=given))
    assert report.meta["sources"] == {"user-file": 0, "tree-sitter": 2}
    assert "holds no documents" in report.problems[0]


def test_a_broken_repository_index_is_reported(tmp_path: Path, root: Path) -> None:
    (root / "index.scip").write_bytes(b"\x0a\xff")
    report = build_toy(tmp_path, root, "g1", IndexOptions(tmp_path))
    assert report.meta["sources"] == {"repo-index": 0, "tree-sitter": 2}
    assert "the repository's index.scip not used" in report.problems[0]


AUTO = {"scip_indexer": "auto"}


def test_a_real_indexer_that_succeeds_covers_its_files(tmp_path: Path, root: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_indexer(bin_dir, "scip-python", COPY_FIXTURE)
    options = IndexOptions(tmp_path, **AUTO)  # type: ignore[arg-type]
    report = build_toy(tmp_path, root, "g1", options, bin_dir=bin_dir)
    assert report.problems == []
    assert report.meta["sources"] == {"scip-python": 3, "tree-sitter": 0}
    assert report.meta["indexers"]["scip-python"]["status"] == "ok"
    assert (tmp_path / "g1" / "scip-python.scip").is_file()
    assert definitions_by_source(tmp_path / "g1") == {"scip-python": 7}
    assert runs(bin_dir) == 1


@pytest.mark.parametrize(
    ("body", "timeout_s", "words"),
    [
        ('echo "pyright blew up" >&2\nexit 3', 60.0, "exited with code 3: pyright blew up"),
        (': > "$out"', 60.0, "wrote an empty index (0 bytes)"),
        ('printf "\\377\\377" > "$out"', 60.0, "wrote an unreadable index"),
        ("sleep 30", 0.5, "did not finish within 0.5 s"),
    ],
    ids=["crash", "empty", "garbage", "timeout"],
)
def test_a_failing_indexer_is_reported_and_tree_sitter_covers_its_files(
    tmp_path: Path, root: Path, body: str, timeout_s: float, words: str
) -> None:
    bin_dir = tmp_path / "bin"
    fake_indexer(bin_dir, "scip-python", body)
    options = IndexOptions(tmp_path, scip_indexer="auto", scip_timeout_s=timeout_s)
    report = build_toy(tmp_path, root, "g1", options, bin_dir=bin_dir)
    assert report.ready
    assert report.meta["sources"] == {"scip-python": 0, "tree-sitter": 2}
    assert len(report.problems) == 1
    assert words in report.problems[0]
    assert "tree-sitter symbols used instead" in report.problems[0]
    assert report.meta["indexers"]["scip-python"]["status"] in ("failed", "timeout")
    assert definitions_by_source(tmp_path / "g1") == {"tree-sitter": 6}
    assert not (tmp_path / "g1" / "scip-python.scip").exists()


def test_indexers_do_not_run_unless_asked(tmp_path: Path, root: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_indexer(bin_dir, "scip-python", COPY_FIXTURE)
    report = build_toy(tmp_path, root, "g1", IndexOptions(tmp_path), bin_dir=bin_dir)
    assert report.meta["sources"] == {"tree-sitter": 2}
    assert runs(bin_dir) == 0


def test_an_indexer_is_not_run_for_files_a_given_index_covers(tmp_path: Path, root: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_indexer(bin_dir, "scip-python", COPY_FIXTURE)
    options = IndexOptions(tmp_path, scip_file=PYTHON_INDEX, scip_indexer="auto")
    report = build_toy(tmp_path, root, "g1", options, bin_dir=bin_dir)
    assert runs(bin_dir) == 0
    assert report.meta["sources"] == {"user-file": 3, "scip-python": 0, "tree-sitter": 0}
    assert "are covered" in report.meta["source_messages"]["scip-python"]


def test_an_update_reuses_the_real_index_until_a_python_file_changes(
    tmp_path: Path, root: Path
) -> None:
    bin_dir = tmp_path / "bin"
    fake_indexer(bin_dir, "scip-python", COPY_FIXTURE)
    options = IndexOptions(tmp_path, scip_indexer="auto")
    first = build_toy(tmp_path, root, "g1", options, bin_dir=bin_dir)
    g1_file = tmp_path / "g1" / "scip-python.scip"
    g1_bytes = g1_file.read_bytes()
    g1_listing = sorted(p.name for p in (tmp_path / "g1").iterdir())

    second = build_toy(
        tmp_path,
        root,
        "g2",
        options,
        bin_dir=bin_dir,
        previous=first,
        previous_dir=tmp_path / "g1",
        changed=["README.md"],
    )
    assert runs(bin_dir) == 1  # reused, not rerun
    assert second.meta["sources"] == {"scip-python": 3, "tree-sitter": 0}
    assert "reused" in second.meta["source_messages"]["scip-python"]
    assert (tmp_path / "g2" / "scip-python.scip").read_bytes() == g1_bytes
    assert definitions_by_source(tmp_path / "g2") == {"scip-python": 7}
    # The previous generation is never written to.
    assert sorted(p.name for p in (tmp_path / "g1").iterdir()) == g1_listing
    assert g1_file.read_bytes() == g1_bytes

    build_toy(
        tmp_path,
        root,
        "g3",
        options,
        bin_dir=bin_dir,
        previous=second,
        previous_dir=tmp_path / "g2",
        changed=["toy/util.py"],
    )
    assert runs(bin_dir) == 2  # a Python file changed: run again


def test_a_failed_indexer_is_not_retried_until_its_files_change(tmp_path: Path, root: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_indexer(bin_dir, "scip-python", "exit 1")
    options = IndexOptions(tmp_path, scip_indexer="auto")
    first = build_toy(tmp_path, root, "g1", options, bin_dir=bin_dir)
    second = build_toy(
        tmp_path, root, "g2", options, bin_dir=bin_dir, previous=first, previous_dir=tmp_path / "g1"
    )
    assert runs(bin_dir) == 1
    assert second.meta["sources"] == {"scip-python": 0, "tree-sitter": 2}
    assert "not rerun" in second.meta["source_messages"]["scip-python"]
    assert second.meta["indexers"]["scip-python"]["status"] == "failed"
    build_toy(
        tmp_path,
        root,
        "g3",
        options,
        bin_dir=bin_dir,
        previous=second,
        previous_dir=tmp_path / "g2",
        changed=["toy/greeter.py"],
    )
    assert runs(bin_dir) == 2


def test_a_damaged_previous_copy_makes_the_indexer_run_again(tmp_path: Path, root: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_indexer(bin_dir, "scip-python", COPY_FIXTURE)
    options = IndexOptions(tmp_path, scip_indexer="auto")
    first = build_toy(tmp_path, root, "g1", options, bin_dir=bin_dir)
    (tmp_path / "g1" / "scip-python.scip").write_bytes(b"")
    second = build_toy(
        tmp_path, root, "g2", options, bin_dir=bin_dir, previous=first, previous_dir=tmp_path / "g1"
    )
    assert runs(bin_dir) == 2
    assert second.meta["sources"] == {"scip-python": 3, "tree-sitter": 0}


def test_an_index_of_another_folder_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "elsewhere"
    root.mkdir()
    (root / "main.py").write_text("def main():\n    pass\n")
    report = build(tmp_path / "g1", root, [], [], IndexOptions(tmp_path, scip_file=PYTHON_INDEX))
    assert report.meta["sources"] == {"user-file": 0, "tree-sitter": 0}
    assert report.problems == [
        "symbol signal: user-file: none of its 3 documents is a file of this repository "
        "(was the index made for another folder?)"
    ]
