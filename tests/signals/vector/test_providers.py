"""Which onnxruntime providers the local model runs on; only the choice is testable here
(these machines have no GPU), so the available lists are fakes."""

from __future__ import annotations

from signals.vector.providers import CPU, choose_providers, session_providers, uses_gpu

CUDA = "CUDAExecutionProvider"
ROCM = "ROCMExecutionProvider"
TENSORRT = "TensorrtExecutionProvider"


def test_cpu_only_build_runs_on_cpu() -> None:
    assert choose_providers([CPU]) == [CPU]
    assert not uses_gpu(choose_providers([CPU]))


def test_a_gpu_provider_is_preferred_with_cpu_behind_it() -> None:
    assert choose_providers([TENSORRT, CUDA, CPU]) == [CUDA, CPU]  # TensorRT: not by default
    assert choose_providers([ROCM, CPU]) == [ROCM, CPU]
    assert uses_gpu([CUDA, CPU])


def test_the_environment_can_keep_to_the_cpu_or_name_providers() -> None:
    assert choose_providers([CUDA, CPU], "cpu") == [CPU]
    assert choose_providers([TENSORRT, CUDA, CPU], f"{TENSORRT}, {CUDA}") == [TENSORRT, CUDA, CPU]
    # A provider this build lacks is skipped rather than failing the session.
    assert choose_providers([CPU], CUDA) == [CPU]
    assert choose_providers([CUDA, CPU], "  ") == [CUDA, CPU]


def test_this_machine_gets_a_session_it_can_open() -> None:
    providers = session_providers({})
    assert providers[-1] == CPU
    assert session_providers({"ENGINE_ONNX_PROVIDERS": "cpu"}) == [CPU]
