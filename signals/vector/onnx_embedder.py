"""The embedder both indexing and querying use: the ONNX export run by onnxruntime + tokenizers.

It needs neither torch nor sentence-transformers, so a cold query process pays ~0.25 s
instead of ~4.6 s, and it gives the same vectors as sentence-transformers (the export is
verified against it; see export.py). The exported graph already contains pooling and
normalisation; this module only tokenises, pads and batches.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from signals.vector.embedder import FloatMatrix, FloatVector, l2_normalise
from signals.vector.providers import session_providers

# 2: eager attention, saved pre-optimised in one file. 3: transformer layers fused into
# onnxruntime's Attention/SkipLayerNormalization kernels where the architecture allows, and
# the weights in WEIGHTS_FILE beside the graph, which onnxruntime memory-maps: a session
# opens in ~0.07 s instead of ~0.3 s. Format 2 exports still run (same vectors); indexing
# replaces them.
EXPORT_FORMAT = 3
READABLE_FORMATS = frozenset({2, EXPORT_FORMAT})
FP32: Final = "fp32"
INT8: Final = "int8"  # weights quantised per channel to 7 bits, activations dynamically to 8
MIXED: Final = "mixed"  # int8 only in the projections that read a layer norm (quantize.py)
MANIFEST_FILE = "export.json"
ONNX_FILE = "model.onnx"
WEIGHTS_FILE = "model.onnx.data"  # format 3: the graph's tensors, stored outside it
TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True, slots=True)
class ExportManifest:
    """What export.py wrote next to the ONNX file: everything needed to run it."""

    format: int
    model_id: str
    name: str
    dim: int
    max_seq_length: int
    do_lower_case: bool
    input_names: tuple[str, ...]
    output_name: str
    pad_id: int
    max_cosine_diff: float  # worst 1 - cos(onnx, sentence-transformers) over the check texts
    precision: str = FP32  # FP32: the model's own weights; INT8: a quantised copy of them

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "model_id": self.model_id,
            "name": self.name,
            "dim": self.dim,
            "max_seq_length": self.max_seq_length,
            "do_lower_case": self.do_lower_case,
            "input_names": list(self.input_names),
            "output_name": self.output_name,
            "pad_id": self.pad_id,
            "max_cosine_diff": self.max_cosine_diff,
            "precision": self.precision,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExportManifest:
        return cls(
            format=int(data["format"]),
            model_id=str(data["model_id"]),
            name=str(data["name"]),
            dim=int(data["dim"]),
            max_seq_length=int(data["max_seq_length"]),
            do_lower_case=bool(data["do_lower_case"]),
            input_names=tuple(str(n) for n in data["input_names"]),
            output_name=str(data["output_name"]),
            pad_id=int(data["pad_id"]),
            max_cosine_diff=float(data["max_cosine_diff"]),
            precision=str(data.get("precision", FP32)),
        )


def read_manifest(directory: Path) -> ExportManifest | None:
    """The export in ``directory``, or None when it is missing, partial or of a format this
    version cannot run (an older readable one is returned: see ``is_current``)."""
    try:
        data = json.loads((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
        manifest = ExportManifest.from_json(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if manifest.format not in READABLE_FORMATS:
        return None
    needed = [ONNX_FILE, TOKENIZER_FILE]
    if manifest.format >= 3:
        needed.append(WEIGHTS_FILE)
    if not all((directory / name).is_file() for name in needed):
        return None
    return manifest


def is_current(manifest: ExportManifest | None) -> bool:
    """Whether an export is in the format this version writes (else indexing re-exports)."""
    return manifest is not None and manifest.format == EXPORT_FORMAT


class OnnxEmbedder:
    """Runs an export folder. ``threads`` is onnxruntime's intra-op pool size.

    Documents are tokenised once, sorted by token count and batched, so a batch pads to
    nearly its own length instead of the longest text's; vectors return in input order.
    ``document_tokens`` cuts documents shorter than the model's own limit (queries always get
    the full limit): the encoder's cost grows with the word pieces it reads, and what matters
    most of a chunk's text comes first (documents.py).

    ``prepack=False`` skips rearranging the weights for onnxruntime's matrix kernels when
    the session opens: that costs 30-60 ms and saves ~5 ms per run, so it pays off in a
    server or an indexing run but not in a process that embeds one query (the session then
    opens in ~4 ms and the query takes ~15 ms instead of ~6; vectors agree to 1e-8).
    """

    def __init__(
        self,
        directory: Path,
        *,
        threads: int = 2,
        batch_size: int = 16,
        spin: bool = False,
        document_tokens: int | None = None,
        prepack: bool = True,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        manifest = read_manifest(directory)
        if manifest is None:
            raise FileNotFoundError(f"no complete ONNX export in {directory}")
        self._manifest = manifest
        self._directory = directory
        self._batch_size = batch_size
        self._tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(manifest.max_seq_length)
        self._document_tokens = min(
            document_tokens or manifest.max_seq_length, manifest.max_seq_length
        )
        self._document_tokenizer = self._tokenizer
        if self._document_tokens < manifest.max_seq_length:
            # A second tokenizer, not a toggled one: queries may run on other threads.
            self._document_tokenizer = Tokenizer.from_str(self._tokenizer.to_str())
            self._document_tokenizer.enable_truncation(self._document_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if not spin:
            # Spinning workers wait for work on a core someone else needs: on this shared
            # 2-core machine, indexing ran at 9.3 chunks/s without spinning, 5.4 with it.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if not prepack:
            options.add_session_config_entry("session.disable_prepacking", "1")
        # A GPU's provider when this onnxruntime build has one (providers.py says how to get
        # one and how to keep to the CPU).
        self._session = ort.InferenceSession(
            str(directory / ONNX_FILE), options, providers=session_providers()
        )

    @property
    def manifest(self) -> ExportManifest:
        return self._manifest

    @property
    def directory(self) -> Path:
        """The export folder this embedder runs."""
        return self._directory

    @property
    def model_id(self) -> str:
        return self._manifest.model_id

    @property
    def dim(self) -> int:
        return self._manifest.dim

    @property
    def document_tokens(self) -> int:
        return self._document_tokens

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._document_tokenizer.encode_batch(self._prepare(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = self._run([encodings[i] for i in rows])
        return out

    def embed_query(self, text: str) -> FloatVector:
        row: FloatVector = self._run([self._tokenizer.encode(self._prepare([text])[0])])[0]
        return row

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per document after truncation, special tokens included."""
        encodings = self._document_tokenizer.encode_batch(self._prepare(texts))
        return [len(e.ids) for e in encodings]

    def _prepare(self, texts: Sequence[str]) -> list[str]:
        if self._manifest.do_lower_case:
            return [t.lower() for t in texts]
        return list(texts)

    def _run(self, encodings: Sequence[Any]) -> FloatMatrix:
        width = max(len(e.ids) for e in encodings)
        feeds: dict[str, npt.NDArray[np.int64]] = {}
        for name, field in (
            ("input_ids", "ids"),
            ("attention_mask", "attention_mask"),
            ("token_type_ids", "type_ids"),
        ):
            if name not in self._manifest.input_names:
                continue
            pad = self._manifest.pad_id if name == "input_ids" else 0
            array = np.full((len(encodings), width), pad, dtype=np.int64)
            for row, encoding in enumerate(encodings):
                values = getattr(encoding, field)
                array[row, : len(values)] = values
            feeds[name] = array
        (vectors,) = self._session.run([self._manifest.output_name], feeds)
        return l2_normalise(np.asarray(vectors, dtype=np.float32))
