"""Which MatMuls the mixed-precision copy quantises, on hand-built graphs.

Quantising the real export (and checking it against full precision) is in
test_onnx_embedder.py (slow).
"""

from __future__ import annotations

from typing import Any

import pytest
from onnx import helper

from engine.errors import SignalUnavailable
from signals.vector.onnx_embedder import EXPORT_FORMAT
from signals.vector.quantize import feed_forward_inputs, quantize_export, quantized_dir


def graph(*nodes: Any) -> Any:
    return helper.make_graph(list(nodes), "g", inputs=[], outputs=[])


def test_the_matmul_feeding_a_fused_gelu_is_the_feed_forward_input() -> None:
    layer = graph(
        helper.make_node("Attention", ["x", "w_qkv"], ["a"], name="attention"),
        helper.make_node("MatMul", ["a", "w_o"], ["o"], name="attention_output"),
        helper.make_node("MatMul", ["o", "w_up"], ["up"], name="widen"),
        helper.make_node("BiasGelu", ["up", "b_up"], ["g"], name="gelu"),
        helper.make_node("MatMul", ["g", "w_down"], ["down"], name="narrow"),
    )
    assert feed_forward_inputs(layer) == ["widen"]


def test_an_unfused_bias_add_between_matmul_and_gelu_is_looked_through() -> None:
    layer = graph(
        helper.make_node("MatMul", ["x", "w_up"], ["up"], name="widen"),
        helper.make_node("Add", ["up", "b_up"], ["biased"], name="bias"),
        helper.make_node("Gelu", ["biased"], ["g"], name="gelu"),
        helper.make_node("MatMul", ["g", "w_down"], ["down"], name="narrow"),
        # Two steps away from a GELU is not a feed-forward input.
        helper.make_node("MatMul", ["x", "w_other"], ["other"], name="other"),
        helper.make_node("Add", ["other", "b"], ["other_biased"], name="other_bias"),
        helper.make_node("Add", ["other_biased", "c"], ["again"], name="other_again"),
        helper.make_node("Gelu", ["again"], ["g2"], name="gelu2"),
    )
    assert feed_forward_inputs(layer) == ["widen"]


def test_a_graph_without_gelu_has_nothing_to_quantise_in_mixed_precision() -> None:
    plain = graph(helper.make_node("MatMul", ["x", "w"], ["y"], name="only"))
    assert feed_forward_inputs(plain) == []


def test_each_precision_gets_its_own_model_id(tmp_path: Any) -> None:
    full = tmp_path / "models" / "abc-123"
    assert quantized_dir(full, "mixed").name == f"abc-123-mixed-f{EXPORT_FORMAT}"
    assert quantized_dir(full, "int8").name == f"abc-123-int8-f{EXPORT_FORMAT}"


def test_quantising_a_missing_export_says_so(tmp_path: Any) -> None:
    full = tmp_path / "models" / "abc-123"
    full.mkdir(parents=True)
    with pytest.raises(SignalUnavailable, match="no complete ONNX export"):
        quantize_export(full, quantized_dir(full, "mixed"), "mixed", ("x",))
    with pytest.raises(ValueError, match="fp32"):
        quantize_export(full, full, "fp32", ("x",))
