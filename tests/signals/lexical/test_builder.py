"""signals/lexical/builder.py: an update is applied in place while the deleted documents it
leaves counted stay few, and otherwise rebuilds to scores exactly equal to a clean build's
(issue 8)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.signal import no_progress
from engine.types import Chunk, Query
from signals.lexical.builder import LexicalBuilder, RebuildPolicy, document_counts
from signals.lexical.schema import SCHEMA_VERSION, document_text
from signals.lexical.search import LexicalSignal
from tests.fakes import make_chunk
from tests.signals.lexical.test_lexical import build

WORDS = [f"{stem}{n}" for stem in ("parse", "token", "buffer", "socket", "cache") for n in range(8)]
QUERIES = ["parse3 token5", "buffer1", "socket7 cache2 parse0", "cache4 buffer6", "token0"]
# Only the share rule, so that a 40-chunk corpus can exercise it.
SHARE_ONLY = RebuildPolicy(max_deleted_share=0.10, small_index_documents=0)


def corpus_chunk(chunk_id: int, seed: int) -> Chunk:
    rng = random.Random(seed)
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))
    return make_chunk(
        chunk_id, f"pkg/mod_{seed % 7}.py", f"def f{seed}():\n    {words}", name=f"f{seed}"
    )


def edited(chunk: Chunk, new_id: int) -> Chunk:
    """The chunk after an edit of its file: a new id and one word more."""
    return make_chunk(new_id, chunk.path, chunk.text + " cache0", name=chunk.name)


def scores(directory: Path, chunks: list[Chunk]) -> dict[str, list[tuple[str, float]]]:
    """Every hit of every query as (chunk name, exact score), so that indexes that number
    their chunks differently compare equal when they score alike."""
    names: dict[int | None, str] = {c.id: c.name for c in chunks}
    signal = LexicalSignal.open(directory)
    return {
        text: sorted((names[h.chunk_id], h.score) for h in signal.search(Query(text), 1000))
        for text in QUERIES
    }


class Repo:
    """A chunk store's worth of chunks and the lexical generations built from it."""

    def __init__(self, root: Path, count: int, policy: RebuildPolicy) -> None:
        self.root = root
        self.policy = policy
        self.chunks = {i: corpus_chunk(i, i) for i in range(1, count + 1)}
        self.next_id = count + 1
        self.generation = 0
        self.meta = build(self.directory, list(self.chunks.values()), policy=policy)

    @property
    def directory(self) -> Path:
        return self.root / f"g{self.generation}"

    def update(self, *, edit: Sequence[int] = (), add: int = 0) -> dict[str, Any]:
        """Edit the chunks ``edit`` (by id) and add ``add`` new ones; the new meta."""
        removed = list(edit)
        added = []
        for chunk_id in removed:
            added.append(edited(self.chunks.pop(chunk_id), self.next_id))
            self.next_id += 1
        for _ in range(add):
            added.append(corpus_chunk(self.next_id, self.next_id))
            self.next_id += 1
        self.chunks.update((c.id, c) for c in added)
        previous = self.directory
        self.generation += 1
        self.meta = build(
            self.directory,
            added,
            previous=previous,
            meta=self.meta,
            removed=removed,
            every=list(self.chunks.values()),
            policy=self.policy,
        )
        return self.meta

    def oldest(self, count: int) -> list[int]:
        return sorted(self.chunks)[:count]

    def matches_clean_build(self, tmp_path: Path) -> bool:
        chunks = list(self.chunks.values())
        clean = tmp_path / f"clean{self.generation}"
        build(clean, chunks)
        return scores(self.directory, chunks) == scores(clean, chunks)


def test_policy_never_rebuilds_without_deletions() -> None:
    policy = RebuildPolicy(max_deleted_share=0.10, small_index_documents=4_000)
    assert not policy.rebuild(deleted=0, documents=10)
    assert not policy.rebuild(deleted=0, documents=1_000_000)


def test_policy_rebuilds_a_small_index_on_any_deletion() -> None:
    policy = RebuildPolicy(max_deleted_share=0.10, small_index_documents=4_000)
    assert policy.rebuild(deleted=1, documents=4_000)
    assert not policy.rebuild(deleted=1, documents=4_001)


def test_policy_rebuilds_above_the_deleted_share() -> None:
    policy = RebuildPolicy(max_deleted_share=0.10, small_index_documents=4_000)
    assert not policy.rebuild(deleted=1_000, documents=10_000)
    assert policy.rebuild(deleted=1_001, documents=10_000)


def test_document_counts_of_an_index_with_deletions(tmp_path: Path) -> None:
    repo = Repo(tmp_path, 40, SHARE_ONLY)
    assert document_counts(repo.directory) == (40, 0)
    repo.update(edit=repo.oldest(2))
    assert document_counts(repo.directory) == (40, 2)
    assert repo.meta["documents"] == 40
    assert repo.meta["deleted_documents"] == 2


@pytest.mark.parametrize("meta_json", ["", "{", '{"segments": [{"max_doc": "x"}]}', "[]"])
def test_document_counts_of_an_unexpected_meta_is_none(tmp_path: Path, meta_json: str) -> None:
    (tmp_path / "meta.json").write_text(meta_json)
    assert document_counts(tmp_path) is None
    assert document_counts(tmp_path / "missing") is None


def test_deletions_up_to_the_share_are_applied_in_place_and_skew_scores(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path, 40, SHARE_ONLY)
    assert repo.update(edit=repo.oldest(2))["deleted_documents"] == 2
    # The skew the policy bounds; without it the exact comparisons here would prove nothing.
    assert not repo.matches_clean_build(tmp_path)
    assert repo.update(edit=repo.oldest(2))["deleted_documents"] == 4  # 10% of 40: not over


def test_deleted_documents_are_counted_by_tantivy_not_estimated(tmp_path: Path) -> None:
    repo = Repo(tmp_path, 40, SHARE_ONLY)
    assert repo.update(edit=[1])["deleted_documents"] == 1
    edited_again = max(repo.chunks)
    # The edited copy's one-document segment is dropped whole once that copy is deleted.
    assert repo.update(edit=[edited_again])["deleted_documents"] == 1
    assert repo.update(edit=[max(repo.chunks)])["deleted_documents"] == 1


def test_deletions_over_the_share_rebuild_to_a_clean_builds_scores(tmp_path: Path) -> None:
    repo = Repo(tmp_path, 40, SHARE_ONLY)
    repo.update(edit=repo.oldest(3))
    assert repo.meta["deleted_documents"] == 3
    meta = repo.update(edit=repo.oldest(2))  # 5 deleted > 10% of 40
    assert meta["deleted_documents"] == 0
    assert meta["documents"] == 40
    assert repo.matches_clean_build(tmp_path)
    meta = repo.update(edit=repo.oldest(1), add=3)  # in place again
    assert meta["deleted_documents"] == 1
    assert meta["documents"] == 43


def test_one_large_update_rebuilds(tmp_path: Path) -> None:
    repo = Repo(tmp_path, 40, SHARE_ONLY)
    meta = repo.update(edit=repo.oldest(10), add=5)
    assert meta["deleted_documents"] == 0
    assert repo.matches_clean_build(tmp_path)


def test_a_small_index_rebuilds_on_every_deletion(tmp_path: Path) -> None:
    repo = Repo(tmp_path, 40, RebuildPolicy())
    for _ in range(3):
        meta = repo.update(edit=repo.oldest(1))
        assert meta["deleted_documents"] == 0
        assert repo.matches_clean_build(tmp_path)


def test_adding_alone_stays_in_place_and_equals_a_clean_build(tmp_path: Path) -> None:
    repo = Repo(tmp_path, 40, RebuildPolicy())
    previous = repo.directory
    repo.update(add=4)
    repo.update(add=4)
    assert document_counts(repo.directory) == (48, 0)
    old_files = {p.name: p.stat().st_ino for p in previous.iterdir()}
    shared = [p for p in repo.directory.iterdir() if old_files.get(p.name) == p.stat().st_ino]
    assert shared, "an in-place update links the previous generation's segments"
    assert repo.matches_clean_build(tmp_path)


def test_a_streamed_index_scores_exactly_like_a_built_one(tmp_path: Path) -> None:
    chunks = [corpus_chunk(i, i) for i in range(1, 41)]
    build(tmp_path / "built", chunks)
    streamed = tmp_path / "streamed"
    streamed.mkdir()
    stream = LexicalBuilder().start_stream(streamed, no_progress)
    # Batches as the indexer feeds them; a missing analysis is made by the stream itself.
    stream.add(chunks[:15], [None] * 15)
    stream.add(chunks[15:], [document_text(c) for c in chunks[15:]])
    report = stream.finish()
    assert report.ready
    assert report.meta == {
        "schema_version": SCHEMA_VERSION,
        "documents": 40,
        "deleted_documents": 0,
    }
    assert scores(streamed, chunks) == scores(tmp_path / "built", chunks)


def test_an_aborted_stream_commits_nothing(tmp_path: Path) -> None:
    import tantivy

    stream = LexicalBuilder().start_stream(tmp_path, no_progress)
    stream.add([corpus_chunk(1, 1)], [None])
    stream.abort()
    index = tantivy.Index.open(str(tmp_path))
    index.reload()
    assert index.searcher().num_docs == 0
