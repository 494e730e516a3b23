"""Click's own usage errors under ``--json``, and a stdout that refuses writes (issue 15).

A script that asked for ``--json`` gets ``{"error": ...}`` and exit code 1 for a bad option
value, as for every other mistake, not click's usage text and 2; ``engine repos > /dev/full``
is one line on stderr and exit code 1, not a traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from engine.index.home import Home
from tests.reliability.conftest import cli

DEV_FULL = Path("/dev/full")
PROJECT_ROOT = Path(__file__).resolve().parents[2]
ENGINE = (
    "from tests.conftest import install_fake_registry; install_fake_registry(); "
    "from cli.main import main; main()"
)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("query", "toy", "greet", "--limit", "0"), "--limit"),
        (("query", "toy", "greet", "--limit", "-1"), "--limit"),
        (("query", "toy", "greet", "--max-per-file", "0"), "--max-per-file"),
        (("context", "toy", "greet", "--budget", "0"), "--budget"),
        (("defs", "toy", "greet", "--limit", "0"), "--limit"),
        (("query", "toy", "greet", "--no-such-option"), "--no-such-option"),
    ],
)
def test_usage_errors_under_json_are_json_errors(
    home: Home, args: tuple[str, ...], option: str
) -> None:
    code, data = cli(*args)
    assert code == 1
    assert set(data) == {"error"}
    assert option in data["error"] and "--help" in data["error"]


def test_usage_errors_without_json_keep_clicks_usage_text(home: Home) -> None:
    result = CliRunner().invoke(main, ["query", "toy", "greet", "--limit", "0"])
    assert result.exit_code == 2
    assert "Usage: " in result.output


def test_json_after_a_double_dash_is_a_query_word(home: Home) -> None:
    result = CliRunner().invoke(main, ["query", "toy", "--limit", "0", "--", "--json"])
    assert result.exit_code == 2
    assert "Usage: " in result.output


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args", [("repos",), ("repos", "--json"), ("query", "toy", "greet", "--json")]
)
def test_stdout_at_dev_full_is_a_clear_error(home: Home, args: tuple[str, ...]) -> None:
    with DEV_FULL.open("wb") as full:
        done = subprocess.run(
            [sys.executable, "-c", ENGINE, *args],
            cwd=PROJECT_ROOT,
            env={"ENGINE_HOME": str(home.root), "PATH": "/usr/bin:/bin", "HOME": str(home.root)},
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert err.strip().splitlines() == ["error: cannot write the output: No space left on device"]
