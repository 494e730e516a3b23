"""Reindex jobs for the agent server: one child process per repository, watched by a thread.

The update runs in a child process rather than a thread so that chunking and embedding never
hold the server's GIL (searches stay fast) and the indexer's memory goes back to the system
when it is done (the server's stays flat). The server keeps answering from the published
generation meanwhile and switches when the child publishes a new one.

The child watches its stdin, a pipe only the server holds: when the server exits, dies or
shuts the job down, the pipe closes and the child interrupts itself, so the indexer removes
its unpublished generation and no orphan keeps running.

Run as ``python -m cli.serve.reindex SLUG`` (or ``--root PATH SLUG`` to index a new folder):
prints progress lines ``{"progress": {"stage", "done", "total"}}`` while it works, then one
JSON object on stdout, the summary of the update or ``{"error": ...}``.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

log = logging.getLogger(__name__)

MAX_PROBLEMS = 20  # per-file problems listed in a summary; the count is always complete
PROGRESS_EVERY_S = 0.5  # the child reports progress at most this often
STOP_GRACE_S = 1.5  # how long a child gets to clean up before it is killed


@dataclass(eq=False)
class Job:
    slug: str
    process: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)
    done: threading.Event = field(default_factory=threading.Event)
    outcome: dict[str, Any] = field(default_factory=dict)  # set before ``done``
    finished: float = 0.0
    progress: dict[str, Any] = field(default_factory=dict)  # the child's last progress line
    listeners: list[ProgressListener] = field(default_factory=list)

    def age_s(self) -> float:
        return round(time.monotonic() - self.started, 1)


ProgressListener = Callable[[dict[str, Any]], None]

CHILD_COMMAND = (sys.executable, "-m", "cli.serve.reindex")  # the slug is appended


def _child_env(home: Path) -> dict[str, str]:
    # The project root on the path, so the child imports this same code even when the
    # server was started from a checkout that is not installed.
    root = str(Path(__file__).resolve().parents[2])
    paths = [root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "ENGINE_HOME": str(home), "PYTHONPATH": os.pathsep.join(paths)}


class ReindexJobs:
    """At most one reindex child per repository; the outcome of the last one is kept."""

    def __init__(
        self,
        home: Path,
        *,
        command: Sequence[str] = CHILD_COMMAND,
        on_done: Callable[[str], None] | None = None,
    ) -> None:
        self.home = home
        self._command = list(command)
        self._on_done = on_done  # called with the slug after a successful reindex
        self._lock = threading.Lock()
        self._running: dict[str, Job] = {}
        self._last: dict[str, Job] = {}
        self._closed = False

    def run(
        self,
        slug: str,
        *,
        wait_s: float,
        root: Path | None = None,
        on_progress: ProgressListener | None = None,
    ) -> dict[str, Any]:
        """Start reindexing ``slug`` (with ``root``: indexing that folder as ``slug`` for the
        first time) and wait up to ``wait_s`` seconds for the summary; ``on_progress`` gets
        the child's progress lines meanwhile."""
        with self._lock:
            if self._closed:
                return {"error": "the server is shutting down — no new reindex was started"}
            job = self._running.get(slug)
            if job is not None:
                return {
                    "repo": slug,
                    "status": "running",
                    "message": (
                        f"{slug} is already being reindexed (started {job.age_s():.0f} s ago); "
                        "searches keep using the previous index until the new one is "
                        f"published — call indexStatus('{slug}') to see when it is done"
                    ),
                }
            job = self._start(slug, root)
            if on_progress is not None:
                job.listeners.append(on_progress)
        finished = job.done.wait(wait_s)
        if on_progress is not None:
            with self._lock:
                if on_progress in job.listeners:
                    job.listeners.remove(on_progress)
        if not finished:
            return {
                "repo": slug,
                "status": "running",
                "message": (
                    f"still reindexing {slug} after {wait_s:.0f} s; searches keep using the "
                    "previous index until the new one is published — call "
                    f"indexStatus('{slug}') later to see when it is done"
                ),
            }
        return job.outcome

    def wait(self, slug: str, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the running reindex of ``slug``; True once none runs."""
        with self._lock:
            job = self._running.get(slug)
        return job is None or job.done.wait(timeout_s)

    def state(self, slug: str) -> dict[str, Any] | None:
        """The running job, or the outcome of the last one, for ``indexStatus``."""
        with self._lock:
            running = self._running.get(slug)
            if running is not None:
                state: dict[str, Any] = {
                    "status": "running",
                    "startedSecondsAgo": running.age_s(),
                }
                if running.progress:
                    state["progress"] = dict(running.progress)
                return state
            last = self._last.get(slug)
        if last is None:
            return None
        ago = round(time.monotonic() - last.finished, 1)
        if "error" in last.outcome:
            return {"status": "failed", "error": last.outcome["error"], "finishedSecondsAgo": ago}
        return {
            "status": "done",
            "generation": last.outcome.get("generation"),
            "seconds": last.outcome.get("seconds"),
            "finishedSecondsAgo": ago,
        }

    def _start(self, slug: str, root: Path | None = None) -> Job:
        """Spawn the child (caller holds the lock)."""
        first = ["--root", str(root)] if root is not None else []
        process = subprocess.Popen(
            [*self._command, *first, slug],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # the child's warnings join the server's log
            env=_child_env(self.home),
        )
        job = Job(slug, process)
        self._running[slug] = job
        log.info("reindex of %s started (pid %d)", slug, process.pid)
        threading.Thread(
            target=self._watch, args=(job,), name=f"reindex-{slug}", daemon=True
        ).start()
        return job

    def _watch(self, job: Job) -> None:
        stdout: IO[bytes] | None = job.process.stdout
        output = b""
        if stdout is not None:
            with stdout:
                for line in stdout:
                    if not line.startswith(b'{"progress"'):
                        output += line
                        continue
                    try:
                        progress = orjson.loads(line)["progress"]
                    except (orjson.JSONDecodeError, KeyError, TypeError):
                        continue
                    with self._lock:
                        job.progress = progress
                        listeners = list(job.listeners)
                    for listener in listeners:
                        try:
                            listener(progress)
                        except Exception:  # a client gone away must not stop the job
                            log.debug("progress listener failed", exc_info=True)
        code = job.process.wait()
        if job.process.stdin is not None:
            job.process.stdin.close()
        try:
            outcome = orjson.loads(output)
            if not isinstance(outcome, dict):
                raise TypeError(type(outcome).__name__)
        except (orjson.JSONDecodeError, TypeError):
            outcome = {
                "error": f"the reindex of {job.slug} failed (exit code {code}) — the server's "
                "log (stderr) has the details; the previous index is still served"
            }
        if "error" not in outcome:
            outcome["seconds"] = round(time.monotonic() - job.started, 2)
            if self._on_done is not None:
                try:
                    self._on_done(job.slug)  # before ``done``: the caller then finds it warm
                except Exception:
                    log.exception("after the reindex of %s", job.slug)
        log.info("reindex of %s finished: %s", job.slug, outcome.get("error", "done"))
        with self._lock:
            job.outcome, job.finished = outcome, time.monotonic()
            self._running.pop(job.slug, None)
            self._last[job.slug] = job
        job.done.set()

    def close(self, grace_s: float = STOP_GRACE_S) -> None:
        """Stop every running child: close its stdin, wait ``grace_s``, then kill it."""
        with self._lock:
            self._closed = True
            jobs = list(self._running.values())
        for job in jobs:
            log.info("stopping the reindex of %s (pid %d)", job.slug, job.process.pid)
            if job.process.stdin is not None:
                job.process.stdin.close()  # the child interrupts itself at EOF
        deadline = time.monotonic() + grace_s
        for job in jobs:
            try:
                job.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                job.process.kill()
                job.process.wait()


# --- the child ---------------------------------------------------------------------------


def _interrupt_when_parent_goes(fd: int) -> None:
    # os.read, not sys.stdin: a daemon thread blocked inside a buffered reader makes the
    # interpreter abort at exit ("could not acquire lock for <stdin>").
    while os.read(fd, 4096):
        pass  # EOF: the server closed the pipe or died
    os.kill(os.getpid(), signal.SIGINT)


def child_main(argv: Sequence[str] | None = None) -> None:
    """Reindex one repository and print its summary as one JSON object."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Whatever an imported library prints must not corrupt the one line the server reads:
    # keep the real stdout for the summary and point fd 1 at stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    code = 1
    try:
        threading.Thread(target=_interrupt_when_parent_goes, args=(0,), daemon=True).start()
        result = _reindex(args, _progress_lines(out))
        code = 0 if "error" not in result else 1
    except KeyboardInterrupt:
        result = {"error": "the reindex was interrupted — the previous index is intact"}
    out.write(orjson.dumps(result))
    out.close()
    sys.exit(code)


def _progress_lines(out: IO[bytes]) -> Callable[[str, int, int], None]:
    """An indexer progress callback that writes a progress line at most every so often."""
    last = [0.0]

    def report(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY_S and done != total:
            return
        last[0] = now
        line = {"progress": {"stage": stage, "done": done, "total": total}}
        out.write(orjson.dumps(line) + b"\n")
        out.flush()

    return report


def _reindex(args: Sequence[str], progress: Callable[[str, int, int], None]) -> dict[str, Any]:
    from cli.output import report_json
    from engine.errors import EngineError, IndexBusy
    from engine.index.home import Home, engine_home, validate_slug
    from engine.indexing.indexer import Indexer
    from engine.signal import IndexOptions
    from signals.registry import plugins

    args = list(args)
    root: Path | None = None
    if len(args) == 3 and args[0] == "--root":
        root = Path(args[1])
        args = args[2:]
    if len(args) != 1:
        return {"error": "usage: python -m cli.serve.reindex [--root PATH] SLUG"}
    home = Home(engine_home())
    try:
        slug = validate_slug(args[0])
        indexer = Indexer(home, plugins(), IndexOptions(home=home.root), progress=progress)
        report = indexer.index(slug, root) if root is not None else indexer.reindex(slug)
    except IndexBusy:
        # Not a failure: another process (another server's watcher, engine watch, a CLI run)
        # is bringing the same index up to date. Like a second call while one runs here.
        return {
            "repo": args[-1],
            "status": "running",
            "message": f"{args[-1]} is being indexed by another process; searches use the "
            "previous index meanwhile — call indexStatus or reindex again once it is done",
        }
    except EngineError as exc:
        return {"error": str(exc)}
    return {**report_json(report, max_problems=MAX_PROBLEMS), "status": "done"}


if __name__ == "__main__":
    child_main()
