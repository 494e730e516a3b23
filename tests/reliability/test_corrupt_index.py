"""Damaged index files: a clear error or one signal dropped, never a crash; a rebuild repairs.

Every file of a generation is damaged in turn (truncated, emptied, or its header overwritten)
through the CLI, as a user would meet it. A damaged chunk store, manifest or pointer makes
the index unusable: the error names the command that rebuilds it. A damaged signal is left
out with a warning naming the same command while the other signals answer. Running that
command (``engine index ROOT --name SLUG --full``) restores the original answers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.index.generations import POINTER, current_generation
from engine.index.home import Home
from tests.reliability.conftest import cli

QUERIES = ("greet", "backoff delay for a retried request", "shout")

Damage = Callable[[Path], None]


def truncate_half(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def empty(path: Path) -> None:
    os.truncate(path, 0)


def scribble_header(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.write(b"\xde\xad\xbe\xef" * 16)


DAMAGES: dict[str, Damage] = {
    "truncated": truncate_half,
    "emptied": empty,
    "scribbled": scribble_header,
}

# File (glob inside the published generation) -> the signal it belongs to ("" = the index).
FILES: dict[str, str] = {
    "chunks.sqlite": "",
    "manifest.json": "",
    "lexical/meta.json": "lexical",
    "lexical/*.idx": "lexical",
    "lexical/*.term": "lexical",
    "lexical/*.store": "lexical",
    "vector/vectors.faiss": "vector",
    "vector/layout.json": "vector",
    "symbol/symbols.sqlite": "symbol",
}


def answers(*, expect_warning: str = "") -> dict[str, Any]:
    """Each query's results through the CLI; asserts exit code 0."""
    found: dict[str, Any] = {}
    for text in QUERIES:
        code, data = cli("query", "toy", text)
        assert code == 0, data
        if expect_warning:
            assert expect_warning in data.get("warning", ""), data
        else:
            assert "warning" not in data, data["warning"]
        found[text] = data["results"]
    return found


def hint(repo: Path) -> str:
    return f"engine index {repo.resolve()} --name toy --full"


@pytest.fixture
def built(home: Home, repo: Path) -> dict[str, Any]:
    """The toy repository indexed through the CLI; its answers before any damage."""
    code, _ = cli("index", str(repo), "--name", "toy")
    assert code == 0
    return answers()


def published(home: Home) -> Path:
    generation = current_generation(home.repo_dir("toy"))
    assert generation is not None
    return generation


def rebuild_restores(repo: Path, before: dict[str, Any]) -> None:
    code, report = cli("index", str(repo), "--name", "toy", "--full")
    assert code == 0, report
    assert answers() == before


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("pattern", list(FILES))
def test_damaged_file_is_reported_and_a_full_rebuild_repairs_it(
    home: Home, repo: Path, built: dict[str, Any], pattern: str, damage: str
) -> None:
    (target,) = published(home).glob(pattern)
    DAMAGES[damage](target)
    signal = FILES[pattern]
    results: dict[str, Any] = {}
    for text in QUERIES:
        code, data = cli("query", "toy", text)
        if code == 1:
            # The index as a whole is unusable: the error names the rebuild.
            assert hint(repo) in data["error"], data
            continue
        assert code == 0
        results[text] = data["results"]
        warning = data.get("warning", "")
        if warning:
            # Found when the signal opens (off) or only when it reads the damage (failed).
            if f"the {signal} signal is off" in warning:
                assert hint(repo) in warning, warning
            else:
                assert f"{signal} signal failed" in warning, warning
                assert "engine reindex toy --full" in warning, warning
            assert data["results"], "the other signals still answer"
            assert all(signal not in r["sources"] for r in data["results"])
    code, status = cli("status", "toy")
    assert code in (0, 1)
    if code == 1:
        assert hint(repo) in status["error"]
    rebuild_restores(repo, built)


@pytest.mark.parametrize("pattern", ["chunks.sqlite", "manifest.json"])
def test_plain_reindex_also_repairs_a_damaged_store_or_manifest(
    home: Home, repo: Path, built: dict[str, Any], pattern: str
) -> None:
    empty(published(home) / pattern)
    code, data = cli("query", "toy", "greet")
    assert code == 1 and hint(repo) in data["error"]
    code, report = cli("reindex", "toy")
    assert code == 0, report
    assert report["fullRebuild"] is True
    assert answers() == built


@pytest.mark.parametrize(
    "pointer",
    ["", "garbage\n", "gen-999999\n", "gen-000001/../../etc\n", "\x00\xff\n"],
    ids=["empty", "garbage", "missing-generation", "traversal", "binary"],
)
def test_damaged_pointer_is_an_error_and_reindex_repairs_it(
    home: Home, repo: Path, built: dict[str, Any], pointer: str
) -> None:
    (home.repo_dir("toy") / POINTER).write_text(pointer, errors="surrogateescape")
    code, data = cli("query", "toy", "greet")
    assert code == 1
    assert hint(repo) in data["error"]
    code, report = cli("reindex", "toy")
    assert code == 0, report
    assert answers() == built


def test_missing_pointer_after_generations_were_written(
    home: Home, repo: Path, built: dict[str, Any]
) -> None:
    (home.repo_dir("toy") / POINTER).unlink()
    code, data = cli("query", "toy", "greet")
    assert code == 1
    assert "engine reindex toy" in data["error"]
    code, _ = cli("reindex", "toy")
    assert code == 0
    assert answers() == built


def test_damaged_registration_names_the_fix(home: Home, repo: Path, built: dict[str, Any]) -> None:
    (home.repo_dir("toy") / "repo.json").write_text("{not json")
    code, data = cli("query", "toy", "greet")
    assert code == 1
    assert "engine index PATH --name toy" in data["error"]
    code, _ = cli("index", str(repo), "--name", "toy")
    assert code == 0
    assert answers() == built


def test_every_signal_damaged_is_an_error_naming_the_fix(
    home: Home, repo: Path, built: dict[str, Any]
) -> None:
    generation = published(home)
    for pattern in ("lexical/meta.json", "vector/vectors.faiss", "symbol/symbols.sqlite"):
        (target,) = generation.glob(pattern)
        empty(target)
    code, data = cli("query", "toy", "greet")
    assert code == 1
    assert "no signal of toy can answer" in data["error"]
    assert hint(repo) in data["error"]
    rebuild_restores(repo, built)


def test_damage_in_an_old_generation_does_not_touch_the_published_one(
    home: Home, repo: Path, built: dict[str, Any]
) -> None:
    (repo / "toy" / "extra.py").write_text("def extra_function():\n    pass\n")
    code, _ = cli("reindex", "toy")
    assert code == 0
    after = answers()
    current = published(home)
    for old in home.repo_dir("toy").glob("gen-*"):
        if old != current:
            # Replace (not rewrite) the files: published generations share them by hard link.
            for path in old.rglob("*"):
                if path.is_file():
                    path.unlink()
                    path.write_bytes(b"junk")
    assert answers() == after


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_embedding_cache_is_set_aside_and_rebuilt(
    home: Home, repo: Path, built: dict[str, Any], damage: str
) -> None:
    # One cache per embedder (the fast tier's and the full model's): damage them all.
    caches = sorted((home.root / "cache").glob("embeddings-*.sqlite"))
    assert caches
    for cache in caches:
        DAMAGES[damage](cache)
    (repo / "toy" / "extra.py").write_text("def extra_function():\n    pass\n")
    code, report = cli("reindex", "toy")
    assert code == 0, report
    assert report["problems"] == []
    assert report["signals"]["vector"]["ready"] is True
    # The cache this update embeds with is set aside (SQLite takes an empty file as a new
    # one); a tier this update does not build keeps its file until it is next opened.
    set_aside = [p for c in caches for p in (home.root / "cache").glob(f"{c.name}.damaged-*")]
    assert (len(set_aside) >= 1) == (damage != "emptied")
    code, data = cli("query", "toy", "extra function")
    assert code == 0 and "warning" not in data
    assert data["results"][0]["filePath"] == "toy/extra.py"


def test_agent_tools_report_damage_with_the_fix(
    home: Home, repo: Path, built: dict[str, Any]
) -> None:
    from cli.serve.indexes import IndexCache
    from cli.serve.reindex import ReindexJobs
    from cli.serve.server import run_tool
    from cli.serve.tools import TOOLS, ToolContext
    from signals import registry

    search = next(spec for spec in TOOLS if spec.name == "semanticSearch")
    generation = published(home)
    (target,) = generation.glob("symbol/symbols.sqlite")
    scribble_header(target)
    indexes = IndexCache(home, registry.plugins())
    jobs = ReindexJobs(home.root)
    context = ToolContext(home, indexes, jobs)
    try:
        data = run_tool(search, context, {"repo": "toy", "query": "greet"})
        assert data["results"] and hint(repo) in data["warning"]
        empty(generation / "manifest.json")
        data = run_tool(search, context, {"repo": "toy", "query": "greet"})
        assert data["results"], "the open generation keeps answering"
        # A server started now cannot open it: the error names the fix.
        fresh = IndexCache(home, registry.plugins())
        try:
            data = run_tool(search, ToolContext(home, fresh, jobs), {"repo": "toy", "query": "x"})
        finally:
            fresh.close()
        assert hint(repo) in data["error"]
    finally:
        jobs.close()
        indexes.close()
