"""One export folder's files: the weights saved beside the graph, the manifest, the checks,
and the atomic publish. Shared by export.py (full precision) and quantize.py (int8 copies),
so that neither imports the other.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from signals.vector.onnx_embedder import (
    MANIFEST_FILE,
    WEIGHTS_FILE,
    ExportManifest,
    is_current,
    read_manifest,
)


def save_with_external_weights(graph: Any, target: Path) -> None:
    """Save an ONNX model with its tensors in WEIGHTS_FILE next to ``target``."""
    import onnx

    onnx.save_model(
        graph,
        str(target),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=WEIGHTS_FILE,
        size_threshold=1024,
    )
    # onnx writes the weights owner-only; an export is shared like the rest of the home.
    (target.parent / WEIGHTS_FILE).chmod(0o644)


@contextmanager
def errors_logged_only() -> Iterator[None]:
    """Silence onnxruntime's graph tools below ERROR while they run: they log a warning for
    every output of a fused (contrib) op that shape inference cannot type, which is not news
    (those outputs are float)."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


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
        # Another process published the same export first (keep it), or a partial folder or
        # an export of an older format is in the way (replace it). The old folder is moved
        # aside first, so a reader sees one complete export or the other; a process already
        # running the old one keeps its open (or memory-mapped) files.
        if not is_current(read_manifest(target)):
            retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            target.rename(retired / "export")
            staging.rename(target)
            shutil.rmtree(retired, ignore_errors=True)
