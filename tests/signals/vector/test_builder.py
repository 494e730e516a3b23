from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.errors import SignalUnavailable
from engine.signal import IndexOptions
from engine.types import Chunk
from signals.vector.builder import DEFAULT_EMBED, VectorBuilder
from signals.vector.cache import cache_path
from signals.vector.documents import DOC_FORMAT
from signals.vector.embedder import FloatMatrix, HashingEmbedder
from signals.vector.faiss_index import VectorStore, chunk_ids_of
from signals.vector.loader import HASHING, LoadedModel, model_meta
from signals.vector.meta import EmbedSettings
from tests.fakes import (
    CHUNKS,
    FakeChunkSource,
    Generations,
    fake_loader,
    make_chunk,
)


def _builder(home: Path, embedder: HashingEmbedder, **kwargs: object) -> VectorBuilder:
    return VectorBuilder(IndexOptions(home=home), load_model=fake_loader(embedder), **kwargs)  # type: ignore[arg-type]


def _indexed_chunk_ids(directory: Path) -> list[int]:
    return sorted(set(chunk_ids_of(VectorStore.load(directory).live_ids()).tolist()))


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir()}


def test_first_build_indexes_every_chunk_and_records_meta(
    home: Path, generations: Generations
) -> None:
    embedder = HashingEmbedder(dim=32)
    directory, report = generations.build(_builder(home, embedder), FakeChunkSource(CHUNKS), CHUNKS)
    assert report.ready
    assert _indexed_chunk_ids(directory) == [1, 2, 3]
    meta = report.meta
    assert meta["model_id"] == embedder.model_id
    assert meta["model_name"] == embedder.model_id
    assert meta["dim"] == 32
    assert meta["doc_format"] == DOC_FORMAT
    assert meta["vectors"] == 3
    assert meta["chunks"] == 3
    assert meta["coverage"] == 1.0
    assert "weights_sha256" in meta
    assert embedder.embedded_texts == 3


def test_incremental_update_embeds_only_added_chunks_and_leaves_previous_alone(
    home: Path, generations: Generations
) -> None:
    embedder = HashingEmbedder(dim=32)
    builder = _builder(home, embedder)
    first, _ = generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)
    before = _snapshot(first)
    new = make_chunk(
        4, "net/client.py", "def send_request(url):\n    return get(url)", name="send_request"
    )
    source = FakeChunkSource([CHUNKS[0], CHUNKS[2], new])
    second, report = generations.build(builder, source, [new], removed_ids=[2])
    assert report.ready
    assert _indexed_chunk_ids(second) == [1, 3, 4]
    assert report.meta["vectors"] == 3
    assert embedder.embedded_texts == 4  # 3 the first time, 1 now
    assert _snapshot(first) == before
    assert _indexed_chunk_ids(first) == [1, 2, 3]


def test_removed_paths_drop_their_chunks(home: Path, generations: Generations) -> None:
    builder = _builder(home, HashingEmbedder(dim=32))
    generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)
    directory, report = generations.build(
        builder, FakeChunkSource([CHUNKS[1]]), [], removed_paths=["net", "ui/render.py"]
    )
    assert _indexed_chunk_ids(directory) == [2]
    assert report.meta["coverage"] == 1.0


def test_resent_chunk_replaces_its_vector(home: Path, generations: Generations) -> None:
    builder = _builder(home, HashingEmbedder(dim=32))
    generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)
    directory, report = generations.build(builder, FakeChunkSource(CHUNKS), [CHUNKS[0]])
    assert report.meta["vectors"] == 3
    assert _indexed_chunk_ids(directory) == [1, 2, 3]


def test_second_build_of_the_same_texts_embeds_nothing(home: Path, tmp_path: Path) -> None:
    generations = Generations(tmp_path / "first")
    generations.build(_builder(home, HashingEmbedder(dim=32)), FakeChunkSource(CHUNKS), CHUNKS)
    # A rebuilt index (new folder, no previous generation), same home: all from the cache.
    again = HashingEmbedder(dim=32)
    rebuilt = Generations(tmp_path / "rebuilt")
    directory, report = rebuilt.build(_builder(home, again), FakeChunkSource(CHUNKS), CHUNKS)
    assert again.embedded_texts == 0
    assert _indexed_chunk_ids(directory) == [1, 2, 3]
    assert "3 reused" in report.message
    # The caller names the signal ("vector: ready built with ..."): the message does not.
    assert report.message.startswith("built with")


def _moved(chunk: Chunk, new_id: int, path: str) -> Chunk:
    return make_chunk(new_id, path, chunk.text, name=chunk.name)


def test_moved_file_keeps_its_cache_hits_when_documents_leave_out_the_path(
    home: Path, generations: Generations
) -> None:
    embedder = HashingEmbedder(dim=32)
    builder = _builder(home, embedder, include_path=False)
    generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)
    moved = _moved(CHUNKS[0], 10, "web/http.py")
    directory, _ = generations.build(
        builder, FakeChunkSource([moved, *CHUNKS[1:]]), [moved], removed_paths=["net/http.py"]
    )
    assert embedder.embedded_texts == 3
    assert _indexed_chunk_ids(directory) == [2, 3, 10]


def test_moved_file_is_embedded_again_when_documents_hold_the_path(
    home: Path, generations: Generations
) -> None:
    embedder = HashingEmbedder(dim=32)
    builder = _builder(home, embedder)
    generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)
    moved = _moved(CHUNKS[0], 10, "web/http.py")
    generations.build(
        builder, FakeChunkSource([moved, *CHUNKS[1:]]), [moved], removed_paths=["net/http.py"]
    )
    assert embedder.embedded_texts == 4  # only the moved chunk: its text names its path


class _InterruptedEmbedder(HashingEmbedder):
    """Fails like Ctrl-C on the call numbered ``fail_on`` (1-based)."""

    def __init__(self, fail_on: int) -> None:
        super().__init__(dim=32)
        self._fail_on = fail_on

    def embed_documents(self, texts: list[str]) -> FloatMatrix:  # type: ignore[override]
        if self.calls + 1 == self._fail_on:
            raise KeyboardInterrupt
        return super().embed_documents(texts)


def test_interrupted_embedding_keeps_finished_batches(home: Path, tmp_path: Path) -> None:
    chunks = [
        make_chunk(i, f"f{i}.py", f"return {i} * word{i}", name=f"func_{i}") for i in range(10)
    ]
    source = FakeChunkSource(chunks)
    interrupted = _InterruptedEmbedder(fail_on=3)
    with pytest.raises(KeyboardInterrupt):
        Generations(tmp_path / "a").build(_builder(home, interrupted, batch_size=2), source, chunks)
    assert interrupted.embedded_texts == 4  # two batches of two finished
    resumed = HashingEmbedder(dim=32)
    _, report = Generations(tmp_path / "b").build(
        _builder(home, resumed, batch_size=2), source, chunks
    )
    assert resumed.embedded_texts == 6
    assert report.meta["vectors"] == 10


def test_a_different_model_reembeds_every_chunk_of_the_generation(
    home: Path, generations: Generations
) -> None:
    generations.build(_builder(home, HashingEmbedder(dim=32)), FakeChunkSource(CHUNKS), CHUNKS)
    other = HashingEmbedder(dim=48)
    new = make_chunk(4, "x.py", "return x", name="x")
    source = FakeChunkSource([*CHUNKS, new])
    directory, report = generations.build(_builder(home, other), source, [new])
    assert other.embedded_texts == 4
    assert report.meta["dim"] == 48
    assert _indexed_chunk_ids(directory) == [1, 2, 3, 4]


def test_progress_is_reported_per_batch(home: Path, generations: Generations) -> None:
    calls: list[tuple[str, int, int]] = []
    chunks = [make_chunk(i, f"f{i}.py", f"return {i}", name=f"f{i}") for i in range(5)]
    builder = _builder(home, HashingEmbedder(dim=16), batch_size=2)
    directory = generations.root / "manual" / "vector"
    directory.mkdir(parents=True)
    from engine.signal import BuildJob

    builder.build(
        BuildJob(
            repo_root=generations.root,
            directory=directory,
            previous_dir=None,
            previous_meta={},
            added=chunks,
            removed_ids=(),
            removed_paths=(),
            definitions=(),
            changed_paths=(),
            source=FakeChunkSource(chunks),
            progress=lambda stage, done, total: calls.append((stage, done, total)),
        )
    )
    assert calls == [
        ("embedding", 0, 5),
        ("embedding", 2, 5),
        ("embedding", 4, 5),
        ("embedding", 5, 5),
    ]


def test_long_chunks_get_several_vectors_when_asked(home: Path, generations: Generations) -> None:
    text = "\n".join(f"    step_{i} = run_{i}(step_{i - 1})" for i in range(150))
    chunks = [make_chunk(1, "long.py", text, name="pipeline"), CHUNKS[1]]
    directory, report = generations.build(
        _builder(home, HashingEmbedder(dim=32), max_parts=4), FakeChunkSource(chunks), chunks
    )
    assert report.meta["vectors"] == 5
    assert report.meta["chunks"] == 2
    assert report.meta["max_parts"] == 4
    assert _indexed_chunk_ids(directory) == [1, 2]


def test_unavailable_model_gives_a_not_ready_report(home: Path, generations: Generations) -> None:
    def missing(options: IndexOptions, embed: EmbedSettings) -> LoadedModel:
        raise SignalUnavailable("embedding model folder /nope does not exist")

    builder = VectorBuilder(IndexOptions(home=home), load_model=missing)
    assert builder.name == "vector"
    assert builder.slow is True
    _, report = generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)
    assert not report.ready
    assert "/nope" in report.message


def test_vectors_in_the_index_are_the_embedders(home: Path, generations: Generations) -> None:
    embedder = HashingEmbedder(dim=32)
    directory, _ = generations.build(_builder(home, embedder), FakeChunkSource(CHUNKS), CHUNKS)
    store = VectorStore.load(directory)
    ids, scores = store.search(embedder.embed_query("connect database url sqlite"), 1)
    assert chunk_ids_of(ids).tolist() == [2]
    assert 0.0 < float(scores[0]) <= 1.0 + 1e-6


class SettingsRecorder:
    """A loader that records which embedding settings the builder asked for."""

    def __init__(self) -> None:
        self.asked: list[EmbedSettings] = []
        self.folders: list[str | None] = []

    def __call__(self, options: IndexOptions, embed: EmbedSettings) -> LoadedModel:
        self.asked.append(embed)
        self.folders.append(options.model)
        embedder = HashingEmbedder(dim=16, model_id=f"hash-{embed.precision}")
        meta = model_meta(
            None,
            backend=HASHING,
            model_id=embedder.model_id,
            dim=16,
            max_seq_length=256,
            precision=embed.precision,
            document_tokens=embed.document_tokens,
        )
        if options.model:
            meta["path"] = options.model
        return LoadedModel(embedder, meta)


def test_embedding_settings_come_from_options_then_the_index_then_the_default(
    home: Path, tmp_path: Path
) -> None:
    loader = SettingsRecorder()
    generations = Generations(tmp_path / "a")
    generations.build(
        VectorBuilder(IndexOptions(home=home), load_model=loader), FakeChunkSource(CHUNKS), CHUNKS
    )
    assert loader.asked[-1] == DEFAULT_EMBED

    chosen = IndexOptions(home=home, embed_precision="int8", document_tokens=96)
    _, report = generations.build(
        VectorBuilder(chosen, load_model=loader), FakeChunkSource(CHUNKS), []
    )
    assert loader.asked[-1] == EmbedSettings("int8", 96)
    assert report.meta["document_tokens"] == 96
    assert report.meta["model"]["precision"] == "int8"

    # A later update with no choice keeps what the index recorded, so it re-embeds nothing.
    _, report = generations.build(
        VectorBuilder(IndexOptions(home=home), load_model=loader), FakeChunkSource(CHUNKS), []
    )
    assert loader.asked[-1] == EmbedSettings("int8", 96)
    assert "updated" in report.message


def test_an_unknown_precision_leaves_the_signal_not_ready(home: Path, tmp_path: Path) -> None:
    # A manifest written by another version may name a precision this one does not know.
    options = IndexOptions(home=home, embed_precision="fp8")  # type: ignore[arg-type]
    _, report = Generations(tmp_path).build(
        VectorBuilder(options, load_model=SettingsRecorder()), FakeChunkSource(CHUNKS), CHUNKS
    )
    assert not report.ready
    assert "fp8" in report.message


def test_documents_cut_shorter_than_the_model_limit_get_their_own_cache(
    home: Path, tmp_path: Path
) -> None:
    loader = SettingsRecorder()
    for tokens, root in ((256, "full"), (128, "cut")):
        options = IndexOptions(home=home, document_tokens=tokens)
        _, report = Generations(tmp_path / root).build(
            VectorBuilder(options, load_model=loader), FakeChunkSource(CHUNKS), CHUNKS
        )
        # Nothing from the full-length run may be reused for the cut documents.
        assert "3 texts embedded, 0 reused" in report.message, report.message
    default = f"hash-{DEFAULT_EMBED.precision}"
    assert cache_path(home, default).exists()
    assert cache_path(home, f"{default}/t128").exists()


def test_a_reindex_keeps_the_model_folder_the_index_was_built_with(
    home: Path, tmp_path: Path
) -> None:
    loader = SettingsRecorder()
    generations = Generations(tmp_path)
    chosen = IndexOptions(home=home, model="/models/code-model")
    generations.build(VectorBuilder(chosen, load_model=loader), FakeChunkSource(CHUNKS), CHUNKS)
    generations.build(
        VectorBuilder(IndexOptions(home=home), load_model=loader), FakeChunkSource(CHUNKS), []
    )
    other = IndexOptions(home=home, model="/models/other")
    generations.build(VectorBuilder(other, load_model=loader), FakeChunkSource(CHUNKS), [])
    assert loader.folders == ["/models/code-model", "/models/code-model", "/models/other"]


def test_settings_changed_only_for_an_explicit_choice_the_index_lacks(home: Path) -> None:
    recorded = {
        "document_tokens": 256,
        "model": {"path": "/models/a", "precision": "fp32", "document_tokens": 256},
    }

    def changed(**choice: Any) -> bool:
        return VectorBuilder(IndexOptions(home=home, **choice)).settings_changed(recorded)

    assert not changed()
    assert not changed(embed_precision="fp32", document_tokens=256, model="/models/a")
    assert changed(embed_precision="int8")
    assert changed(document_tokens=128)
    assert changed(model="/models/b")
    assert not VectorBuilder(IndexOptions(home=home, embed_precision="int8")).settings_changed({})


def _many_chunks(first: int, count: int) -> list[Chunk]:
    words = ["parse", "render", "socket", "cache", "token", "matrix", "retry", "window"]
    return [
        make_chunk(
            i,
            f"pkg/m{i}.py",
            f"def f{i}():\n    return {words[i % 8]}_{i} + {words[(i * 5) % 8]}_{i * 3}",
            name=f"f{i}",
        )
        for i in range(first, first + count)
    ]


def _finds_itself(directory: Path, embedder: HashingEmbedder, chunks: list[Chunk]) -> bool:
    from signals.vector.documents import document_parts

    store = VectorStore.load(directory)
    vectors = embedder.embed_documents([document_parts(c)[0] for c in chunks])
    return all(
        int(chunk_ids_of(store.search(v, 1)[0])[0]) == c.id
        for v, c in zip(vectors, chunks, strict=True)
    )


def test_the_index_is_exact_below_the_threshold_and_approximate_above(
    home: Path, tmp_path: Path
) -> None:
    chunks = _many_chunks(1, 120)
    embedder = HashingEmbedder(dim=128)
    small, report = Generations(tmp_path / "small").build(
        _builder(home, embedder, ann_threshold=200), FakeChunkSource(chunks), chunks
    )
    assert report.meta["layout"] == "flat"
    assert "ann" not in report.meta  # an exact index's meta is what it was before ivf
    large, report = Generations(tmp_path / "large").build(
        _builder(home, embedder, ann_threshold=100), FakeChunkSource(chunks), chunks
    )
    assert report.meta["layout"] == "ivf"
    assert report.meta["ann"] == {"codes": "sq8", "lists": 3, "probes": 3}
    assert _indexed_chunk_ids(large) == _indexed_chunk_ids(small) == list(range(1, 121))
    assert _finds_itself(large, embedder, chunks[::9])


def test_an_index_crossing_the_threshold_on_reindex_converts_and_back(
    home: Path, generations: Generations
) -> None:
    embedder = HashingEmbedder(dim=128)
    builder = _builder(home, embedder, ann_threshold=100)
    first = _many_chunks(1, 80)
    _, report = generations.build(builder, FakeChunkSource(first), first)
    assert report.meta["layout"] == "flat"
    more = _many_chunks(81, 60)
    directory, report = generations.build(builder, FakeChunkSource(first + more), more)
    assert (report.meta["layout"], report.meta["vectors"]) == ("ivf", 140)
    assert embedder.embedded_texts == 140  # converted from the stored vectors, not re-embedded
    assert _finds_itself(directory, embedder, (first + more)[::7])
    # Removals on the approximate index, then below half the threshold: exact again.
    kept = first[:45]
    directory, report = generations.build(
        builder, FakeChunkSource(kept), [], removed_ids=[c.id for c in first[45:] + more]
    )
    assert (report.meta["layout"], report.meta["vectors"]) == ("flat", 45)
    assert _indexed_chunk_ids(directory) == [c.id for c in kept]
    assert _finds_itself(directory, embedder, kept[::5])
