from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.signal import BuildJob
from engine.types import Chunk, Query
from signals.lexical.builder import DEFAULT_POLICY, LexicalBuilder, RebuildPolicy
from signals.lexical.search import LexicalSignal
from tests.fakes import FakeChunkSource, make_chunk

CHUNKS = [
    make_chunk(1, "toy/greeter.py", "def greet(name):\n    return f'Hello {name}'", name="greet"),
    make_chunk(
        2,
        "toy/http.py",
        "def parseHTTPRequest(raw):\n    body = raw.split(b'\\r\\n\\r\\n')[1]\n    return body",
        name="parseHTTPRequest",
    ),
    make_chunk(
        3, "toy/db.py", "class ConnectionPool:\n    size = 4", name="ConnectionPool", kind="class"
    ),
    make_chunk(
        4,
        "docs/request_body.md",
        "The request body is parsed lazily.",
        name="",
        kind="section",
        language="markdown",
    ),
]


def build(
    directory: Path,
    chunks: list[Chunk],
    *,
    previous: Path | None = None,
    meta: dict[str, object] | None = None,
    removed: list[int] | None = None,
    every: list[Chunk] | None = None,
    policy: RebuildPolicy = DEFAULT_POLICY,
) -> dict[str, Any]:
    """Build ``directory``, adding ``chunks`` to ``previous`` (or to nothing); ``every``
    holds all chunks of the new generation (default: ``chunks``), as the store would."""
    directory.mkdir(parents=True)
    job = BuildJob(
        repo_root=Path("/nonexistent"),
        directory=directory,
        previous_dir=previous,
        previous_meta=meta or {},
        added=chunks,
        removed_ids=removed or [],
        removed_paths=[],
        definitions=[],
        changed_paths=[],
        source=FakeChunkSource(chunks if every is None else every),
    )
    report = LexicalBuilder(policy).build(job)
    assert report.ready
    return report.meta


def ids(signal: LexicalSignal, text: str) -> list[int]:
    return [h.chunk_id for h in signal.search(Query(text), 10) if h.chunk_id is not None]


@pytest.fixture
def signal(tmp_path: Path) -> LexicalSignal:
    build(tmp_path / "lex", CHUNKS)
    return LexicalSignal.open(tmp_path / "lex")


def test_identifier_parts_match(signal: LexicalSignal) -> None:
    assert ids(signal, "parse http request")[0] == 2
    assert ids(signal, "parseHTTPRequest")[0] == 2
    assert ids(signal, "connection pool")[0] == 3
    assert ids(signal, "greet")[0] == 1


def test_name_match_outranks_mention(signal: LexicalSignal) -> None:
    found = ids(signal, "request body")
    assert set(found[:2]) == {2, 4}


def test_quoted_phrase_prefers_adjacent_words(signal: LexicalSignal) -> None:
    assert ids(signal, '"request body"')[0] == 4


@pytest.mark.parametrize(
    "text",
    [
        'how does fit() handle sample_weight: (None) "or" arrays? -x +y [a TO',
        "!!!",
        "",
        "\x00",
        "😀 unicode ✓",
        "a" * 100_000,
        '"',
        '""',
    ],
)
def test_hostile_queries_do_not_raise(signal: LexicalSignal, text: str) -> None:
    signal.search(Query(text), 10)


NEVER_REBUILD = RebuildPolicy(max_deleted_share=float("inf"), small_index_documents=0)


@pytest.mark.parametrize("policy", [NEVER_REBUILD, DEFAULT_POLICY], ids=["in-place", "rebuilt"])
def test_incremental_update_leaves_previous_generation_untouched(
    tmp_path: Path, policy: RebuildPolicy
) -> None:
    meta = build(tmp_path / "g1", CHUNKS)
    added = [make_chunk(5, "toy/greeter.py", "def welcome(person):\n    pass", name="welcome")]
    every = [*CHUNKS[1:], *added]
    build(
        tmp_path / "g2",
        added,
        previous=tmp_path / "g1",
        meta=meta,
        removed=[1],
        every=every,
        policy=policy,
    )
    old, new = LexicalSignal.open(tmp_path / "g1"), LexicalSignal.open(tmp_path / "g2")
    assert ids(old, "greet") == [1]
    assert ids(new, "greet") == []
    assert ids(new, "welcome") == [5]
    assert ids(old, "welcome") == []
    assert ids(new, "connection pool")[0] == 3
