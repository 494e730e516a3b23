from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine.signal import IndexOptions
from signals.vector.plugin import PLUGIN

REPO = Path(__file__).resolve().parents[3]


def test_plugin_names_the_vector_signal(tmp_path: Path) -> None:
    assert PLUGIN.name == "vector"
    builder = PLUGIN.make_builder(IndexOptions(home=tmp_path))
    assert builder.name == "vector"
    assert builder.slow is True


def test_importing_the_plugin_imports_no_heavy_library() -> None:
    code = (
        "import sys, signals.vector.plugin\n"
        "heavy = {'faiss', 'onnxruntime', 'torch', 'sentence_transformers', 'tokenizers',"
        " 'numpy'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"


def test_the_query_path_imports_neither_torch_nor_sentence_transformers(tmp_path: Path) -> None:
    # Opening and searching a (fake-model) index must stay on numpy + faiss.
    code = (
        "import sys\n"
        "import signals.vector.signal, signals.vector.loader\n"
        "print(sorted({'torch', 'sentence_transformers', 'transformers'} & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"
