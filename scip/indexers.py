"""Run the real SCIP indexers (scip-python, scip-typescript) under a time limit.

An indexer that is missing, fails, hangs or writes nothing is not an exception: the outcome
says what happened, and the caller falls back to the engine's own tree-sitter symbols.
Pitfalls handled here (measured, see STACK.md §6):

- scip-python runs ``pip list`` and, without pip on PATH, exits 1 leaving a 0-byte index; the
  current interpreter's bin directory goes first on PATH. On big repositories it can run for
  many minutes and leave a tiny index behind, so a time limit and an output check are needed.
- scip-typescript needs a ``tsconfig.json``. Its ``--infer-tsconfig`` writes one into the
  repository, which must stay untouched, so a repository without one is skipped.
- Both are node programs that start helpers. Each run gets its own process group
  (``start_new_session``) and the whole group is killed when the run ends, so no node process
  outlives a timeout.
- The index is written to a temporary file beside ``output`` and renamed only when it reads
  back as a non-empty SCIP index, so ``output`` never holds a failed run's leftovers.

Which files an index really covers is the list of its documents (``ScipIndex.paths``):
scip-typescript indexes what the tsconfig includes, not every ``.ts`` file.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Literal

from scip.errors import ScipError
from scip.reader import read_index

IndexerName = Literal["scip-python", "scip-typescript"]
OutcomeStatus = Literal["ok", "failed", "timeout", "skipped"]

INDEXERS: tuple[IndexerName, ...] = ("scip-python", "scip-typescript")
BIN_DIR_ENV = "ENGINE_SCIP_BIN_DIR"
# File extensions each indexer understands. scip-typescript reads .js/.jsx only when the
# tsconfig sets allowJs, so they are not claimed here.
EXTENSIONS: Mapping[IndexerName, frozenset[str]] = {
    "scip-python": frozenset({".py", ".pyi"}),
    "scip-typescript": frozenset({".ts", ".tsx", ".mts", ".cts"}),
}

_POLL_S = 0.05  # how often a running indexer is checked for having exited
_LOG_TAIL_BYTES = 4000
_LOG_TAIL_LINES = 12
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True, slots=True)
class AvailableIndexer:
    name: IndexerName
    executable: Path


@dataclass(frozen=True, slots=True)
class IndexerOutcome:
    indexer: IndexerName
    status: OutcomeStatus
    output: Path | None  # the index file; None unless status is "ok"
    message: str  # what happened, with the fix when there is one
    seconds: float  # wall-clock time of the run; 0.0 when skipped before starting
    documents: int = 0  # documents in the index when ok

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def indexers_for(paths: Iterable[str]) -> list[IndexerName]:
    """The indexers worth running for a repository holding these (relative) file paths."""
    suffixes = {PurePosixPath(path).suffix for path in paths}
    return [name for name in INDEXERS if EXTENSIONS[name] & suffixes]


def find_indexer(name: IndexerName, bin_dir: Path | None = None) -> Path | None:
    """Look in ``bin_dir`` (default ``$ENGINE_SCIP_BIN_DIR``, e.g. node_modules/.bin), then PATH."""
    folder = bin_dir if bin_dir is not None else os.environ.get(BIN_DIR_ENV)
    found = shutil.which(name, path=str(folder)) if folder else None
    found = found or shutil.which(name)
    # Absolute, because the indexer runs with the repository as its working directory.
    return Path(found).absolute() if found else None


def available_indexers(bin_dir: Path | None = None) -> list[AvailableIndexer]:
    found = ((name, find_indexer(name, bin_dir)) for name in INDEXERS)
    return [AvailableIndexer(name, path) for name, path in found if path is not None]


def run_indexer(
    kind: IndexerName,
    repo_root: Path,
    output: Path,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    *,
    bin_dir: Path | None = None,
    project_name: str | None = None,
    project_version: str = "0",
) -> IndexerOutcome:
    """Index ``repo_root`` into ``output`` within ``timeout_s`` seconds.

    ``env`` adds to (or overrides) this process's environment. ``project_name`` (default: the
    folder's name) and ``project_version`` go into scip-python's symbols; scip-typescript
    takes both from package.json. The repository is never written to.
    """
    if timeout_s <= 0:
        raise ValueError(f"timeout_s must be positive, not {timeout_s}")

    def skipped(message: str) -> IndexerOutcome:
        return IndexerOutcome(kind, "skipped", None, message, 0.0)

    if not repo_root.is_dir():
        return skipped(f"{repo_root} is not a directory")
    executable = find_indexer(kind, bin_dir)
    if executable is None:
        return skipped(
            f"{kind} not found: install it (npm install @sourcegraph/{kind}) and put it on "
            f"PATH or set {BIN_DIR_ENV} to its folder"
        )
    environment = {**os.environ, **(env or {})}
    if kind == "scip-python":
        interpreter_bin = str(Path(sys.executable).parent)
        environment["PATH"] = os.pathsep.join([interpreter_bin, environment.get("PATH", "")])
        if not (
            shutil.which("pip", path=environment["PATH"])
            or shutil.which("pip3", path=environment["PATH"])
        ):
            return skipped("scip-python needs pip on PATH, and neither pip nor pip3 is there")
    elif not (repo_root / "tsconfig.json").is_file():
        return skipped("no tsconfig.json: scip-typescript needs one at the repository root")

    output.parent.mkdir(parents=True, exist_ok=True)
    handle, partial_name = tempfile.mkstemp(prefix=f".{output.name}.", dir=output.parent)
    os.close(handle)
    partial = Path(partial_name).absolute()  # a relative --output would be read against --cwd
    root = repo_root.resolve()
    command = _command(kind, executable, root, partial, project_name or root.name, project_version)
    try:
        return _run(kind, command, root, environment, timeout_s, partial, output)
    finally:
        partial.unlink(missing_ok=True)


def _command(
    kind: IndexerName, executable: Path, root: Path, out: Path, name: str, version: str
) -> list[str]:
    if kind == "scip-python":
        return [
            str(executable),
            "index",
            "--cwd",
            str(root),
            "--project-name",
            name,
            "--project-version",
            version,
            "--output",
            str(out),
            "--quiet",
        ]
    return [str(executable), "index", "--cwd", str(root), "--output", str(out), "--no-progress-bar"]


def _run(
    kind: IndexerName,
    command: list[str],
    root: Path,
    environment: Mapping[str, str],
    timeout_s: float,
    partial: Path,
    output: Path,
) -> IndexerOutcome:
    started = time.monotonic()

    def outcome(status: OutcomeStatus, message: str, documents: int = 0) -> IndexerOutcome:
        final = output if status == "ok" else None
        return IndexerOutcome(kind, status, final, message, time.monotonic() - started, documents)

    # A file, not a pipe, collects the output: a helper left holding a pipe open would
    # block reading it, and nobody reads it while the indexer runs.
    with tempfile.TemporaryFile() as log:
        try:
            process = subprocess.Popen(
                command,
                cwd=root,
                env=dict(environment),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as err:
            return outcome("failed", f"could not start {command[0]}: {err}")
        finished = _wait_unreaped(process, timeout_s)
        # Kill the whole group while the leader is still unreaped, so its id (the group id)
        # cannot have been reused by an unrelated process.
        _kill_group(process)
        returncode = process.wait()
        tail = _log_tail(log)
    if not finished:
        return outcome("timeout", f"{kind} did not finish within {timeout_s:g} s and was stopped")
    if returncode != 0:
        return outcome("failed", f"{kind} exited with code {returncode}: {tail}")
    size = partial.stat().st_size if partial.exists() else 0
    if size == 0:
        return outcome("failed", f"{kind} wrote an empty index (0 bytes): {tail}")
    try:
        index = read_index(partial)
    except ScipError as err:
        return outcome("failed", f"{kind} wrote an unreadable index: {err}")
    if index.is_empty:
        return outcome("failed", f"{kind} indexed no documents: {tail}")
    partial.replace(output)
    count = len(index.paths)
    return outcome("ok", f"{kind} indexed {count} documents", count)


def _wait_unreaped(process: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for ``process`` to exit, leaving it unreaped (a zombie)."""
    if not hasattr(os, "waitid"):  # macOS before Python 3.13: wait, which reaps
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + timeout_s
    while True:
        if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(_POLL_S, remaining))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group is already empty
        os.killpg(process.pid, signal.SIGKILL)


def _log_tail(log: BinaryIO) -> str:
    size = log.seek(0, os.SEEK_END)
    log.seek(max(0, size - _LOG_TAIL_BYTES))
    text = _ANSI.sub("", log.read().decode("utf-8", errors="replace"))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-_LOG_TAIL_LINES:]) or "(no output)"
