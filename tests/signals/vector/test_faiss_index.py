from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from signals.vector.embedder import l2_normalise
from signals.vector.faiss_index import VectorStore, chunk_ids_of, faiss_ids
from signals.vector.files import INDEX_FILE, LAYOUT_FILE, TOMBSTONES_FILE, VectorFilesDamaged
from signals.vector.ivf import lists_for


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return l2_normalise(rng.standard_normal((n, dim)).astype(np.float32))


def test_ids_pack_chunk_and_part() -> None:
    ids = faiss_ids([5, 5, 9], [0, 1, 0])
    assert chunk_ids_of(ids).tolist() == [5, 5, 9]
    assert len(set(ids.tolist())) == 3


def test_flat_add_remove_search_save_load(tmp_path: Path) -> None:
    vectors = _unit(20, 16, 0)
    store = VectorStore.create(16)
    store.add(faiss_ids(range(20), [0] * 20), vectors)
    ids, scores = store.search(vectors[3], 1)
    assert chunk_ids_of(ids).tolist() == [3]
    assert abs(float(scores[0]) - 1.0) < 1e-3  # vectors are kept in half precision
    assert store.remove_chunks([3, 4, 99]) == 2
    store.save(tmp_path)
    loaded = VectorStore.load(tmp_path)
    assert loaded.layout == "flat"
    assert loaded.vector_count == 18
    ids, _ = loaded.search(vectors[3], 18)
    assert 3 not in chunk_ids_of(ids).tolist()


def _clustered(n: int, dim: int, seed: int, centres: int = 50) -> np.ndarray:
    """Unit vectors around ``centres`` random centres (cos to the centre ~0.8), shaped more
    like embeddings than isotropic noise."""
    rng = np.random.default_rng(seed)
    c = l2_normalise(rng.standard_normal((centres, dim)).astype(np.float32))
    noise = l2_normalise(rng.standard_normal((n, dim)).astype(np.float32))
    return l2_normalise(0.8 * c[rng.integers(0, centres, n)] + 0.6 * noise)


def _top1(store: VectorStore, vectors: np.ndarray) -> list[int]:
    return [int(chunk_ids_of(store.search(v, 1)[0])[0]) for v in vectors]


def test_ivf_above_threshold_adds_and_removes_in_place(tmp_path: Path) -> None:
    vectors = _clustered(3000, 32, 1)
    store = VectorStore.create(32, ann_threshold=1000)
    store.add(faiss_ids(range(3000), [0] * 3000), vectors)
    assert store.describe() == {}  # flat until settled
    store.settle()
    assert store.layout == "ivf"
    assert store.describe()["ann"]["lists"] == lists_for(3000)
    assert store.remove_chunks([7, 8, 99_999]) == 2
    assert store.tombstone_count == 0  # removed from the lists, not hidden
    assert store.vector_count == 2998
    store.save(tmp_path)
    loaded = VectorStore.load(tmp_path, ann_threshold=1000)
    assert loaded.layout == "ivf"
    assert loaded.vector_count == 2998
    ids, _ = loaded.search(vectors[7], 50)
    assert 7 not in chunk_ids_of(ids).tolist()
    # A removed id comes back and is found again.
    loaded.add(faiss_ids([7], [0]), vectors[7:8])
    assert _top1(loaded, vectors[[7, 100, 2999]]) == [7, 100, 2999]
    assert sorted(chunk_ids_of(loaded.live_ids()).tolist()) == [i for i in range(3000) if i != 8]


def test_incremental_ivf_updates_answer_as_a_fresh_build(tmp_path: Path) -> None:
    vectors = _clustered(4000, 32, 2)
    ids = faiss_ids(range(4000), [0] * 4000)
    updated = VectorStore.create(32, ann_threshold=1000)
    updated.add(ids[:3000], vectors[:3000])
    updated.settle()
    assert updated.layout == "ivf"
    removed = list(range(0, 3000, 7))
    updated.remove_chunks(removed)
    updated.add(ids[3000:], vectors[3000:])
    updated.settle()
    updated.save(tmp_path)
    updated = VectorStore.load(tmp_path, ann_threshold=1000)

    keep = np.array([i for i in range(4000) if i % 7 or i >= 3000])
    fresh = VectorStore.create(32, ann_threshold=1000)
    fresh.add(ids[keep], vectors[keep])
    fresh.settle()
    assert fresh.layout == updated.layout == "ivf"
    assert sorted(updated.live_ids().tolist()) == sorted(fresh.live_ids().tolist())
    # Exact-match queries: each kept vector finds itself first in both; a removed one never
    # comes back.
    probe = keep[::13]
    assert _top1(updated, vectors[probe]) == _top1(fresh, vectors[probe]) == probe.tolist()
    for gone in removed[:20]:
        found, _ = updated.search(vectors[gone], 20)
        assert gone not in chunk_ids_of(found).tolist()


def test_ivf_is_trained_again_when_it_outgrows_its_lists_and_shrinks_back_to_flat() -> None:
    vectors = _clustered(6000, 16, 3)
    store = VectorStore.create(16, ann_threshold=500)
    store.add(faiss_ids(range(1000), [0] * 1000), vectors[:1000])
    store.settle()
    lists = store.describe()["ann"]["lists"]
    assert lists == lists_for(1000)
    store.add(faiss_ids(range(1000, 6000), [0] * 5000), vectors[1000:])
    store.settle()
    assert store.describe()["ann"]["lists"] == lists_for(6000) >= 2 * lists
    assert _top1(store, vectors[[0, 2500, 5999]]) == [0, 2500, 5999]
    # Shrinking below half the threshold returns to the exact layout, vectors intact.
    store.remove_chunks(list(range(200, 6000)))
    store.settle()
    assert store.layout == "flat"
    assert store.describe() == {}
    assert store.vector_count == 200
    assert _top1(store, vectors[[0, 150, 199]]) == [0, 150, 199]


def test_an_hnsw_folder_written_before_ivf_is_searched_then_converted(tmp_path: Path) -> None:
    """The layout this engine wrote above 500k vectors until ivf: tombstones included."""
    import faiss

    vectors = _clustered(600, 16, 4)
    index = faiss.IndexIDMap2(faiss.IndexHNSWFlat(16, 32, faiss.METRIC_INNER_PRODUCT))
    index.add_with_ids(vectors, faiss_ids(range(600), [0] * 600))
    faiss.write_index(index, str(tmp_path / INDEX_FILE))
    np.save(tmp_path / TOMBSTONES_FILE, faiss_ids([7], [0]))
    (tmp_path / LAYOUT_FILE).write_text(json.dumps({"layout": "hnsw", "dim": 16}))
    store = VectorStore.load(tmp_path, ann_threshold=400)
    assert (store.layout, store.vector_count, store.tombstone_count) == ("hnsw", 599, 1)
    ids, _ = store.search(vectors[7], 50)
    assert 7 not in chunk_ids_of(ids).tolist()
    store.settle()
    assert (store.layout, store.vector_count, store.tombstone_count) == ("ivf", 599, 0)
    assert _top1(store, vectors[[0, 7, 599]])[::2] == [0, 599]
    assert 7 not in chunk_ids_of(store.live_ids()).tolist()


def test_a_folder_whose_index_is_not_its_recorded_layout_is_damaged(tmp_path: Path) -> None:
    store = VectorStore.create(16)
    store.add(faiss_ids(range(10), [0] * 10), _unit(10, 16, 5))
    store.save(tmp_path)
    layout = json.loads((tmp_path / LAYOUT_FILE).read_text())
    (tmp_path / LAYOUT_FILE).write_text(json.dumps({**layout, "layout": "ivf"}))
    with pytest.raises(VectorFilesDamaged, match="ivf"):
        VectorStore.load(tmp_path)


def test_chunk_ids_that_cannot_be_packed_are_refused() -> None:
    with pytest.raises(ValueError, match="chunk ids"):
        faiss_ids([1 << 62], [0])
    with pytest.raises(ValueError, match="chunk ids"):
        faiss_ids([-1], [0])
