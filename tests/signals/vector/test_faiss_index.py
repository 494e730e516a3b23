from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from signals.vector.embedder import l2_normalise
from signals.vector.faiss_index import VectorStore, chunk_ids_of, faiss_ids


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


def test_hnsw_above_threshold_uses_tombstones_and_rebuilds(tmp_path: Path) -> None:
    vectors = _unit(60, 16, 1)
    store = VectorStore.create(16, hnsw_threshold=40)
    store.add(faiss_ids(range(60), [0] * 60), vectors)
    store.settle()
    assert store.layout == "hnsw"
    store.remove_chunks([7])
    assert store.tombstone_count == 1
    assert store.vector_count == 59
    store.save(tmp_path)
    loaded = VectorStore.load(tmp_path, hnsw_threshold=40)
    ids, _ = loaded.search(vectors[7], 59)
    assert 7 not in chunk_ids_of(ids).tolist()
    # The removed id comes back: its tombstone must not hide the new vector.
    loaded.add(faiss_ids([7], [0]), vectors[7:8])
    ids, _ = loaded.search(vectors[7], 1)
    assert chunk_ids_of(ids).tolist() == [7]
    # Many removals trigger a rebuild that drops the tombstones.
    loaded.remove_chunks(list(range(20, 40)))
    loaded.settle()
    assert loaded.tombstone_count == 0
    assert loaded.vector_count == 40
    # Shrinking well below the threshold returns to the exact layout.
    loaded.remove_chunks([19, *range(40, 60)])
    loaded.settle()
    assert loaded.layout == "flat"
    assert loaded.vector_count == 19
    ids, _ = loaded.search(vectors[5], 1)
    assert chunk_ids_of(ids).tolist() == [5]


def test_chunk_ids_that_cannot_be_packed_are_refused() -> None:
    with pytest.raises(ValueError, match="chunk ids"):
        faiss_ids([1 << 62], [0])
    with pytest.raises(ValueError, match="chunk ids"):
        faiss_ids([-1], [0])
