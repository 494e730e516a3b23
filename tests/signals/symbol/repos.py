"""Toy repositories for the symbol signal's tests: chunks, definitions and build jobs.

Chunks and definitions are written out by hand (not made by the chunker) so that these tests
depend only on the symbol signal. The Python toy is the scip-python fixture's project
(tests/fixtures/scip/python), whose committed index.scip a real indexer wrote.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.signal import BuildJob, BuildReport, IndexOptions
from engine.types import Chunk, Definition, DefinitionKind
from signals.symbol.builder import SymbolBuilder
from tests.fakes import FakeChunkSource

FIXTURES = Path(__file__).parents[2] / "fixtures" / "scip"
PYTHON_FIXTURE = FIXTURES / "python"
PYTHON_INDEX = PYTHON_FIXTURE / "index.scip"
TYPESCRIPT_FIXTURE = FIXTURES / "typescript"


def chunk(
    chunk_id: int,
    root: Path,
    path: str,
    start_line: int,
    end_line: int,
    kind: str = "function",
    qualified_name: str = "",
) -> Chunk:
    """A chunk holding exactly lines start_line..end_line of ``root/path``."""
    lines = (root / path).read_text().splitlines()
    name = qualified_name.rsplit(".", 1)[-1]
    return Chunk(
        id=chunk_id,
        path=path,
        language="python" if path.endswith(".py") else "typescript",
        kind=kind,  # type: ignore[arg-type]
        name=name,
        qualified_name=qualified_name,
        parent=qualified_name.rpartition(".")[0],
        start_line=start_line,
        end_line=end_line,
        text="\n".join(lines[start_line - 1 : end_line]),
    )


def definition(
    path: str,
    kind: DefinitionKind,
    qualified_name: str,
    name_line: int,
    name_start_col: int,
    start_line: int,
    end_line: int,
    language: str = "python",
) -> Definition:
    name = qualified_name.rsplit(".", 1)[-1]
    return Definition(
        path,
        language,
        kind,
        name,
        qualified_name,
        name_line,
        name_start_col,
        name_start_col + len(name.encode()),
        start_line,
        end_line,
    )


def python_chunks(root: Path = PYTHON_FIXTURE) -> list[Chunk]:
    return [
        chunk(1, root, "toy/__init__.py", 1, 1, "module"),
        chunk(2, root, "toy/greeter.py", 1, 1, "module"),
        chunk(3, root, "toy/greeter.py", 4, 6, "function", "greet"),
        chunk(4, root, "toy/greeter.py", 9, 10, "class", "Greeter"),
        chunk(5, root, "toy/greeter.py", 12, 13, "method", "Greeter.__init__"),
        chunk(6, root, "toy/greeter.py", 15, 16, "method", "Greeter.greet"),
        chunk(7, root, "toy/greeter.py", 18, 20, "method", "Greeter.default"),
        chunk(8, root, "toy/util.py", 1, 3, "function", "shout"),
    ]


PYTHON_DEFINITIONS = [
    definition("toy/greeter.py", "function", "greet", 4, 4, 4, 6),
    definition("toy/greeter.py", "class", "Greeter", 9, 6, 9, 20),
    definition("toy/greeter.py", "method", "Greeter.__init__", 12, 8, 12, 13),
    definition("toy/greeter.py", "method", "Greeter.greet", 15, 8, 15, 16),
    definition("toy/greeter.py", "method", "Greeter.default", 19, 8, 18, 20),
    definition("toy/util.py", "function", "shout", 1, 4, 1, 3),
]


def copy_python_toy(tmp_path: Path, *, with_index: bool = False) -> Path:
    """A copy of the Python toy project (without its index.scip unless asked)."""
    root = tmp_path / "repo"
    shutil.copytree(PYTHON_FIXTURE, root)
    if not with_index:
        (root / "index.scip").unlink()
    return root


def make_job(
    directory: Path,
    root: Path,
    chunks: Sequence[Chunk],
    definitions: Sequence[Definition],
    *,
    previous: BuildReport | None = None,
    previous_dir: Path | None = None,
    changed: Sequence[str] = (),
) -> BuildJob:
    directory.mkdir(parents=True)
    meta: dict[str, Any] = dict(previous.meta) if previous is not None else {}
    return BuildJob(
        repo_root=root,
        directory=directory,
        previous_dir=previous_dir,
        previous_meta=meta,
        added=list(chunks),
        removed_ids=[],
        removed_paths=list(changed),
        definitions=list(definitions),
        changed_paths=list(changed),
        source=FakeChunkSource(chunks),
    )


def build(
    directory: Path,
    root: Path,
    chunks: Sequence[Chunk],
    definitions: Sequence[Definition],
    options: IndexOptions,
    *,
    previous: BuildReport | None = None,
    previous_dir: Path | None = None,
    changed: Sequence[str] = (),
    bin_dir: Path | None = None,
) -> BuildReport:
    job = make_job(
        directory,
        root,
        chunks,
        definitions,
        previous=previous,
        previous_dir=previous_dir,
        changed=changed,
    )
    report = SymbolBuilder(options, bin_dir=bin_dir).build(job)
    assert report.ready
    return report


# A fake indexer finds --output the way the real ones take it, and counts its runs.
_FIND_OUTPUT = """
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--output" ]; then out="$2"; fi
  shift
done
echo run >> "$(dirname "$0")/runs"
"""


def fake_indexer(bin_dir: Path, name: str, body: str) -> Path:
    """An executable ``bin_dir/name`` that runs the shell ``body`` with ``$out`` set."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\n{_FIND_OUTPUT}\n{body}\n")
    script.chmod(0o755)
    return script


def runs(bin_dir: Path) -> int:
    """How many times the fake indexers in ``bin_dir`` ran."""
    counter = bin_dir / "runs"
    return len(counter.read_text().splitlines()) if counter.is_file() else 0
