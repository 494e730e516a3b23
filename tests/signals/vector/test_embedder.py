from __future__ import annotations

import numpy as np

from signals.vector.embedder import Embedder, HashingEmbedder, l2_normalise


def test_fake_satisfies_the_interface() -> None:
    embedder: Embedder = HashingEmbedder(dim=32)
    matrix = embedder.embed_documents(["parse the request body", "connect to the database"])
    assert matrix.shape == (2, 32)
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, rtol=1e-6)
    query = embedder.embed_query("request body")
    assert query.shape == (32,)
    assert query.dtype == np.float32


def test_fake_is_deterministic_and_keeps_order() -> None:
    a = HashingEmbedder(dim=64).embed_documents(["alpha beta", "gamma", "alpha beta"])
    b = HashingEmbedder(dim=64).embed_documents(["alpha beta", "gamma", "alpha beta"])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[0], a[2])
    assert not np.array_equal(a[0], a[1])


def test_fake_puts_similar_texts_closer() -> None:
    embedder = HashingEmbedder(dim=256)
    query = embedder.embed_query("parse HTTP request body")
    docs = embedder.embed_documents(
        ["def parseRequestBody(http_request): ...", "def invert_matrix(m): ..."]
    )
    related, unrelated = docs @ query
    assert related > unrelated


def test_fake_counts_embedded_texts_and_empty_text_is_a_unit_vector() -> None:
    embedder = HashingEmbedder(dim=16)
    matrix = embedder.embed_documents(["", "x"])
    assert embedder.embedded_texts == 2
    assert embedder.calls == 1
    assert np.linalg.norm(matrix[0]) == 1.0


def test_l2_normalise_leaves_zero_rows_alone() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
