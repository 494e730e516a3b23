from __future__ import annotations

import numpy as np

from signals.vector import ivf
from signals.vector.embedder import l2_normalise


def _clustered(n: int, dim: int, seed: int, centres: int = 200) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = l2_normalise(rng.standard_normal((centres, dim)).astype(np.float32))
    noise = l2_normalise(rng.standard_normal((n, dim)).astype(np.float32))
    return l2_normalise(0.8 * c[rng.integers(0, centres, n)] + 0.6 * noise)


def test_lists_grow_with_the_square_root_and_keep_enough_training_points() -> None:
    assert ivf.lists_for(1_000_000) == 4096
    assert ivf.lists_for(200_000) == 2048
    assert ivf.lists_for(81_241) == 1024
    assert ivf.lists_for(1000) == 25  # 128 would leave k-means 8 points a list
    assert ivf.lists_for(10) == ivf.lists_for(0) == 1


def test_contents_decode_every_vector_under_its_id() -> None:
    vectors = _clustered(2000, 32, 0)
    ids = np.arange(2000, dtype=np.int64) * 16 + 3
    index = ivf.build(32, ids, vectors)
    got_ids, got = ivf.contents(index)
    order = np.argsort(got_ids)
    assert got_ids[order].tolist() == ids.tolist()
    cosines = np.sum(got[order] * vectors, axis=1)
    assert cosines.min() > 0.99  # int8 codes of the residuals (real MiniLM vectors: 1 - 3e-5)
    assert sorted(ivf.ids_of(index).tolist()) == ids.tolist()


def test_the_same_vectors_train_the_same_index() -> None:
    vectors = _clustered(3000, 16, 1)
    ids = np.arange(3000, dtype=np.int64)
    first, second = ivf.build(16, ids, vectors), ivf.build(16, ids, vectors)
    query = vectors[:50]
    assert np.array_equal(first.search(query, 10)[1], second.search(query, 10)[1])


def test_recall_at_10_against_exact_search_on_a_clustered_set() -> None:
    """20k vectors: 500 lists, of which PROBES (256) are scanned; the floor sits well below
    what it measures (0.99) so that only a broken layout fails it."""
    vectors = _clustered(20_000, 64, 2)
    queries = _clustered(200, 64, 3)
    index = ivf.build(64, np.arange(20_000, dtype=np.int64), vectors)
    assert (index.nlist, index.nprobe) == (500, ivf.PROBES)
    _, found = index.search(queries, 10)
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    recall = np.mean([len(set(f) & set(e)) / 10 for f, e in zip(found, exact, strict=True)])
    assert recall >= 0.9
