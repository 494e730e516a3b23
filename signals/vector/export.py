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
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import SignalUnavailable
from signals.vector.model import ModelIdentity
from signals.vector.onnx_embedder import (
    EXPORT_FORMAT,
    FP32,
    INT8,
    MANIFEST_FILE,
    ONNX_FILE,
    TOKENIZER_FILE,
    ExportManifest,
    OnnxEmbedder,
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
    missing or partial (an int8 copy is derived from the full-precision export)."""
    target = export_dir(home, identity)
    if read_manifest(target) is None:
        export_onnx(identity, target)
    if precision == FP32:
        return target
    if precision == INT8:
        from signals.vector.quantize import ensure_quantized

        return ensure_quantized(target, CHECK_TEXTS)
    raise SignalUnavailable(f"unknown embedding precision {precision!r}; use fp32 or int8")


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
    _optimize(staging / _RAW_ONNX_FILE, staging / ONNX_FILE)

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


def _optimize(raw: Path, target: Path) -> None:
    """Save the graph with onnxruntime's portable (EXTENDED) fusions already applied.

    Every process that opens the model then skips most of the optimisation work: a session
    is created in ~0.26 s instead of ~0.32 s here, which a cold query pays in full. The
    hardware-specific (ALL) level still runs at load time, so the file stays portable.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(target)
    ort.InferenceSession(str(raw), options, providers=["CPUExecutionProvider"])
    raw.unlink()


def max_cosine_diff(a: Any, b: Any, texts: tuple[str, ...] | list[str]) -> float:
    """Worst ``1 - cos`` between two embedders' vectors of the same texts."""
    va = a.embed_documents(list(texts))
    vb = b.embed_documents(list(texts))
    return float(1.0 - np.min(np.sum(va * vb, axis=1)))


def write_manifest(directory: Path, manifest: ExportManifest) -> None:
    (directory / MANIFEST_FILE).write_text(
        json.dumps(manifest.to_json(), indent=1, sort_keys=True), encoding="utf-8"
    )


def publish(staging: Path, target: Path) -> None:
    try:
        staging.rename(target)
    except OSError:
        # Another process published the same export first (keep it), or a partial folder
        # without a manifest is in the way (replace it).
        if read_manifest(target) is None:
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)


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
