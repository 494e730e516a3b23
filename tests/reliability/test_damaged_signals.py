"""A signal's files deleted or damaged in the published generation (issue 15).

``query`` leaves such a signal out with a warning (test_corrupt_index.py). Here the other
commands: ``status`` calls it not ready, damaged, and names ``engine reindex``; a plain
``reindex`` finds the same damage (the signal's own ``check``, engine/index/health.py), builds
that signal again from the chunk store and restores the answers; ``defs`` and ``refs``, which
need the symbol signal, fail with the command that rebuilds it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from engine.index.home import Home
from signals import registry
from tests.reliability.conftest import cli
from tests.reliability.test_corrupt_index import (
    answers,
    empty,
    hint,
    published,
    scribble_header,
    truncate_half,
)


def delete(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


DAMAGES: dict[str, Callable[[Path], None]] = {
    "deleted": delete,
    "truncated": truncate_half,
    "emptied": empty,
    "scribbled": scribble_header,
}

# What each check finds without loading an index. A scribble inside a Tantivy segment file
# is found only when a search reads it (test_corrupt_index.py: the query warns with --full).
FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "lexical/meta.json": ("lexical", tuple(DAMAGES)),
    "lexical/*.idx": ("lexical", ("deleted", "truncated", "emptied")),
    "lexical/*.term": ("lexical", ("deleted", "truncated", "emptied")),
    "lexical/*.store": ("lexical", ("deleted", "truncated", "emptied")),
    "vector/vectors.faiss": ("vector", tuple(DAMAGES)),
    "vector/layout.json": ("vector", tuple(DAMAGES)),
    "vector/chunks.npy": ("vector", tuple(DAMAGES)),
    "vector/chunks.json": ("vector", tuple(DAMAGES)),
    "symbol/symbols.sqlite": ("symbol", tuple(DAMAGES)),
}
CASES = [
    pytest.param(pattern, damage, id=f"{pattern}-{damage}")
    for pattern, (_, damages) in FILES.items()
    for damage in damages
] + [
    pytest.param(folder, "deleted", id=f"{folder}/-deleted")
    for folder in ("lexical", "vector", "symbol")
]


@pytest.fixture
def built(home: Home, repo: Path) -> dict[str, Any]:
    """The toy repository indexed through the CLI; its answers before any damage."""
    code, _ = cli("index", str(repo), "--name", "toy")
    assert code == 0
    return answers()


def signal_of(pattern: str) -> str:
    return pattern.split("/")[0]


def status_text() -> str:
    result = CliRunner().invoke(main, ["status", "toy"])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize(("pattern", "damage"), CASES)
def test_status_reports_the_damage_and_a_plain_reindex_rebuilds_the_signal(
    home: Home, repo: Path, built: dict[str, Any], pattern: str, damage: str
) -> None:
    (target,) = published(home).glob(pattern)
    DAMAGES[damage](target)
    name = signal_of(pattern)

    code, status = cli("status", "toy")
    assert code == 0, status
    assert status["signals"][name]["ready"] is False, status
    assert status["signals"][name]["message"].startswith("damaged: "), status
    assert status["signals"][name]["damaged"] is True, status
    assert [d for d in status["damaged"] if d.startswith(f"the {name} signal: ")], status
    assert status["fix"] == "engine reindex toy"
    others = [n for n in status["signals"] if n != name]
    assert all(status["signals"][n]["ready"] for n in others), status
    text = status_text()
    (line,) = [line for line in text.splitlines() if line.startswith(f"  {name}: ")]
    assert line.startswith(f"  {name}: not ready, damaged: "), text
    assert line.endswith(" — run engine reindex toy"), text

    code, report = cli("reindex", "toy")
    assert code == 0, report
    assert report["upToDate"] is False, "the damaged signal is rebuilt, not up to date"
    assert report["signals"][name]["ready"] is True, report
    assert [p for p in report["problems"] if p.startswith(f"{name} signal: ")], report
    assert answers() == built
    code, status = cli("status", "toy")
    assert "damaged" not in status and status["signals"][name]["ready"], status
    code, report = cli("reindex", "toy")
    assert code == 0 and report["upToDate"] is True, report


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_defs_and_refs_name_the_rebuild_of_a_damaged_symbol_signal(
    home: Home, repo: Path, built: dict[str, Any], damage: str
) -> None:
    code, before = cli("defs", "toy", "greet")
    assert code == 0 and before["results"], before
    DAMAGES[damage](published(home) / "symbol" / "symbols.sqlite")
    for command in ("defs", "refs"):
        code, data = cli(command, "toy", "greet")
        assert code == 1, data
        assert "symbol signal" in data["error"], data
        assert hint(repo) in data["error"], data
        assert data["error"].count(hint(repo)) == 1, data
        result = CliRunner().invoke(main, [command, "toy", "greet"])
        assert result.exit_code == 1, result.output
        assert isinstance(result.exception, SystemExit | None), result.exception
        assert hint(repo) in result.output, result.output
    code, _ = cli("reindex", "toy")
    assert code == 0
    code, after = cli("defs", "toy", "greet")
    assert code == 0 and after == before, after


def test_defs_answer_while_another_signal_is_damaged(
    home: Home, repo: Path, built: dict[str, Any]
) -> None:
    code, before = cli("defs", "toy", "greet")
    assert code == 0
    delete(published(home) / "vector")
    delete(published(home) / "lexical")
    code, data = cli("defs", "toy", "greet")
    assert code == 0 and data == before, data


def test_every_registered_signal_has_a_check() -> None:
    # A signal without one is taken as whole by status and reindex until a query opens it.
    assert all(plugin.check is not None for plugin in registry.plugins().values())


def test_the_vector_check_reads_no_index(home: Home, repo: Path, built: dict[str, Any]) -> None:
    # status stays fast: the check must not import numpy or FAISS, which a query loads.
    script = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from signals.vector.plugin import PLUGIN\n"
        f"folder = Path({str(published(home) / 'vector')!r})\n"
        "meta = json.loads((folder.parent / 'manifest.json').read_text())"
        "['signals']['vector']['meta']\n"
        "PLUGIN.check(folder, meta)\n"
        "print(json.dumps(sorted(m for m in ('numpy', 'faiss') if m in sys.modules)))\n"
    )
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert json.loads(done.stdout) == []
