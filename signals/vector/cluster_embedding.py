"""The vector signal's part in a cluster build: the texts, their keys, the cache and the model.

``engine.cluster`` cannot import signals, so the caller (cli, eval, tests) hands it a
``ClusterVectorEmbedding``. Everything it gives decides the vectors the way a local build
does: the texts and their order come from ``VectorBuilder.document_texts``, the batches from
``embedding_batches`` (the local rule, so the vectors are bit-identical), the cache is the one
``VectorBuilder`` reads, and the actors run the same ONNX export with the same settings. The
encoder's thread count does not change the vectors (checked in
tests/engine/cluster/test_indexing_bits.py), so an actor runs with one thread per CPU it holds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import numpy as np

from engine.signal import IndexOptions
from engine.types import Chunk
from signals.vector.builder import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_INCLUDE_PATH,
    DEFAULT_MAX_PARTS,
    ModelLoader,
    VectorBuilder,
    documents,
    embedding_batches,
)
from signals.vector.cache import EmbeddingCache, cache_path, text_key
from signals.vector.embedder import Embedder, FloatMatrix
from signals.vector.loader import DOCUMENT_BATCH, load_indexing_model
from signals.vector.onnx_embedder import OnnxEmbedder


@dataclass(frozen=True, slots=True)
class DocumentTexts:
    """The texts a build from empty embeds for a repository's chunks, in its order; runs on
    the worker that chunked the repository (a picklable value, not a closure)."""

    max_parts: int = DEFAULT_MAX_PARTS
    include_path: bool = DEFAULT_INCLUDE_PATH

    def __call__(self, chunks: Sequence[Chunk]) -> list[str]:
        return documents(chunks, self.max_parts, self.include_path)[1]


def open_onnx(folder: Path, *, threads: int, batch_size: int, document_tokens: int) -> OnnxEmbedder:
    """The actors' embedder: the export shipped to their node, as the local builder runs it."""
    return OnnxEmbedder(
        folder, threads=threads, batch_size=batch_size, document_tokens=document_tokens
    )


def same_embedder(embedder: Embedder, folder: Path | None, *, threads: int) -> Embedder:
    """An embedder that needs no files (the test fake): the pickled copy is the model."""
    del folder, threads
    return embedder


class ClusterVectorEmbedding:
    """``engine.cluster.indexing_embed.EmbeddingSide`` for the vector signal's full tier.

    Loads the model a build from empty uses (to learn its cache id, dimension and export
    folder) and opens its embedding cache on this machine: only the coordinator makes one.
    """

    def __init__(self, options: IndexOptions, *, load_model: ModelLoader | None = None):
        # Looked up when called, so that a test can patch the module's loader for the CLI.
        builder = VectorBuilder(options, load_model=load_model or load_indexing_model)
        model, self.cache_id = builder.fresh_model()
        embedder = model.embedder
        self.model_name = str(model.meta.get("name", embedder.model_id))
        self.dim = embedder.dim
        self.batch_size = DEFAULT_BATCH_SIZE
        self.texts: Callable[[Sequence[Chunk]], list[str]] = DocumentTexts()
        self.key: Callable[[str], bytes] = text_key
        self.model_folder: Path | None
        self.make_embedder: Callable[..., Embedder]
        if isinstance(embedder, OnnxEmbedder):
            self.model_folder = embedder.directory
            self.make_embedder = functools.partial(
                open_onnx, batch_size=DOCUMENT_BATCH, document_tokens=embedder.document_tokens
            )
        else:
            self.model_folder = None
            self.make_embedder = functools.partial(same_embedder, embedder)
        self._cache = EmbeddingCache(
            cache_path(options.home, self.cache_id), self.cache_id, self.dim
        )

    def cached(self, keys: Iterable[bytes]) -> set[bytes]:
        return self._cache.present(keys)

    def put(self, keys: Sequence[bytes], vectors: FloatMatrix) -> None:
        self._cache.put_many(keys, vectors)

    def get(self, keys: Iterable[bytes]) -> Mapping[bytes, np.ndarray]:
        return self._cache.get_many(keys)

    def batches(self, keys: Sequence[bytes], texts: Mapping[bytes, str]) -> list[list[bytes]]:
        return embedding_batches(keys, lambda k: len(texts[k]), self.batch_size)

    def close(self) -> None:
        self._cache.close()

    def __enter__(self) -> ClusterVectorEmbedding:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
