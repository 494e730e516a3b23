from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.serve_transport import rejection

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
PROJECT_ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 60  # fails a test that would otherwise hang; not a speed check


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "x"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
    ],
)
def test_well_formed_messages_pass(message: dict[str, object]) -> None:
    assert rejection(json.dumps(message)) is None


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        ("{not json", PARSE_ERROR, None),
        ("", PARSE_ERROR, None),
        ('{"jsonrpc": "2.0", "id": 5, "method": 3}', INVALID_REQUEST, 5),
        ('{"jsonrpc": "1.0", "id": "x", "method": "ping"}', INVALID_REQUEST, "x"),
        ('{"id": true, "method": "ping"}', INVALID_REQUEST, None),
        ("[1, 2]", INVALID_REQUEST, None),
        ('"ping"', INVALID_REQUEST, None),
    ],
)
def test_malformed_lines_get_an_error_with_the_request_id(
    line: str, code: int, request_id: object
) -> None:
    error = rejection(line)
    assert error is not None
    assert error.error.code == code
    assert error.id == request_id
    assert error.error.message


def test_claimed_stdout_carries_only_the_protocol() -> None:
    code = (
        "from cli.serve_transport import claim_stdio\n"
        "wire = claim_stdio()\n"
        "print('noise from a library', flush=True)\n"
        "import os; os.write(1, b'more noise\\n')\n"
        "wire.stdout.write(wire.stdin.readline().upper()); wire.stdout.flush()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=b"message\n",
        capture_output=True,
        check=True,
        cwd=PROJECT_ROOT,
        timeout=HANG_GUARD_S,
    )
    assert done.stdout == b"MESSAGE\n"
    assert done.stderr == b"noise from a library\nmore noise\n"
