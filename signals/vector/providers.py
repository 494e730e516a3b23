"""Which onnxruntime execution providers run the local model: a GPU's when there is one.

onnxruntime lists the providers its build carries (``get_available_providers()``): the
``onnxruntime`` wheel only CPU, ``onnxruntime-gpu`` also CUDA (and TensorRT), the ROCm and
DirectML builds theirs. The first GPU provider in ``GPU_PREFERENCE`` that is listed runs the
model, with CPU after it for the operators the GPU provider lacks. TensorRT is left out: it
compiles an engine per input shape, minutes for the varying batch shapes of indexing.

``ENGINE_ONNX_PROVIDERS`` overrides the choice: ``cpu`` keeps everything on the CPU, or a
comma-separated list of provider names (``CUDAExecutionProvider,CPUExecutionProvider``) is
used in that order, less those this build does not have. A GPU's vectors differ from the
CPU's only in rounding (~1e-6), so the embedding cache, keyed by the model, is shared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

CPU: Final = "CPUExecutionProvider"
ENV_VAR: Final = "ENGINE_ONNX_PROVIDERS"
GPU_PREFERENCE: Final = (
    "CUDAExecutionProvider",
    "ROCMExecutionProvider",
    "MIGraphXExecutionProvider",
    "DmlExecutionProvider",
    "CoreMLExecutionProvider",
)


def choose_providers(available: Sequence[str], override: str | None = None) -> list[str]:
    """The providers to open a session with, best first; always ends with CPU."""
    if override is not None and override.strip():
        if override.strip().lower() == "cpu":
            return [CPU]
        wanted = [name.strip() for name in override.split(",") if name.strip()]
        chosen = [name for name in wanted if name in available and name != CPU]
        return [*chosen, CPU]
    for name in GPU_PREFERENCE:
        if name in available:
            return [name, CPU]
    return [CPU]


def session_providers(environ: Mapping[str, str] | None = None) -> list[str]:
    """``choose_providers`` for this process's onnxruntime build and environment."""
    import os

    import onnxruntime as ort

    env = os.environ if environ is None else environ
    return choose_providers(ort.get_available_providers(), env.get(ENV_VAR))


def uses_gpu(providers: Sequence[str]) -> bool:
    return bool(providers) and providers[0] != CPU
