"""One-time export of a sentence-transformers model to ONNX, verified against the original.

The export lives in ``$ENGINE_HOME/models/<identity key>/`` (model.onnx, tokenizer.json,
export.json) and is shared by every repository indexed with that model. It is written into a
temporary folder and renamed into place, so a reader sees a complete export or none, and two
processes exporting at once cost work but never corrupt it. Only this module needs torch.

Pitfalls handled here: transformers 5.x's BertModel rejects positional arguments ("multiple
values for argument 'use_cache'"), so the graph is traced through sentence-transformers'
own modules, which call it with keywords; the legacy exporter (``dynamo=False``,
opset 17) with dynamic batch and sequence axes is the one that works for these models.
Attention is traced in transformers' "eager" form: the default SDPA form exports to a
graph onnxruntime cannot fuse, and ran 1.5x slower (9.0 vs 14.2 chunks/s, same machine).

The traced graph is then rewritten by onnxruntime's transformer optimizer, which replaces
each BERT layer's ~40 nodes with its fused Attention, SkipLayerNormalization and BiasGelu
kernels (vectors equal to 1e-7; 5-8% less CPU per chunk here); an architecture it cannot
fuse falls back to onnxruntime's own portable graph optimisations. The weights are saved
beside the graph (WEIGHTS_FILE), where onnxruntime memory-maps them instead of parsing a
90 MB protobuf: a cold query's session opens in ~0.07 s instead of ~0.3 s.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from engine.errors import SignalUnavailable
from signals.vector.export_files import (
    errors_logged_only,
    max_cosine_diff,
    publish,
    save_with_external_weights,
    write_manifest,
)
from signals.vector.model import ModelIdentity
from signals.vector.onnx_embedder import (
    EXPORT_FORMAT,
    FP32,
    INT8,
    MIXED,
    ONNX_FILE,
    TOKENIZER_FILE,
    ExportManifest,
    OnnxEmbedder,
    is_current,
    read_manifest,
)
from signals.vector.st_embedder import SentenceTransformerEmbedder

# 1 - cosine between the ONNX and the sentence-transformers vector of one text; measured
# differences are ~1e-7, so anything near this bound means a broken graph.
MAX_COSINE_DIFF = 1e-4

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_RAW_ONNX_FILE = "traced.onnx"

# Short and long, code and prose, and one text past the sequence limit (truncation).
CHECK_TEXTS = (
    "parse HTTP request body",
    "def add(a, b):\n    return a + b",
    "  leading whitespace and UPPER case",
    "",
    "class LRUCache:\n    def get(self, key):\n        return self._data.get(key)\n" * 40,
    "Read the configuration file and return a dict of settings.",
)


def export_dir(home: Path, identity: ModelIdentity) -> Path:
    return home / "models" / identity.key


def ensure_export(identity: ModelIdentity, home: Path, precision: str = FP32) -> Path:
    """The export folder for ``identity`` at ``precision``, exporting first when it is
    missing, partial or of an older format (an int8 copy is derived from the full-precision
    export). Only indexing calls this: a query runs whatever readable export is there."""
    target = export_dir(home, identity)
    if not is_current(read_manifest(target)):
        export_onnx(identity, target)
    if precision == FP32:
        return target
    if precision in (MIXED, INT8):
        from signals.vector.quantize import ensure_quantized

        return ensure_quantized(target, precision, CHECK_TEXTS)
    raise SignalUnavailable(
        f"unknown embedding precision {precision!r}; use {FP32}, {MIXED} or {INT8}"
    )


def export_onnx(identity: ModelIdentity, target: Path) -> ExportManifest:
    """Export, verify and publish; SignalUnavailable with the reason when that fails."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the export is shared like the home
    try:
        manifest = _export_into(identity, staging)
        publish(staging, target)
    except SignalUnavailable:
        raise
    except Exception as err:
        raise SignalUnavailable(
            f"could not export embedding model {identity.source.name} to ONNX: {err}"
        ) from err
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return manifest


def _export_into(identity: ModelIdentity, staging: Path) -> ExportManifest:
    import torch

    reference = SentenceTransformerEmbedder(
        str(identity.source.path), identity.key, eager_attention=True
    )
    model = reference.model
    tokenizer = model.tokenizer
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise SignalUnavailable(
            f"{identity.source.name} has no fast (tokenizers) tokenizer, which the ONNX "
            "query path needs"
        )
    names = tuple(n for n in _INPUTS if n in tokenizer.model_input_names)
    if "input_ids" not in names or "attention_mask" not in names:
        raise SignalUnavailable(f"{identity.source.name} is not a text transformer model")

    from tokenizers import Tokenizer

    # Saved without the folder's own padding/truncation (MiniLM's says 128, fixed); the
    # embedder applies max_seq_length itself.
    plain = Tokenizer.from_str(backend.to_str())
    plain.no_padding()
    plain.no_truncation()
    plain.save(str(staging / TOKENIZER_FILE))

    sample = tokenizer(
        ["a sample input", "another, slightly longer sample input"],
        padding=True,
        truncation=True,
        return_tensors="pt",
    )
    wrapper = _sentence_embedding_graph(model, names).eval()
    dynamic = {n: {0: "batch", 1: "sequence"} for n in names}
    dynamic["sentence_embedding"] = {0: "batch"}
    with torch.no_grad(), warnings.catch_warnings():
        # The legacy exporter is deprecated and tracing warns about shape-dependent Python
        # branches that are constant for an encoder; the check below is what we trust.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            tuple(sample[n] for n in names),
            str(staging / _RAW_ONNX_FILE),
            input_names=list(names),
            output_names=["sentence_embedding"],
            dynamic_axes=dynamic,
            opset_version=17,
            dynamo=False,
        )
    _optimize(staging / _RAW_ONNX_FILE, staging / ONNX_FILE, model)

    first = model[0]
    manifest = ExportManifest(
        format=EXPORT_FORMAT,
        model_id=identity.key,
        name=identity.source.name,
        dim=reference.dim,
        max_seq_length=int(model.max_seq_length),
        do_lower_case=bool(getattr(first, "do_lower_case", False)),
        input_names=names,
        output_name="sentence_embedding",
        pad_id=int(tokenizer.pad_token_id or 0),
        max_cosine_diff=1.0,
    )
    write_manifest(staging, manifest)
    diff = max_cosine_diff(OnnxEmbedder(staging, threads=2), reference, CHECK_TEXTS)
    if not diff <= MAX_COSINE_DIFF:
        raise SignalUnavailable(
            f"the ONNX export of {identity.source.name} disagrees with sentence-transformers "
            f"(1 - cosine up to {diff:.2e}); the model may use layers the exporter mishandles"
        )
    manifest = dataclasses.replace(manifest, max_cosine_diff=diff)
    write_manifest(staging, manifest)
    return manifest


def _optimize(raw: Path, target: Path, model: Any) -> None:
    """Write the graph to run: fused transformer kernels when the architecture allows, else
    onnxruntime's portable (EXTENDED) optimisations; weights beside it either way."""
    graph = _fused_transformer_graph(raw, model)
    if graph is None:
        graph = _ort_optimized_graph(raw)
    save_with_external_weights(graph, target)
    raw.unlink()


# model_type (transformers config) -> onnxruntime.transformers optimizer type, for the
# architectures whose fused graph has been checked against sentence-transformers here.
_FUSABLE = {"bert": "bert"}
_MS_DOMAIN = "com.microsoft"


def _fused_transformer_graph(raw: Path, model: Any) -> Any | None:
    """The traced graph with every layer's attention fused, or None when that fails."""
    config = getattr(getattr(model[0], "auto_model", None), "config", None)
    model_type = _FUSABLE.get(str(getattr(config, "model_type", "")))
    if config is None or model_type is None:
        return None
    from onnxruntime.transformers.optimizer import optimize_model

    try:
        with errors_logged_only():
            optimized = optimize_model(
                str(raw),
                model_type=model_type,
                num_heads=int(config.num_attention_heads),
                hidden_size=int(config.hidden_size),
                opt_level=0,  # the fusions only; onnxruntime's own run when a session opens
            )
    except Exception:  # any failure means "run the unfused graph"
        return None
    fused = optimized.get_fused_operator_statistics().get("Attention", 0)
    if fused != int(config.num_hidden_layers):
        return None
    graph = optimized.model
    # The fused kernels live in onnxruntime's domain; tools reading the file need it named.
    if not any(opset.domain == _MS_DOMAIN for opset in graph.opset_import):
        graph.opset_import.add(domain=_MS_DOMAIN, version=1)
    return graph


def _ort_optimized_graph(raw: Path) -> Any:
    """The graph with onnxruntime's portable (EXTENDED) fusions applied; the hardware-specific
    (ALL) level still runs at load time, so the file stays portable."""
    import onnx
    import onnxruntime as ort

    optimized = raw.with_name(raw.name + ".opt")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(optimized)
    ort.InferenceSession(str(raw), options, providers=["CPUExecutionProvider"])
    graph = onnx.load(str(optimized))
    optimized.unlink()
    return graph


def _sentence_embedding_graph(model: Any, names: tuple[str, ...]) -> Any:
    """A torch module over the whole sentence-transformers pipeline, so pooling, dense layers
    and normalisation are part of the exported graph; it calls the transformer with keywords."""
    import torch

    class SentenceEmbeddingGraph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            features = dict(zip(names, tensors, strict=True))
            return self.model(features)["sentence_embedding"]

    return SentenceEmbeddingGraph()
