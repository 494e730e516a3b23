from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.errors import SignalUnavailable
from engine.signal import IndexOptions, OpenOptions
from engine.types import Filters, Query
from signals.vector import ivf
from signals.vector.builder import VectorBuilder
from signals.vector.documents import document_parts
from signals.vector.embedder import HashingEmbedder, l2_normalise
from signals.vector.faiss_index import VectorStore, faiss_ids
from signals.vector.loader import (
    HASHING,
    LoadedModel,
    base_key,
    load_query_embedder,
    mismatch_warning,
    model_meta,
)
from signals.vector.model import identify, resolve_model
from signals.vector.plugin import PLUGIN
from signals.vector.signal import VectorSignal
from tests.fakes import (
    CHUNKS,
    FakeChunkSource,
    Generations,
    fake_loader,
    fake_model_folder,
    make_chunk,
)


def _build(
    home: Path, generations: Generations, chunks: list[Any], **kwargs: Any
) -> tuple[Path, dict[str, Any]]:
    builder = VectorBuilder(
        IndexOptions(home=home), load_model=fake_loader(HashingEmbedder(dim=64)), **kwargs
    )
    directory, report = generations.build(builder, FakeChunkSource(chunks), chunks)
    return directory, report.meta


def test_search_ranks_the_matching_chunk_first(home: Path, generations: Generations) -> None:
    directory, meta = _build(home, generations, CHUNKS)
    signal = PLUGIN.open(directory, meta, OpenOptions(home=home))
    assert signal.name == "vector"
    hits = signal.search(Query("render a template with context"), 2)
    assert len(hits) == 2
    assert hits[0].chunk_id == 3
    assert hits[0].score >= hits[1].score
    assert -1.0 <= hits[1].score <= 1.0 + 1e-6


def test_search_limits_and_empty_queries(home: Path, generations: Generations) -> None:
    directory, meta = _build(home, generations, CHUNKS)
    signal = PLUGIN.open(directory, meta, OpenOptions(home=home))
    assert len(signal.search(Query("request"), 10)) == 3
    assert signal.search(Query("   "), 10) == []
    assert signal.search(Query("request"), 0) == []


def test_a_chunk_with_several_parts_is_one_hit_scored_by_its_best_part(
    home: Path, generations: Generations
) -> None:
    text = "\n".join(f"    total = total + amount_{i}" for i in range(120))
    text += "\n    send_invoice_email(customer)"
    long_chunk = make_chunk(10, "billing.py", text, name="compute")
    chunks = [long_chunk, *CHUNKS]
    directory, meta = _build(home, generations, chunks, max_parts=8)
    assert meta["vectors"] > len(chunks)
    signal = PLUGIN.open(directory, meta, OpenOptions(home=home))
    query = "send invoice email customer"
    hits = signal.search(Query(query), 4)
    assert [h.chunk_id for h in hits].count(10) == 1
    assert hits[0].chunk_id == 10
    assert len(hits) == 4
    fake = HashingEmbedder(dim=64)
    part_scores = fake.embed_documents(document_parts(long_chunk, 8)) @ fake.embed_query(query)
    assert hits[0].score == pytest.approx(float(part_scores.max()), abs=1e-3)  # fp16 codes
    assert part_scores.argmax() > 0  # the best part is not the first


def test_filters_are_applied_before_the_limit(home: Path, generations: Generations) -> None:
    python = [
        make_chunk(i, f"p{i}.py", "def load(): read config file", name=f"load_{i}")
        for i in range(20)
    ]
    ts = make_chunk(
        100, "web/app.ts", "function loadConfig() {}", name="loadConfig", language="typescript"
    )
    directory, meta = _build(home, generations, [*python, ts])
    signal = PLUGIN.open(directory, meta, OpenOptions(home=home))
    hits = signal.search(Query("read config file", Filters(languages=("typescript",))), 3)
    assert [h.chunk_id for h in hits] == [100]
    hits = signal.search(Query("read config file", Filters(path_globs=("p1*.py",))), 5)
    assert len(hits) == 5
    assert all(str(h.chunk_id).startswith("1") for h in hits)


def _pose_as(home: Path, folder: Path) -> tuple[HashingEmbedder, dict[str, Any]]:
    identity = identify(resolve_model(str(folder)), home)
    embedder = HashingEmbedder(dim=32, model_id=identity.key)
    meta = model_meta(identity, backend=HASHING, model_id=identity.key, dim=32, max_seq_length=0)
    return embedder, meta


def test_model_mismatch_is_a_warning_and_the_index_model_still_answers(
    home: Path, generations: Generations, tmp_path: Path
) -> None:
    built_with = fake_model_folder(tmp_path / "models", "model-x", b"weights of x")
    configured = fake_model_folder(tmp_path / "models", "model-y", b"weights of y")
    embedder, model = _pose_as(home, built_with)
    builder = VectorBuilder(
        IndexOptions(home=home, model=str(built_with)),
        load_model=lambda options, embed: LoadedModel(embedder, model),
    )
    directory, report = generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)

    same = PLUGIN.open(directory, report.meta, OpenOptions(home=home, model=str(built_with)))
    assert same.warning == ""

    other = PLUGIN.open(directory, report.meta, OpenOptions(home=home, model=str(configured)))
    assert other.warning == (
        f"index built with model {built_with}; configured model {configured} ignored; "
        "run engine index again to switch"
    )
    assert other.search(Query("connect database"), 1)[0].chunk_id == 2

    gone = PLUGIN.open(directory, report.meta, OpenOptions(home=home, model=str(tmp_path / "nope")))
    assert "ignored (not found)" in gone.warning


def test_missing_model_makes_the_signal_unavailable(home: Path, generations: Generations) -> None:
    directory, meta = _build(home, generations, CHUNKS)
    meta = {
        **meta,
        "model": {
            "backend": "onnx",
            "model_id": "0123456789abcdef-01234567",
            "name": "/models/gone",
            "path": "/models/gone",
            "bundled": False,
            "dim": 64,
        },
    }
    with pytest.raises(SignalUnavailable, match=r"/models/gone.*engine index"):
        PLUGIN.open(directory, meta, OpenOptions(home=home))


def test_index_of_another_format_or_with_unreadable_files_is_unavailable(
    home: Path, generations: Generations
) -> None:
    directory, meta = _build(home, generations, CHUNKS)
    with pytest.raises(SignalUnavailable, match="engine index"):
        PLUGIN.open(directory, {**meta, "format": 999}, OpenOptions(home=home))
    (directory / "vectors.faiss").write_bytes(b"garbage")
    with pytest.raises(SignalUnavailable, match="unreadable"):
        PLUGIN.open(directory, meta, OpenOptions(home=home))


def test_signal_type_is_the_protocol(home: Path, generations: Generations) -> None:
    directory, meta = _build(home, generations, CHUNKS)
    assert isinstance(PLUGIN.open(directory, meta, OpenOptions(home=home)), VectorSignal)


def test_a_quantised_index_of_the_configured_model_is_no_mismatch(
    home: Path, tmp_path: Path
) -> None:
    folder = fake_model_folder(tmp_path / "models", "model-x", b"weights of x")
    identity = identify(resolve_model(str(folder)), home)
    meta = model_meta(
        identity,
        backend="onnx",
        model_id=f"{identity.key}-int8",
        dim=32,
        max_seq_length=256,
        precision="int8",
    )
    assert base_key(meta) == identity.key
    assert base_key({**meta, "model_id": f"{identity.key}-int8-f3"}) == identity.key
    mixed = {**meta, "model_id": f"{identity.key}-mixed-f3", "precision": "mixed"}
    assert base_key(mixed) == identity.key
    assert mismatch_warning(mixed, str(folder), home) == ""
    assert mismatch_warning(meta, str(folder), home) == ""
    other = fake_model_folder(tmp_path / "models", "model-y", b"weights of y")
    assert "ignored" in mismatch_warning(meta, str(other), home)


def _onnx_meta(identity: Any, model_id: str, precision: str) -> dict[str, Any]:
    return model_meta(
        identity,
        backend="onnx",
        model_id=model_id,
        dim=32,
        max_seq_length=256,
        precision=precision,
    )


def test_a_lost_int8_export_of_an_older_format_asks_for_a_reindex(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = fake_model_folder(tmp_path / "models", "model-x", b"weights of x")
    identity = identify(resolve_model(str(folder)), home)
    rebuilt: list[str] = []

    def ensure_export(identity: Any, home: Path, precision: str = "fp32") -> Path:
        # Today's export gives the int8 copy a new folder, not the one the index names.
        rebuilt.append(precision)
        return home / "models" / f"{identity.key}-int8-f3"

    monkeypatch.setattr("signals.vector.export.ensure_export", ensure_export)
    meta = _onnx_meta(identity, f"{identity.key}-int8", "int8")
    with pytest.raises(SignalUnavailable, match=r"older format.*engine index"):
        load_query_embedder(meta, home)
    assert rebuilt == ["int8"]


def test_a_lost_export_of_a_vanished_model_says_what_to_do(home: Path, tmp_path: Path) -> None:
    folder = fake_model_folder(tmp_path / "models", "model-x", b"weights of x")
    identity = identify(resolve_model(str(folder)), home)
    meta = _onnx_meta(identity, identity.key, "fp32")
    (folder / "model.safetensors").write_bytes(b"other weights now")
    with pytest.raises(SignalUnavailable, match=r"no longer available.*engine index"):
        load_query_embedder(meta, home)


class _CountingStore(VectorStore):
    searches = 0

    def search(self, query: Any, k: int) -> Any:
        self.searches += 1
        return super().search(query, k)


def test_an_approximate_index_stops_widening_once_its_probed_lists_are_exhausted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ivf, "PROBES", 8)  # of 500 lists: ~320 candidates per query
    rng = np.random.default_rng(0)
    vectors = l2_normalise(rng.standard_normal((20_000, 64)).astype(np.float32))
    plain = VectorStore.create(64, ann_threshold=1000)
    plain.add(faiss_ids(range(20_000), [0] * 20_000), vectors)
    plain.settle()
    plain.save(tmp_path)
    store = _CountingStore.load(tmp_path, ann_threshold=1000)
    assert isinstance(store, _CountingStore)
    assert store.describe()["ann"] == {"codes": "sq8", "lists": 500, "probes": 8}
    signal = VectorSignal(store, HashingEmbedder(dim=64), tmp_path)
    hits = signal.search(Query("read config file"), 1000)  # k = 4,000 of 20,000
    # Every candidate of the probed lists, from one search: widening k would find no more.
    assert 0 < len(hits) < 1000
    assert store.searches == 1
