"""Ray's token never reaches the engine's output: ``engine query --cluster`` against a Ray
started with token authentication prints neither the token nor a part of it.

The token is a made-up one handed to Ray through RAY_AUTH_TOKEN in a child process with its
own HOME (so no real token file is read or written)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.cluster.search_homes import shared_home

pytestmark = pytest.mark.slow

TOKEN = "0123456789abcdef" * 4  # 64 hex characters, like `ray get-auth-token --generate`

SCRIPT = """
import sys
from click.testing import CliRunner
from tests.conftest import install_fake_registry
install_fake_registry()
from cli.main import main

result = CliRunner().invoke(main, ["query", "--cluster", "local", "--cluster-store", sys.argv[1],
                                   "greeters,parsers", "greet", "--json", "--deadline-ms", "5000"])
print(result.output)
print("exit", result.exit_code)
"""


def test_query_cluster_never_prints_the_token(tmp_path: Path) -> None:
    home = shared_home(tmp_path, ["greeters", "parsers"])
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "user"),
        "ENGINE_HOME": str(home),
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": TOKEN,
    }
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(home)],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
        timeout=300,
        check=False,
    )
    assert "exit 0" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    assert '"answered": 2' in out.stdout
    for part in (TOKEN, TOKEN[:16]):
        assert part not in out.stdout and part not in out.stderr
