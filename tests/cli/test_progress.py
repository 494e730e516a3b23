from __future__ import annotations

import io

import pytest

from cli.progress import Progress, eta


def test_eta_projects_the_stage_rate_so_far() -> None:
    assert eta(100, 1000, 10.0) == "1m30s"
    assert eta(500, 1000, 40.0) == "40s"
    assert eta(1, 1000, 5.0) == "1h23m"


@pytest.mark.parametrize(
    ("done", "total", "elapsed"), [(0, 10, 5.0), (10, 10, 5.0), (5, 0, 5.0), (5, 10, 1.0)]
)
def test_no_eta_when_it_cannot_be_told(done: int, total: int, elapsed: float) -> None:
    assert eta(done, total, elapsed) == ""


def test_the_line_shows_count_rate_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 0.0, 10.0])  # made, first call, second call
    monkeypatch.setattr("cli.progress.time.perf_counter", lambda: next(clock, 10.0))
    out = io.StringIO()
    shown = Progress(out, enabled=True)
    shown("embedding", 0, 4000)
    shown("embedding", 1000, 4000)
    assert out.getvalue().endswith("embedding  1,000/4,000  100/s  ETA 30s")
