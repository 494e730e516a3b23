"""Progress lines on stderr for long work, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """A ``ProgressFn`` that redraws one status line: stage, done/total and rate."""

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
        self.stream.write(f"\r\033[K{stage:<10} {count}{rate}")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self._stage:
            self.stream.write("\n")
            self.stream.flush()
            self._stage = ""
