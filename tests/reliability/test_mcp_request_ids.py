"""MCP requests whose ``id`` is not a string or an integer (issue 15): each gets a JSON-RPC
Invalid Request error (id null), as the spec asks, and serving goes on. Before, the SDK took
them for notifications and the client waited for an answer forever."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.serve.transport import rejection
from engine.index.home import Home
from tests.cli.serve.test_server import RawServer

BAD_IDS = {"null": "null", "float": "1.5", "bool": "true", "list": "[1]", "object": '{"a": 1}'}


def _request(request_id: str) -> str:
    return '{"jsonrpc": "2.0", "id": ' + request_id + ', "method": "tools/list"}'


@pytest.mark.parametrize("kind", list(BAD_IDS))
def test_a_request_with_a_bad_id_is_rejected(kind: str) -> None:
    error = rejection(_request(BAD_IDS[kind]))
    assert error is not None
    assert (error.id, error.error.code) == (None, -32600)
    assert '"id" must be a string or an integer' in error.error.message


@pytest.mark.parametrize("request_id", ["7", '"seven"'])
def test_string_and_integer_ids_and_notifications_pass(request_id: str) -> None:
    assert rejection(_request(request_id)) is None
    assert rejection('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None


def test_the_server_answers_every_bad_id_and_goes_on_serving(
    home: Home, indexed: Path, tmp_path: Path
) -> None:
    with (tmp_path / "server.log").open("w") as errlog:
        server = RawServer(home.root, errlog)
        try:
            server.handshake()
            for request_id in BAD_IDS.values():
                server.send(_request(request_id))
                reply = server.receive()
                assert (reply["id"], reply["error"]["code"]) == (None, -32600)
            answer = server.search(8, "shout")
            assert answer["results"][0]["symbolName"].endswith("shout")
            assert server.close_stdin_and_wait() == (0, [])
        finally:
            if server.process.poll() is None:
                server.process.kill()
                server.process.wait()
