"""Which embedder an index is built or searched with, and the model meta recorded for it.

Indexing resolves the configured model, exports it to ONNX once and records its identity in
the index meta. Querying always uses the model recorded in the index (vectors from another
model would be meaningless against it) and only warns when the configured one differs.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import SignalUnavailable
from engine.signal import IndexOptions
from signals.vector.embedder import Embedder, HashingEmbedder
from signals.vector.meta import EmbedSettings
from signals.vector.model import (
    BUNDLED_NAME,
    ModelIdentity,
    ModelSource,
    identify,
    resolve_model,
)
from signals.vector.remote_spec import REMOTE

ONNX = "onnx"
STATIC = "static"  # the fast tier's model2vec table (static_model.py)
HASHING = "hashing"  # the test fake: reconstructible from meta alone

# Texts per encoder run when indexing. Small batches keep the fused attention's working set
# in cache. Measured on 256 real chunks of the evaluation trees, 2 threads, 4 interleaved
# pairs: fp32 at 256 pieces 31.5-35.1 chunks/s with batches of 4 against 25.6-32.8 with 16
# (faster in every pair); int8 at 128 pieces 64.9-81.7 with 4 against 55.5-75.6 with 32;
# 2 and 1 are slower again. fp32 vectors do not depend on the batch (1.5e-8); int8 ones do
# a little (activations are quantised per batch), and less so in small batches.
DOCUMENT_BATCH = 4


@dataclass(frozen=True, slots=True)
class LoadedModel:
    embedder: Embedder
    meta: dict[str, Any]  # stored as the index meta's "model"


def model_meta(
    identity: ModelIdentity | None,
    *,
    backend: str,
    model_id: str,
    dim: int,
    max_seq_length: int,
    precision: str = "fp32",
    document_tokens: int = 0,
) -> dict[str, Any]:
    source = identity.source if identity else None
    return {
        "backend": backend,
        "model_id": model_id,
        "name": source.name if source else model_id,
        "path": str(source.path) if source else "",
        "bundled": bool(source and source.bundled),
        "weights_sha256": identity.weights_sha256 if identity else "",
        "config_sha256": identity.config_sha256 if identity else "",
        "dim": dim,
        "max_seq_length": max_seq_length,
        "precision": precision,
        "document_tokens": document_tokens or max_seq_length,
    }


def load_indexing_model(options: IndexOptions, embed: EmbedSettings) -> LoadedModel:
    """The ONNX embedder for the configured model, exporting it first when needed."""
    from signals.vector.export import ensure_export
    from signals.vector.onnx_embedder import OnnxEmbedder

    identity = identify(resolve_model(options.model), options.home)
    embedder = OnnxEmbedder(
        ensure_export(identity, options.home, embed.precision),
        threads=2,
        batch_size=DOCUMENT_BATCH,
        document_tokens=embed.document_tokens,
    )
    meta = model_meta(
        identity,
        backend=ONNX,
        model_id=embedder.model_id,
        dim=embedder.dim,
        max_seq_length=embedder.manifest.max_seq_length,
        precision=embedder.manifest.precision,
        document_tokens=embedder.document_tokens,
    )
    return LoadedModel(embedder, meta)


def load_static_model(options: IndexOptions, embed: EmbedSettings) -> LoadedModel:
    """The fast tier's embedder: the static model distilled from the configured model
    (distilled first, once per home, when it is missing)."""
    del embed  # precision and word pieces are the ONNX model's settings
    from signals.vector.static_embedder import StaticEmbedder
    from signals.vector.static_model import ensure_static_model

    identity = identify(resolve_model(options.model), options.home)
    manifest = ensure_static_model(identity, options.home)
    embedder = StaticEmbedder(manifest)
    meta = static_meta(identity, manifest.directory.name, embedder, manifest.weights_sha256)
    return LoadedModel(embedder, meta)


def static_meta(
    identity: ModelIdentity | None, folder: str, embedder: Embedder, weights_sha256: str
) -> dict[str, Any]:
    """The index meta's "model" for a static model: its own weights' hash, and the key of
    the model it was distilled from (``mismatch_warning`` compares that one)."""
    meta = model_meta(
        identity,
        backend=STATIC,
        model_id=embedder.model_id,
        dim=embedder.dim,
        max_seq_length=0,
        precision="fp16",
    )
    return {
        **meta,
        "name": f"static distill of {meta['name']}",
        "folder": folder,  # under $ENGINE_HOME/models
        "source_key": identity.key if identity else "",
        "source_weights_sha256": meta["weights_sha256"],
        "weights_sha256": weights_sha256,
    }


def load_query_embedder(
    meta: Mapping[str, Any], home: Path, *, threads: int = 1, prepack: bool = True
) -> Embedder:
    """The embedder of the model an index was built with; SignalUnavailable if it is gone.

    ``prepack=False`` suits a process that embeds one query (OnnxEmbedder explains)."""
    backend = meta.get("backend")
    if backend == HASHING:
        return HashingEmbedder(int(meta["dim"]), model_id=str(meta["model_id"]))
    if backend == STATIC:
        return _static_embedder(meta, home)
    if backend == REMOTE:
        from signals.vector.remote import query_embedder

        return query_embedder(meta)  # queries go where the documents went (remote_spec.py)
    if backend != ONNX:
        raise SignalUnavailable(
            f"the vector index names an unknown embedding backend {backend!r}; "
            "run `engine index` again"
        )
    from signals.vector.onnx_embedder import read_manifest

    key = str(meta["model_id"])
    directory = home / "models" / key
    if read_manifest(directory) is None:
        _reexport(meta, home, directory)
    # One thread and no spinning: a query embeds ~10 word pieces, and the other signals run
    # on the second core at the same time.
    return _shared_embedder(directory, threads, prepack)


_EMBEDDERS: dict[tuple[Path, int, bool], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def _shared_embedder(directory: Path, threads: int, prepack: bool) -> Embedder:
    """One ONNX session per model and process: a long-running server opens a new index
    generation after every reindex, and each session costs about 1 s and 150-200 MB.
    onnxruntime sessions may be run from several threads at once."""
    from signals.vector.onnx_embedder import OnnxEmbedder

    key = (directory, threads, prepack)
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get(key)
        if embedder is None:
            embedder = OnnxEmbedder(directory, threads=threads, prepack=prepack)
            _EMBEDDERS[key] = embedder
        return embedder


def _static_embedder(meta: Mapping[str, Any], home: Path) -> Embedder:
    """The static model an index's fast tier was built with, distilled again from its source
    when its folder is gone and the source still holds the same model."""
    from signals.vector.static_embedder import StaticEmbedder
    from signals.vector.static_model import ensure_static_model, read_static_manifest

    directory = home / "models" / str(meta.get("folder", ""))
    key = (directory, 0, False)
    with _EMBEDDERS_LOCK:
        found = _EMBEDDERS.get(key)
    if found is not None:
        return found
    manifest = read_static_manifest(directory)
    if manifest is None:
        source = _recorded_source(meta)
        if source is None or identify(source, home).key != meta.get("source_key"):
            raise SignalUnavailable(
                f"the vector index's fast tier was built with {meta.get('name', '?')}, which "
                f"is gone ({directory} is missing and its source model changed); run "
                "`engine index` again to re-embed"
            )
        manifest = ensure_static_model(identify(source, home), home)
    if manifest.weights_sha256 != meta.get("weights_sha256"):
        raise SignalUnavailable(
            f"the static model in {directory} is not the one the vector index was built with "
            "(its weights' sha256 differs); run `engine index` again to re-embed"
        )
    embedder = StaticEmbedder(manifest)
    with _EMBEDDERS_LOCK:
        return _EMBEDDERS.setdefault(key, embedder)


def _reexport(meta: Mapping[str, Any], home: Path, directory: Path) -> None:
    """Recreate a lost export from the model folder, if it still holds the same model."""
    from signals.vector.export import ensure_export

    name = str(meta.get("name", "?"))
    source = _recorded_source(meta)
    if source is not None:
        identity = identify(source, home)
        if identity.key == base_key(meta):
            if ensure_export(identity, home, str(meta.get("precision", "fp32"))) == directory:
                return
            # A quantised copy of an older export format: today's gives other vectors.
            raise SignalUnavailable(
                f"the vector index was built with a {meta.get('precision')} copy of {name} "
                f"in an older format whose export {directory} is missing; run `engine index` "
                "again to re-embed"
            )
    raise SignalUnavailable(
        f"the vector index was built with model {name}, which is no longer available: "
        f"its ONNX export {directory} is missing and the model folder is gone or changed. "
        f"Restore that model folder, or run `engine index` again to re-embed with the "
        f"configured model"
    )


def base_key(meta: Mapping[str, Any]) -> str:
    """The identity key of the model an index used, whatever precision it ran at."""
    model_id = str(meta.get("model_id", ""))
    if meta.get("precision", "fp32") != "fp32":
        # "<key>-int8" (format 2), "<key>-int8-f3" or "<key>-mixed-f3": the key is two hex
        # parts.
        return model_id.split(f"-{meta['precision']}", 1)[0]
    return model_id


def _recorded_source(meta: Mapping[str, Any]) -> ModelSource | None:
    try:
        if meta.get("bundled"):
            # The package may have moved (new venv); the bundled model is found afresh.
            return resolve_model(None)
        path = str(meta.get("path", ""))
        return resolve_model(path) if path else None
    except SignalUnavailable:
        return None


def mismatch_warning(meta: Mapping[str, Any], configured: str | None, home: Path) -> str:
    """ "" when the configured model is the index's model, else what the user should know."""
    if meta.get("backend") == REMOTE:
        return ""  # the configured local model plays no part in a remote index's queries
    index_name = str(meta.get("name", "?"))
    configured_name = configured or BUNDLED_NAME
    try:
        identity = identify(resolve_model(configured), home)
    except (SignalUnavailable, OSError):
        return (
            f"index built with model {index_name}; configured model {configured_name} "
            "ignored (not found); run engine index again to switch"
        )
    if identity.key == (meta["source_key"] if meta.get("backend") == STATIC else base_key(meta)):
        return ""
    return (
        f"index built with model {index_name}; configured model {identity.source.name} "
        "ignored; run engine index again to switch"
    )
