from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from signals.vector.cache import EmbeddingCache, cache_path, text_key


def _vectors(n: int, dim: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def test_round_trip_and_absent_keys(tmp_path: Path) -> None:
    path = cache_path(tmp_path, "model-a")
    keys = [text_key(f"text {i}") for i in range(3)]
    vectors = _vectors(3, 8, 0)
    with EmbeddingCache(path, "model-a", 8) as cache:
        cache.put_many(keys[:2], vectors[:2])
    with EmbeddingCache(path, "model-a", 8) as cache:
        found = cache.get_many(keys)
        assert set(found) == set(keys[:2])
        np.testing.assert_array_equal(found[keys[1]], vectors[1])
        assert cache.count() == 2


def test_each_model_has_its_own_file_and_a_mismatch_is_refused(tmp_path: Path) -> None:
    assert cache_path(tmp_path, "model-a") != cache_path(tmp_path, "model-b")
    path = cache_path(tmp_path, "model-a")
    EmbeddingCache(path, "model-a", 8).close()
    with pytest.raises(ValueError, match="another model"):
        EmbeddingCache(path, "model-b", 8)
    with pytest.raises(ValueError, match="another model"):
        EmbeddingCache(path, "model-a", 16)


def test_many_keys_are_looked_up_in_several_statements(tmp_path: Path) -> None:
    keys = [text_key(str(i)) for i in range(1234)]
    with EmbeddingCache(tmp_path / "c.sqlite", "m", 4) as cache:
        cache.put_many(keys, _vectors(1234, 4, 1))
        assert len(cache.get_many(keys)) == 1234


def test_present_names_the_cached_keys_as_get_many_finds_them(tmp_path: Path) -> None:
    keys = [text_key(str(i)) for i in range(1234)]
    with EmbeddingCache(tmp_path / "c.sqlite", "m", 4) as cache:
        cache.put_many(keys[:1000], _vectors(1000, 4, 1))
        # A row of the wrong size is absent for get_many, so for present too.
        cache._db.execute("INSERT INTO vectors VALUES (?, ?)", (keys[1000], b"short"))
        assert cache.present([*keys, *keys[:5]]) == set(keys[:1000]) == set(cache.get_many(keys))


def test_concurrent_writers_do_not_corrupt_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    EmbeddingCache(path, "m", 4).close()
    errors: list[BaseException] = []

    def writer(seed: int) -> None:
        try:
            with EmbeddingCache(path, "m", 4) as cache:
                for batch in range(20):
                    keys = [text_key(f"{seed}-{batch}-{i}") for i in range(25)]
                    cache.put_many(keys, _vectors(25, 4, seed * 100 + batch))
        except BaseException as err:  # reported below, with the thread's traceback lost
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with EmbeddingCache(path, "m", 4) as cache:
        assert cache.count() == 4 * 20 * 25
