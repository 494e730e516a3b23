"""A query that brings its vector (issue 16): used when its embedder is the index's, and the
signal opened for such queries never loads a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.errors import SignalUnavailable
from engine.signal import IndexOptions, OpenOptions
from engine.types import Query, QueryVector
from signals.vector import signal as vector_signal
from signals.vector.builder import VectorBuilder
from signals.vector.embedder import HashingEmbedder
from signals.vector.plugin import PLUGIN
from signals.vector.query_vector import embed_query, model_of
from tests.fakes import CHUNKS, FakeChunkSource, Generations, fake_loader

TEXT = "render a template with context"


def _build(home: Path, generations: Generations) -> tuple[Path, dict[str, Any]]:
    builder = VectorBuilder(IndexOptions(home=home), load_model=fake_loader(HashingEmbedder(64)))
    directory, report = generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)
    return directory, report.meta


def _ids(hits: list[Any]) -> list[tuple[int | None, float]]:
    return [(h.chunk_id, round(h.score, 6)) for h in hits]


def test_a_vector_from_the_index_model_gives_the_embedded_answer(
    home: Path, generations: Generations
) -> None:
    directory, meta = _build(home, generations)
    vector = embed_query(model_of(meta), TEXT, home)
    assert vector.embedder == meta["model"]["model_id"]
    assert vector.dim == 64
    local = PLUGIN.open(directory, meta, OpenOptions(home=home))
    expected = _ids(local.search(Query(TEXT), 3))
    assert _ids(local.search(Query(TEXT, vectors=(vector,)), 3)) == expected
    shard = PLUGIN.open(directory, meta, OpenOptions(home=home, query_vectors=True))
    assert _ids(shard.search(Query(TEXT, vectors=(vector,)), 3)) == expected


def test_opened_for_query_vectors_it_loads_no_model(
    home: Path, generations: Generations, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory, meta = _build(home, generations)

    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("the shard loaded an embedding model")

    monkeypatch.setattr(vector_signal, "load_query_embedder", no_model)
    shard = PLUGIN.open(directory, meta, OpenOptions(home=home, query_vectors=True))
    other = QueryVector("another-model", b"\0" * 256)
    with pytest.raises(SignalUnavailable, match="brought: another-model"):
        shard.search(Query(TEXT, vectors=(other,)), 3)
    with pytest.raises(SignalUnavailable, match="brought: none"):
        shard.search(Query(TEXT), 3)


def test_a_vector_from_another_model_is_ignored_where_the_signal_can_embed(
    home: Path, generations: Generations
) -> None:
    directory, meta = _build(home, generations)
    local = PLUGIN.open(directory, meta, OpenOptions(home=home))
    other = QueryVector("another-model", b"\0" * 256)
    assert _ids(local.search(Query(TEXT, vectors=(other,)), 3)) == _ids(
        local.search(Query(TEXT), 3)
    )


def test_a_vector_of_the_wrong_size_is_refused(home: Path, generations: Generations) -> None:
    directory, meta = _build(home, generations)
    shard = PLUGIN.open(directory, meta, OpenOptions(home=home, query_vectors=True))
    short = QueryVector(str(meta["model"]["model_id"]), b"\0" * 128)
    with pytest.raises(SignalUnavailable, match="32 dimensions"):
        shard.search(Query(TEXT, vectors=(short,)), 3)
