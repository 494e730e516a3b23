"""Builds one generation of the vector index: embed added chunks, drop removed ones, write.

Incremental when the previous generation used the same model, document format and parts
setting: its FAISS index and chunk table are read (never written: readers may hold them),
removed chunks' vectors dropped, added chunks embedded, and the result written to
``job.directory``. Otherwise every chunk of the new generation is embedded again; the
embedding cache makes that cheap for texts seen before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from engine.errors import BuildAborted, SignalUnavailable
from engine.signal import BuildJob, BuildReport, IndexOptions, ProgressFn
from engine.types import VECTOR, Chunk
from signals.vector.cache import EmbeddingCache, cache_path, text_key
from signals.vector.chunk_table import ChunkTable
from signals.vector.documents import document_parts
from signals.vector.embedder import Embedder, FloatMatrix
from signals.vector.faiss_index import ANN_THRESHOLD, VectorStore, faiss_ids
from signals.vector.loader import LoadedModel, load_indexing_model
from signals.vector.meta import PRECISIONS, EmbedSettings
from signals.vector.meta import settings as index_settings
from signals.vector.order import embed_priority
from signals.vector.remote_loader import load_remote_model
from signals.vector.remote_spec import (
    RemoteEmbedderError,
    RemoteSpec,
    embedder_summary,
    leaves_machine_warning,
    remote_spec_for,
)

DEFAULT_MAX_PARTS = 1
DEFAULT_INCLUDE_PATH = True
DEFAULT_BATCH_SIZE = 64  # texts per embed call and per cache commit
DEFAULT_EMBED = EmbedSettings(precision="mixed", document_tokens=256)
# Batches sorted by length together: enough for little padding, few enough that the order
# by priority holds (64 x 16 texts is ~30 s of MiniLM here).
_SORT_BATCHES = 16

ModelLoader = Callable[[IndexOptions, EmbedSettings], LoadedModel]
K = TypeVar("K")
RemoteLoader = Callable[[RemoteSpec], LoadedModel]


class VectorBuilder:
    """``SignalBuilder`` for the vector signal.

    ``max_parts`` > 1 gives a long chunk extra vectors for later windows of its body and
    ``include_path`` puts the path in the embedded text (see documents.py); both exist so
    the eval harness can measure them. ``load_model`` is replaced in tests by one that
    returns a fake embedder, and ``ann_threshold`` (vectors above which the index becomes
    approximate, faiss_index.py) by a small one.
    """

    def __init__(
        self,
        options: IndexOptions,
        *,
        load_model: ModelLoader = load_indexing_model,
        load_remote: RemoteLoader = load_remote_model,
        max_parts: int = DEFAULT_MAX_PARTS,
        include_path: bool = DEFAULT_INCLUDE_PATH,
        batch_size: int = DEFAULT_BATCH_SIZE,
        ann_threshold: int = ANN_THRESHOLD,
    ) -> None:
        self._options = options
        self._load_model = load_model
        self._load_remote = load_remote
        self._models: dict[tuple[str | None, EmbedSettings], LoadedModel] = {}
        self._max_parts = max_parts
        self._include_path = include_path
        self._batch_size = batch_size
        self._ann_threshold = ann_threshold

    @property
    def name(self) -> str:
        return VECTOR

    @property
    def slow(self) -> bool:
        return True

    def build(self, job: BuildJob) -> BuildReport:
        try:
            return self._build(job)
        except RemoteEmbedderError as err:
            # Published as "off", the index would lose the vectors it has because a server
            # failed for a while: the update stops instead, and what was embedded is cached.
            raise BuildAborted(
                f"vector signal: {err}. The index keeps its previous vectors; the texts "
                "embedded so far are cached, so the next engine reindex resumes from there"
            ) from None

    def _build(self, job: BuildJob) -> BuildReport:
        try:
            remote = remote_spec_for(self._options.embedder, _recorded(job.previous_meta))
            model = (
                self._load_remote(remote)
                if remote is not None
                else self._loaded_model(
                    self._model_folder(job.previous_meta),
                    self._embed_settings(job.previous_meta),
                )
            )
        except RemoteEmbedderError:
            raise
        except SignalUnavailable as err:
            return BuildReport(ready=False, message=str(err))
        embedder = model.embedder
        document_tokens = int(model.meta.get("document_tokens") or 0)
        cache_id = embedding_cache_id(model)
        settings = index_settings(
            embedder.model_id, self._max_parts, self._include_path, document_tokens
        )
        problems: list[str] = []
        previous = self._load_previous(job, settings, problems)
        if previous is not None:
            store, table = previous
            gone = set(job.removed_ids) | set(table.ids_under(job.removed_paths))
            # A re-sent chunk replaces its old vectors instead of doubling them.
            gone |= {c.id for c in job.added if c.id in table}
            store.remove_chunks(sorted(gone))
            table.remove(gone)
            to_add: Sequence[Chunk] = job.added
        else:
            store = VectorStore.create(embedder.dim, ann_threshold=self._ann_threshold)
            table = ChunkTable()
            to_add = job.added if job.previous_dir is None else list(job.source.iter_chunks())

        ids, texts = self._documents(to_add)
        vectors, embedded = self._embed(embedder, texts, job.progress, cache_id)
        store.add(ids, vectors)
        table.put(to_add)
        store.settle()
        store.save(job.directory)
        table.save(job.directory)

        chunk_count = job.source.chunk_count()
        meta: dict[str, Any] = {
            **settings,
            "model": model.meta,
            "model_name": model.meta["name"],
            "dim": embedder.dim,
            "weights_sha256": model.meta["weights_sha256"],
            "vectors": store.vector_count,
            "chunks": len(table),
            "coverage": round(len(table) / chunk_count, 6) if chunk_count else 1.0,
            "layout": store.layout,
            "tombstones": store.tombstone_count,
            "embedder": embedder_summary(model.meta),
            **store.describe(),
        }
        warnings = [leaves_machine_warning(remote)] if remote is not None else []
        warnings += _dimension_change(_recorded(job.previous_meta), model.meta)
        mode = "updated" if previous is not None else "built"
        message = (
            f"{mode} with {model.meta['name']}; {embedded} texts embedded, "
            f"{len(texts) - embedded} reused from the cache; {store.vector_count} vectors "
            f"for {len(table)} chunks"
        )
        return BuildReport(
            ready=True, meta=meta, problems=problems, message=message, warnings=warnings
        )

    def settings_changed(self, previous_meta: Mapping[str, Any]) -> bool:
        """True when the user asked for a model or embedding setting the index does not have
        (``ConfiguredBuilder``: the indexer then updates even if no file changed)."""
        recorded = previous_meta.get("model")
        if not isinstance(recorded, Mapping):
            return False
        options = self._options
        if options.embedder is not None and remote_spec_for(
            options.embedder, None
        ) != remote_spec_for(None, recorded):
            return True
        if options.model is not None and options.model != str(recorded.get("path", "")):
            return True
        if options.embed_precision and options.embed_precision != recorded.get("precision"):
            return True
        return bool(
            options.document_tokens
            and options.document_tokens != previous_meta.get("document_tokens")
        )

    def _embed_settings(self, previous_meta: Mapping[str, Any]) -> EmbedSettings:
        """What the user asked for, else what the index recorded, else the default."""
        recorded = previous_meta.get("model")
        recorded = recorded if isinstance(recorded, Mapping) else {}
        precision = (
            self._options.embed_precision
            or str(recorded.get("precision") or "")
            or DEFAULT_EMBED.precision
        )
        if precision not in PRECISIONS:
            raise SignalUnavailable(
                f"unknown embedding precision {precision!r}; use one of {', '.join(PRECISIONS)}"
            )
        tokens = (
            self._options.document_tokens
            or int(recorded.get("document_tokens") or 0)
            or DEFAULT_EMBED.document_tokens
        )
        return EmbedSettings(precision=precision, document_tokens=tokens)

    def _model_folder(self, previous_meta: Mapping[str, Any]) -> str | None:
        """The model folder the user asked for, else the one the index was built with (so
        `engine reindex` keeps a `--model` choice), else None for the bundled model."""
        if self._options.model is not None:
            return self._options.model
        recorded = previous_meta.get("model")
        if isinstance(recorded, Mapping) and not recorded.get("bundled") and recorded.get("path"):
            return str(recorded["path"])
        return None

    def _loaded_model(self, folder: str | None, embed: EmbedSettings) -> LoadedModel:
        model = self._models.get((folder, embed))
        if model is None:
            options = dataclasses.replace(self._options, model=folder)
            model = self._models[(folder, embed)] = self._load_model(options, embed)
        return model

    def _load_previous(
        self, job: BuildJob, settings: dict[str, Any], problems: list[str]
    ) -> tuple[VectorStore, ChunkTable] | None:
        if job.previous_dir is None:
            return None
        if any(job.previous_meta.get(k) != v for k, v in settings.items()):
            return None
        try:
            store = VectorStore.load(job.previous_dir, ann_threshold=self._ann_threshold)
            table = ChunkTable.load(job.previous_dir)
        except (OSError, RuntimeError, ValueError, KeyError) as err:
            problems.append(f"{job.previous_dir}: previous vector index unreadable ({err})")
            return None
        return store, table

    def _documents(self, chunks: Sequence[Chunk]) -> tuple[np.ndarray, list[str]]:
        return documents(chunks, self._max_parts, self._include_path)

    def document_texts(self, chunks: Sequence[Chunk]) -> list[str]:
        """The texts a build from empty embeds for ``chunks``, in the order it embeds them
        (a cluster build asks for them on the worker that chunked the repository)."""
        return self._documents(chunks)[1]

    def fresh_model(self) -> tuple[LoadedModel, str]:
        """The model a build from empty embeds with and the embedding cache id it uses."""
        model = self._loaded_model(self._model_folder({}), self._embed_settings({}))
        return model, embedding_cache_id(model)

    def _embed(
        self, embedder: Embedder, texts: list[str], progress: ProgressFn, cache_id: str
    ) -> tuple[FloatMatrix, int]:
        """Vectors for ``texts`` and how many texts had to be embedded (not cached).

        Missing texts are embedded in the order given (by priority, ``_documents``); within
        each run of ``_SORT_BATCHES`` batches, shortest first, so that a batch holds texts of
        similar length (less padding). Each batch is committed to the cache before the next
        starts.
        """
        vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        if not texts:
            return vectors, 0
        keys = [text_key(t) for t in texts]
        rows_of: dict[bytes, list[int]] = {}
        for row, key in enumerate(keys):
            rows_of.setdefault(key, []).append(row)
        with EmbeddingCache(
            cache_path(self._options.home, cache_id), cache_id, embedder.dim
        ) as cache:
            for key, vector in cache.get_many(rows_of).items():
                vectors[rows_of.pop(key)] = vector
            done = len(texts) - sum(len(rows) for rows in rows_of.values())
            progress("embedding", done, len(texts))
            batches = embedding_batches(
                list(rows_of), lambda k: len(texts[rows_of[k][0]]), self._batch_size
            )
            for batch in batches:
                computed = embedder.embed_documents([texts[rows_of[k][0]] for k in batch])
                cache.put_many(batch, computed)
                for key, vector in zip(batch, computed, strict=True):
                    vectors[rows_of[key]] = vector
                    done += len(rows_of[key])
                progress("embedding", done, len(texts))
        return vectors, sum(len(b) for b in batches)


def documents(
    chunks: Sequence[Chunk], max_parts: int, include_path: bool
) -> tuple[np.ndarray, list[str]]:
    """The FAISS ids and texts to embed for ``chunks``, in the order ``_embed`` embeds them
    (signals/vector/order.py): what a search needs most is cached first, so an interrupted
    pass resumes with the rest."""
    chunk_ids: list[int] = []
    parts: list[int] = []
    texts: list[str] = []
    for chunk in sorted(chunks, key=embed_priority):
        for part, text in enumerate(document_parts(chunk, max_parts, include_path=include_path)):
            chunk_ids.append(chunk.id)
            parts.append(part)
            texts.append(text)
    return faiss_ids(chunk_ids, parts), texts


def embedding_cache_id(model: LoadedModel) -> str:
    """The embedding cache a model's vectors live in: its model id, and the word pieces a
    document is cut to when that is short of the model's own limit (the same text then gives
    other vectors)."""
    cache_id = model.embedder.model_id
    document_tokens = int(model.meta.get("document_tokens") or 0)
    if 0 < document_tokens < int(model.meta.get("max_seq_length") or 0):
        cache_id += f"/t{document_tokens}"
    return cache_id


def embedding_batches(
    keys: Sequence[K], length: Callable[[K], int], batch_size: int
) -> list[list[K]]:
    """The batches ``keys`` (texts not cached, in priority order) are embedded in.

    Within each run of ``_SORT_BATCHES`` batches, shortest text first, so that a batch holds
    texts of similar length (less padding). The batches decide the vectors: the encoder's
    int8 activations are quantised per encoder run, so a text's vector differs
    by up to ~0.015 (mixed precision, measured on the stdlib's json package) when its batch
    holds other texts. A cluster build forms its batches here too, so its vectors are the
    local build's bit for bit.
    """
    run = batch_size * _SORT_BATCHES
    ordered = [
        key
        for start in range(0, len(keys), run)
        for key in sorted(keys[start : start + run], key=length)
    ]
    return [ordered[start : start + batch_size] for start in range(0, len(ordered), batch_size)]


def _recorded(previous_meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """The model meta the previous generation recorded ({} when none)."""
    recorded = previous_meta.get("model")
    return recorded if isinstance(recorded, Mapping) else {}


def _dimension_change(recorded: Mapping[str, Any], model: Mapping[str, Any]) -> list[str]:
    """Why every chunk is embedded again when the same remote model now gives vectors of
    another size (the server's model replaced, or another ``--embedder-dim``)."""
    before, after = recorded.get("remote"), model.get("remote")
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        return []
    if any(before.get(k) != after.get(k) for k in ("provider", "url", "model")):
        return []
    old, new = int(recorded.get("dim") or 0), int(model.get("dim") or 0)
    if not old or old == new:
        return []
    return [
        f"the vector signal's embedder now gives {new}-dimensional vectors ({model['name']}) "
        f"where the index held {old} ({recorded.get('name', '?')}): every chunk is embedded "
        "again"
    ]
