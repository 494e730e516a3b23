from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from cli.serve.reindex import ReindexJobs

HANG_GUARD_S = 60.0  # fails a test that would otherwise hang; not a speed check


def fake_child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


# A child that waits for a file to appear, then prints a summary: lets a test hold a job open.
GATED = """
import json, pathlib, sys, time
gate = pathlib.Path(sys.argv[1])
while not gate.exists():
    time.sleep(0.01)
print(json.dumps({"repo": "toy", "status": "done", "generation": "gen-000002"}))
"""


def wait_for_state(jobs: ReindexJobs, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < deadline:
        state = jobs.state("toy")
        if state is not None and state["status"] == status:
            return state
        time.sleep(0.01)
    raise AssertionError(f"the job never reached {status}")


def test_one_job_per_repository_and_its_outcome_is_kept(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    jobs = ReindexJobs(tmp_path, command=[*fake_child(GATED), str(gate)])
    assert jobs.state("toy") is None

    first = jobs.run("toy", wait_s=0)
    assert first["status"] == "running"
    assert "still reindexing toy" in first["message"]
    second = jobs.run("toy", wait_s=0)
    assert second["status"] == "running"
    assert "already being reindexed" in second["message"]
    assert wait_for_state(jobs, "running")["startedSecondsAgo"] >= 0

    gate.touch()
    done = wait_for_state(jobs, "done")
    assert done["generation"] == "gen-000002"
    jobs.close()


def test_success_is_announced_before_the_caller_gets_the_summary(tmp_path: Path) -> None:
    done: list[str] = []
    summary = '{"repo": "toy", "status": "done", "generation": "gen-000009"}'
    jobs = ReindexJobs(tmp_path, command=fake_child(f"print({summary!r})"), on_done=done.append)
    outcome = jobs.run("toy", wait_s=HANG_GUARD_S)
    assert outcome["generation"] == "gen-000009"
    assert done == ["toy"]


def test_a_child_that_fails_without_a_summary_is_reported(tmp_path: Path) -> None:
    done: list[str] = []
    jobs = ReindexJobs(
        tmp_path,
        command=fake_child("import sys; print('garbage'); sys.exit(3)"),
        on_done=done.append,
    )
    outcome = jobs.run("toy", wait_s=HANG_GUARD_S)
    assert "exit code 3" in outcome["error"]
    assert done == []
    assert wait_for_state(jobs, "failed")["error"] == outcome["error"]


def test_close_stops_a_running_child(tmp_path: Path) -> None:
    gate = tmp_path / "never"
    jobs = ReindexJobs(tmp_path, command=[*fake_child(GATED), str(gate)])
    assert jobs.run("toy", wait_s=0)["status"] == "running"
    jobs.close(grace_s=0.5)
    state = wait_for_state(jobs, "failed")
    assert "exit code" in state["error"]
    assert "shutting down" in jobs.run("toy", wait_s=0)["error"]


def test_the_child_reports_an_unknown_repository(tmp_path: Path) -> None:
    jobs = ReindexJobs(tmp_path / "home")
    outcome = jobs.run("ghost", wait_s=HANG_GUARD_S)
    assert outcome == {"error": "no index for ghost — run engine index PATH --name ghost"}
