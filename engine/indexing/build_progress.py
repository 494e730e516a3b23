"""What a running build is doing, in a file ``engine status`` reads.

A build writes a generation that is not published until it is done (the fast phase of a
first index: walking, chunking, lexical, symbol, the first vector tier; then the slow phase,
embedding), so the index itself cannot say how far it got. Each phase's progress calls are
copied into ``progress.json`` in that generation's folder, at most once a second, and the
file is removed when the generation is published; status looks for it in the generations
newer than the published one (in any, before the first is published). A run killed outright
leaves its file behind until the next run collects the generation, so the file says when it
was written.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import IndexCorrupt
from engine.index.generations import generation_number
from engine.signal import ProgressFn

PROGRESS_FILE = "progress.json"
_EVERY_S = 1.0


class ProgressFile:
    """A ``ProgressFn`` that forwards each call and keeps the latest in ``progress.json``."""

    def __init__(self, generation: Path, forward: ProgressFn) -> None:
        self._path = generation / PROGRESS_FILE
        self._forward = forward
        self._written_at = 0.0
        self._stage = ""
        self._stage_started = time.monotonic()

    def __call__(self, stage: str, done: int, total: int) -> None:
        self._forward(stage, done, total)
        now = time.monotonic()
        if stage != self._stage:
            self._stage, self._stage_started = stage, now
        elif now - self._written_at < _EVERY_S and done != total:
            return
        self._written_at = now
        record = {
            "stage": stage,
            "done": done,
            "total": total,
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            # How long this stage has run, so a reader can tell its rate and an ETA.
            "stageSeconds": round(now - self._stage_started, 1),
        }
        # Progress is advice: a failed write must not fail the build.
        with contextlib.suppress(OSError):
            tmp = self._path.with_name(f".{PROGRESS_FILE}.{os.getpid()}")
            tmp.write_text(json.dumps(record), encoding="utf-8")
            tmp.replace(self._path)


def read_progress(repo_dir: Path, published: Path | None) -> dict[str, Any] | None:
    """The progress of a build newer than the ``published`` generation (any build when none
    is published yet), if one is running."""
    newest: tuple[int, Path] | None = None
    for path in repo_dir.glob(f"gen-*/{PROGRESS_FILE}"):
        try:
            number = generation_number(path.parent.name)
        except IndexCorrupt:
            continue
        floor = generation_number(published.name) if published is not None else 0
        if number > floor and (newest is None or number > newest[0]):
            newest = (number, path)
    if newest is None:
        return None
    try:
        data = json.loads(newest[1].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
