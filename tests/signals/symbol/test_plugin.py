from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine.signal import IndexOptions, OpenOptions
from engine.types import Query
from signals.symbol.plugin import PLUGIN
from tests.signals.symbol.repos import PYTHON_DEFINITIONS, build, python_chunks

REPO = Path(__file__).resolve().parents[3]


def test_plugin_names_the_symbol_signal_and_a_fast_builder(tmp_path: Path) -> None:
    assert PLUGIN.name == "symbol"
    builder = PLUGIN.make_builder(IndexOptions(home=tmp_path))
    assert (builder.name, builder.slow) == ("symbol", False)


def test_open_gives_a_searchable_signal(tmp_path: Path) -> None:
    report = build(
        tmp_path / "g1", tmp_path, python_chunks(), PYTHON_DEFINITIONS, IndexOptions(tmp_path)
    )
    signal = PLUGIN.open(tmp_path / "g1", report.meta, OpenOptions(home=tmp_path))
    assert signal.name == "symbol"
    assert signal.search(Query("Greeter"), 1)[0].symbol == "toy.greeter.Greeter"
    signal.close()  # type: ignore[attr-defined]


def test_the_query_path_imports_no_heavy_library() -> None:
    code = (
        "import sys\n"
        "import signals.symbol.plugin, signals.symbol.search, signals.symbol.lookup\n"
        "heavy = {'faiss', 'onnxruntime', 'torch', 'sentence_transformers', 'tantivy',"
        " 'numpy', 'tree_sitter', 'tree_sitter_language_pack'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"
