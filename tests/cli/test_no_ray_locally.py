"""The local product never imports Ray: indexing, searching and local federation run without it.

Ray is an optional extra (engine[cluster]) that only engine/cluster imports; a local command
that imported it would cost seconds of start-up and break installs without the extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from click.testing import CliRunner
from tests.conftest import install_fake_registry
install_fake_registry()
from cli.main import main

def run(*args):
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, (args, result.output)

run("index", sys.argv[1], "--name", "a")
run("index", sys.argv[2], "--name", "b")
run("query", "a", "greet a person by name")
run("query", "a,b", "greet a person by name", "--json")
run("query", "--all", "greet", "--json")
run("status", "a", "--json")
run("defs", "a", "greet")
run("reindex", "a")
run("context", "a", "greet a person", "--budget", "2000")
loaded = [m for m in sys.modules if m == "ray" or m.startswith(("ray.", "engine.cluster"))]
print(sorted(loaded))
"""

GREETER = '''def greet(name):
    """Greet a person by name."""
    return "hi " + name
'''


def test_local_commands_and_local_federation_never_import_ray(tmp_path: Path) -> None:
    repos = []
    for name in ("a", "b"):
        root = tmp_path / name
        root.mkdir()
        (root / "greeter.py").write_text(GREETER + f"# {name}\n")
        repos.append(str(root))
    env = {"ENGINE_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *repos],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
