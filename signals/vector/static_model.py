"""The fast tier's model: a static embedding table distilled once from MiniLM with model2vec.

model2vec's ``distill`` runs every word piece of MiniLM's vocabulary through MiniLM (30k
short passes, ~1.5-2 min here), reduces the token vectors to ``PCA_DIMS`` with PCA and
weights them by a Zipf estimate of each piece's frequency; a text's vector is then the mean
of its pieces' rows, which encodes thousands of chunks per second on one core, without
torch. The table is made from the local model folder only (offline: nothing is downloaded),
at the first index that needs it, into ``$ENGINE_HOME/models/static-<MiniLM key>-pca256/``;
like the ONNX export it is written into a temporary folder and renamed into place, so a
reader sees a complete model or none.

``static.json`` records what it was made from (MiniLM's weights and config hashes) and the
sha256 of its own weights, which the index meta records as the main model's is.

Dependencies: model2vec's ``[distill]`` extra pins transformers<5.4 and would downgrade
transformers and tokenizers below what sentence-transformers 6.2 and this project ask for,
so pyproject.toml names model2vec and skeletoken (distill's own helper) without the extra;
``distill`` itself runs with the transformers installed here (5.24; checked 2026-12-02).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import SignalUnavailable
from signals.vector.model import ModelIdentity

STATIC_FORMAT = 1  # the files of a static model folder; bump to make every home distill again
PCA_DIMS = 256  # model2vec's default, and what semble ships with
MANIFEST_FILE = "static.json"
WEIGHTS_FILE = "model.safetensors"


@dataclass(frozen=True, slots=True)
class StaticManifest:
    directory: Path
    weights_sha256: str  # of the static model's own weights file
    source_weights_sha256: str  # of the MiniLM it was distilled from
    source_config_sha256: str
    dim: int

    @property
    def key(self) -> str:
        """Names the vectors: the embedding cache and the index meta use it."""
        return f"static-{self.weights_sha256[:16]}"


def static_dir(identity: ModelIdentity, home: Path) -> Path:
    return home / "models" / f"static-{identity.key}-pca{PCA_DIMS}"


def read_static_manifest(directory: Path) -> StaticManifest | None:
    """The manifest of a complete static model folder of this format, else None."""
    try:
        data = json.loads((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != STATIC_FORMAT:
        return None
    if not (directory / WEIGHTS_FILE).is_file():
        return None
    try:
        return StaticManifest(
            directory,
            str(data["weights_sha256"]),
            str(data["source_weights_sha256"]),
            str(data["source_config_sha256"]),
            int(data["dim"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def ensure_static_model(identity: ModelIdentity, home: Path) -> StaticManifest:
    """The static model distilled from ``identity``, distilling it first when it is missing."""
    directory = static_dir(identity, home)
    found = read_static_manifest(directory)
    if found is not None:
        return found
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        started = time.perf_counter()
        dim = _distill(identity.source.path, staging)
        record: dict[str, Any] = {
            "format": STATIC_FORMAT,
            "weights_sha256": _file_sha256(staging / WEIGHTS_FILE),
            "source_weights_sha256": identity.weights_sha256,
            "source_config_sha256": identity.config_sha256,
            "source_name": identity.source.name,
            "dim": dim,
            "pca_dims": PCA_DIMS,
            "distill_seconds": round(time.perf_counter() - started, 1),
        }
        (staging / MANIFEST_FILE).write_text(json.dumps(record, indent=1), encoding="utf-8")
        try:
            staging.rename(directory)
        except OSError:
            # Another process finished first (keep its model), or a partial or older folder is
            # in the way (move it aside, then publish ours).
            if read_static_manifest(directory) is None:
                retired = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old.", dir=home))
                directory.rename(retired / "model")
                staging.rename(directory)
                shutil.rmtree(retired, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    made = read_static_manifest(directory)
    if made is None:
        raise SignalUnavailable(f"distilling the static model into {directory} failed")
    return made


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()  # 15 MB: one read is fine


def _distill(source: Path, target: Path) -> int:
    """model2vec's distill of the sentence-transformers folder ``source``, saved in ``target``."""
    from signals.vector.st_embedder import force_offline

    force_offline()  # before transformers is imported: distill reads only the local folder
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from model2vec.distill import distill
    except ImportError as err:
        raise SignalUnavailable(
            f"the fast vector tier needs model2vec to distill its model ({err}); "
            "pip install model2vec skeletoken, or index with --vectors full"
        ) from err
    model = distill(model_name=str(source), pca_dims=PCA_DIMS)
    model.save_pretrained(str(target))
    return int(model.embedding.shape[1])
