from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from scip.indexers import (
    BIN_DIR_ENV,
    IndexerName,
    available_indexers,
    find_indexer,
    indexers_for,
    run_indexer,
)
from scip.reader import read_index

FIXTURES = Path(__file__).parents[1] / "fixtures" / "scip"
TOOLS_BIN = Path(__file__).parents[2] / ".tools" / "node_modules" / ".bin"

# Fake indexers find the --output argument the way the real ones take it.
FIND_OUTPUT = """
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--output" ]; then out="$2"; fi
  shift
done
"""


def fake_indexer(bin_dir: Path, name: str, body: str) -> Path:
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\n{FIND_OUTPUT}\n{body}\n')
    script.chmod(0o755)
    return script


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "main.py").write_text("def main():\n    pass\n")
    (root / "tsconfig.json").write_text("{}\n")
    return root


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_indexers_for_file_extensions() -> None:
    assert indexers_for(["a/b.py", "README.md"]) == ["scip-python"]
    assert indexers_for(["src/x.tsx", "types.pyi"]) == ["scip-python", "scip-typescript"]
    assert indexers_for(["main.go", "lib.js"]) == []


def test_finds_indexers_in_the_configured_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fake_indexer(tmp_path / "bin", "scip-typescript", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv(BIN_DIR_ENV, str(tmp_path / "bin"))
    assert find_indexer("scip-typescript") == script
    assert find_indexer("scip-python") is None
    assert [(a.name, a.executable) for a in available_indexers()] == [("scip-typescript", script)]
    monkeypatch.delenv(BIN_DIR_ENV)
    assert available_indexers() == []
    assert find_indexer("scip-typescript", tmp_path / "bin") == script


def test_a_successful_run_moves_the_index_into_place(repo: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_indexer(bin_dir, "scip-python", f'cp "{FIXTURES / "python" / "index.scip"}" "$out"')
    output = tmp_path / "out" / "python.scip"
    outcome = run_indexer("scip-python", repo, output, 60, bin_dir=bin_dir, project_name="toy")
    assert outcome.ok, outcome.message
    assert (outcome.status, outcome.output, outcome.documents) == ("ok", output, 3)
    assert outcome.message == "scip-python indexed 3 documents"
    assert read_index(output).paths == ("toy/__init__.py", "toy/greeter.py", "toy/util.py")
    assert files_in(output.parent) == ["python.scip"]
    args = (bin_dir / "args").read_text().split()
    assert args[:3] == ["index", "--cwd", str(repo.resolve())]
    assert args[args.index("--project-name") + 1] == "toy"
    assert args[args.index("--project-version") + 1] == "0"
    assert files_in(repo) == ["main.py", "tsconfig.json"]


def test_a_crash_is_a_failure_with_the_indexers_words(repo: Path, tmp_path: Path) -> None:
    fake_indexer(
        tmp_path / "bin", "scip-typescript", 'echo "error: no files got indexed" >&2\nexit 3'
    )
    output = tmp_path / "index.scip"
    outcome = run_indexer("scip-typescript", repo, output, 60, bin_dir=tmp_path / "bin")
    assert (outcome.ok, outcome.status, outcome.output) == (False, "failed", None)
    assert "exited with code 3" in outcome.message
    assert "error: no files got indexed" in outcome.message
    assert not output.exists()
    assert files_in(tmp_path) == ["bin", "repo"]


def test_an_empty_index_is_a_failure(repo: Path, tmp_path: Path) -> None:
    # What scip-python does without pip: a 0-byte file (here with exit code 0).
    fake_indexer(tmp_path / "bin", "scip-python", ': > "$out"')
    output = tmp_path / "index.scip"
    outcome = run_indexer("scip-python", repo, output, 60, bin_dir=tmp_path / "bin")
    assert outcome.status == "failed"
    assert "wrote an empty index (0 bytes)" in outcome.message
    assert not output.exists()


def test_an_unreadable_index_is_a_failure(repo: Path, tmp_path: Path) -> None:
    fake_indexer(tmp_path / "bin", "scip-python", 'printf "\\377\\377\\377" > "$out"')
    outcome = run_indexer("scip-python", repo, tmp_path / "i.scip", 60, bin_dir=tmp_path / "bin")
    assert outcome.status == "failed"
    assert "unreadable index" in outcome.message


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (dead, waiting for its parent) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def gone_soon(pid: int, within_s: float = 5.0) -> bool:
    """True once ``pid`` has died; SIGKILL to a group is delivered asynchronously."""
    deadline = time.monotonic() + within_s
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_timeout_kills_the_whole_process_group(repo: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    fake_indexer(
        tmp_path / "bin",
        "scip-typescript",
        'sleep 300 &\necho $$ $! > "$FAKE_PIDS"\nwait',
    )
    outcome = run_indexer(
        "scip-typescript",
        repo,
        tmp_path / "index.scip",
        1.0,
        env={"FAKE_PIDS": str(pids)},
        bin_dir=tmp_path / "bin",
    )
    assert outcome.status == "timeout"
    assert "did not finish within 1 s" in outcome.message
    leader, child = (int(pid) for pid in pids.read_text().split())
    assert gone_soon(leader)
    assert gone_soon(child)
    assert not (tmp_path / "index.scip").exists()


def test_typescript_without_tsconfig_is_skipped_and_the_repo_untouched(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "tsconfig.json").unlink()
    fake_indexer(tmp_path / "bin", "scip-typescript", 'echo "{}" > tsconfig.json')
    outcome = run_indexer(
        "scip-typescript", repo, tmp_path / "i.scip", 60, bin_dir=tmp_path / "bin"
    )
    assert (outcome.status, outcome.seconds) == ("skipped", 0.0)
    assert "no tsconfig.json" in outcome.message
    assert files_in(repo) == ["main.py"]


def test_missing_indexer_is_skipped(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv(BIN_DIR_ENV, raising=False)
    outcome = run_indexer("scip-python", repo, tmp_path / "i.scip", 60)
    assert outcome.status == "skipped"
    assert "scip-python not found" in outcome.message
    assert BIN_DIR_ENV in outcome.message


def test_scip_python_without_pip_is_skipped(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_indexer(tmp_path / "bin", "scip-python", "exit 0")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nopip" / "python"))
    outcome = run_indexer(
        "scip-python",
        repo,
        tmp_path / "i.scip",
        60,
        env={"PATH": str(tmp_path / "empty")},
        bin_dir=tmp_path / "bin",
    )
    assert outcome.status == "skipped"
    assert "needs pip on PATH" in outcome.message


def test_timeout_must_be_positive(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        run_indexer("scip-python", repo, tmp_path / "i.scip", 0)


# ---------------------------------------------------------------- the real indexers


def real_indexer_dir(name: IndexerName) -> Path:
    folder = TOOLS_BIN if TOOLS_BIN.is_dir() else None
    if find_indexer(name, folder) is None or shutil.which("node") is None:
        pytest.skip(f"{name} is not installed (see tests/fixtures/scip/README.md)")
    return TOOLS_BIN


def definitions_by_line(index_path: Path) -> set[tuple[str, str, int, int]]:
    index = read_index(index_path)
    return {(d.symbol, d.path, d.start_line, d.end_line) for d in index.definitions}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "project"), [("scip-python", "python"), ("scip-typescript", "typescript")]
)
def test_real_indexer_reproduces_the_fixture(
    name: IndexerName, project: str, tmp_path: Path
) -> None:
    bin_dir = real_indexer_dir(name)
    root = tmp_path / project
    shutil.copytree(FIXTURES / project, root, ignore=shutil.ignore_patterns("index.scip"))
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    output = tmp_path / "out.scip"
    outcome = run_indexer(
        name, root, output, 300, bin_dir=bin_dir, project_name="toy", project_version="0.1"
    )
    assert outcome.ok, outcome.message
    assert definitions_by_line(output) == definitions_by_line(FIXTURES / project / "index.scip")
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before


def test_relative_output_and_bin_paths_are_not_read_against_the_repo(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_indexer(
        tmp_path / "bin", "scip-python", f'cp "{FIXTURES / "python" / "index.scip"}" "$out"'
    )
    monkeypatch.chdir(tmp_path)
    outcome = run_indexer("scip-python", repo, Path("rel.scip"), 60, bin_dir=Path("bin"))
    assert outcome.ok, outcome.message
    assert (tmp_path / "rel.scip").is_file()
    assert files_in(repo) == ["main.py", "tsconfig.json"]
