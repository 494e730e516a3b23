"""Progress lines on stderr for long work, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

MIN_ETA_S = 2.0  # a stage's rate is too noisy to project before this


def eta(done: int, total: int, elapsed_s: float) -> str:
    """The time the rest of a stage should take at its rate so far ("1h05m", "3m12s", "40s"),
    or "" when it cannot be told (no total, nothing done, done, or the stage just began)."""
    if not total or done <= 0 or done >= total or elapsed_s < MIN_ETA_S:
        return ""
    seconds = round((total - done) * elapsed_s / done)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """A ``ProgressFn`` that redraws one status line: stage, done/total, rate and ETA."""

    MIN_INTERVAL_S = 0.2

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._stage = ""
        self._stage_start = time.perf_counter()
        self._last_draw = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if stage != self._stage:
            if self._stage:
                self.stream.write("\n")
            self._stage, self._stage_start = stage, now
        elif now - self._last_draw < self.MIN_INTERVAL_S and done != total:
            return
        self._last_draw = now
        elapsed = max(now - self._stage_start, 1e-6)
        rate = f"  {done / elapsed:,.0f}/s" if done else ""
        count = f"{done:,}/{total:,}" if total else (f"{done:,}" if done else "")
        left = eta(done, total, elapsed)
        self.stream.write(f"\r\033[K{stage:<10} {count}{rate}{f'  ETA {left}' if left else ''}")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self._stage:
            self.stream.write("\n")
            self.stream.flush()
            self._stage = ""
