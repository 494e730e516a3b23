"""Derives the int8 and mixed-precision copies of an ONNX export, verified against it.

Dynamic quantisation: weights are stored as int8 per output channel and activations are
quantised on the fly. ``reduce_range`` keeps weights to 7 bits because CPUs without VNNI
(this one has AVX2 only) multiply u8×s8 pairs with a saturating 16-bit add (``vpmaddubsw``).

- ``int8``: every MatMul and fused Attention. Mean cosine 0.992 to fp32 on 320 real chunks,
  1.4-1.6× less encoder CPU, and measurably worse retrieval (eval/RESULTS.md): the fast
  profile, not the default.
- ``mixed``: only the two projections that read a fresh layer-norm output, which quantises
  well: each layer's fused Attention (its query/key/value projection) and the MatMul that
  widens the feed-forward block (hidden → 4×hidden, the one feeding the GELU), 58% of the
  encoder's arithmetic. The attention's output projection and the MatMul after the GELU
  (whose input has outliers) stay float: quantising them as well is what cost full int8
  its accuracy (0.008 vector NDCG@10 for the output projection alone). Mean cosine 0.9965
  to fp32 on 480 real chunks, ~22% less CPU per chunk, and the same retrieval quality as
  fp32 on the four datasets (eval/RESULTS.md): the default.

Both are recorded index settings with their own model id, never a hidden switch.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections import defaultdict
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
from signals.vector.onnx_embedder import (
    EXPORT_FORMAT,
    INT8,
    MIXED,
    ONNX_FILE,
    TOKENIZER_FILE,
    ExportManifest,
    OnnxEmbedder,
    is_current,
    read_manifest,
)

QUANTIZED = (MIXED, INT8)

# 1 - cosine between the quantised and the fp32 vector of one check text; int8 measured up
# to 0.015.
MAX_INT8_COSINE_DIFF = 0.05

# The activation after the feed-forward block's first MatMul, however the graph spells it.
_GELU_OPS = frozenset({"Gelu", "BiasGelu", "FastGelu"})


def quantized_dir(full: Path, precision: str) -> Path:
    """``<key>-<precision>-f<format>``: the folder name is the model id that indexes and the
    embedding cache record, and a new export format quantises a different graph, whose
    vectors must not mix with an older copy's (format 2 int8 copies were ``<key>-int8``)."""
    return full.with_name(f"{full.name}-{precision}-f{EXPORT_FORMAT}")


def ensure_quantized(full: Path, precision: str, check_texts: tuple[str, ...]) -> Path:
    """The ``precision`` copy of the export in ``full``, deriving it first when missing,
    partial or of an older format."""
    target = quantized_dir(full, precision)
    if not is_current(read_manifest(target)):
        quantize_export(full, target, precision, check_texts)
    return target


def quantize_export(
    full: Path, target: Path, precision: str, check_texts: tuple[str, ...]
) -> ExportManifest:
    if precision not in QUANTIZED:
        raise ValueError(f"no quantised precision {precision!r}")
    source = read_manifest(full)
    if source is None:
        raise SignalUnavailable(f"no complete ONNX export in {full} to quantise")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    staging.chmod(0o755)
    try:
        _quantize_graph(full / ONNX_FILE, staging / ONNX_FILE, precision)
        shutil.copy2(full / TOKENIZER_FILE, staging / TOKENIZER_FILE)
        manifest = dataclasses.replace(
            source, model_id=target.name, precision=precision, max_cosine_diff=1.0
        )
        write_manifest(staging, manifest)
        diff = max_cosine_diff(
            OnnxEmbedder(staging, threads=2), OnnxEmbedder(full, threads=2), check_texts
        )
        if not diff <= MAX_INT8_COSINE_DIFF:
            raise SignalUnavailable(
                f"the {precision} copy of {source.name} strays too far from full precision "
                f"(1 - cosine up to {diff:.3f}); index with --embed-precision fp32"
            )
        manifest = dataclasses.replace(manifest, max_cosine_diff=diff)
        write_manifest(staging, manifest)
        publish(staging, target)
    except SignalUnavailable:
        raise
    except Exception as err:
        raise SignalUnavailable(
            f"could not quantise {source.name} to {precision}: {err}; "
            "index with --embed-precision fp32"
        ) from err
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return manifest


def _quantize_graph(source: Path, target: Path, precision: str) -> None:
    """Quantise the weights ``precision`` names; the embedding table stays float
    (quantising it too cost more CPU per chunk here, 56.9 against 50.4 ms, for no gain)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    nodes: list[str] = []  # empty: every node of the quantised op types
    if precision == MIXED:
        graph = onnx.load(str(source), load_external_data=False).graph
        widening = feed_forward_inputs(graph)
        if not widening:
            raise SignalUnavailable(
                "the model's graph has no MatMul feeding a GELU to quantise; "
                "index with --embed-precision fp32 or int8"
            )
        # An unfused graph (export.py's fallback) has no Attention node: its query/key/value
        # MatMuls then stay float, which costs speed, not accuracy.
        nodes = [n.name for n in graph.node if n.op_type == "Attention"] + widening
    whole = target.with_name(target.name + ".whole")
    with errors_logged_only():
        quantize_dynamic(
            str(source),
            str(whole),
            op_types_to_quantize=["MatMul", "Attention"],
            nodes_to_quantize=nodes or None,
            per_channel=True,
            reduce_range=True,
            weight_type=QuantType.QInt8,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    save_with_external_weights(onnx.load(str(whole)), target)
    whole.unlink()


def feed_forward_inputs(graph: Any) -> list[str]:
    """The MatMuls whose output reaches a GELU, directly or through one bias Add: each
    transformer layer's feed-forward input projection, found by shape of the graph rather
    than by the exporter's node names."""
    consumers: dict[str, list[Any]] = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node)

    def feeds_gelu(output: str, through_add: bool) -> bool:
        for node in consumers.get(output, ()):
            if node.op_type in _GELU_OPS:
                return True
            if (
                through_add
                and node.op_type == "Add"
                and any(feeds_gelu(out, through_add=False) for out in node.output)
            ):
                return True
        return False

    return [
        node.name
        for node in graph.node
        if node.op_type == "MatMul" and feeds_gelu(node.output[0], through_add=True)
    ]
