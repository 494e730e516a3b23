"""A huge garbage line on the agent server's stdin (issue 15): it passes ``MAX_LINE_BYTES``, is
answered with a parse error as soon as it does, is dropped without being buffered or parsed,
and the server goes on serving. Before the bound, 20 MB took 21 s of the event loop (5 MB,
2.3 s: quadratic in the line's length)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio

from cli.serve.transport import LINE_TOO_LONG, MAX_LINE_BYTES, LineTooLong, PipeLines
from engine.index.home import Home
from tests.cli.serve.test_server import RawServer

GARBAGE_BYTES = 20 << 20


def test_an_overlong_line_is_one_item_and_the_next_line_is_whole() -> None:
    read_fd, write_fd = os.pipe()
    found: list[str | LineTooLong] = []

    async def main() -> float:
        reader = os.fdopen(read_fd, "rb")
        started = time.perf_counter()
        async with anyio.create_task_group() as group:

            async def read() -> None:
                found.extend([line async for line in PipeLines(reader)])

            group.start_soon(read)
            with os.fdopen(write_fd, "wb") as writer:
                await anyio.to_thread.run_sync(
                    writer.write,
                    b"x" * GARBAGE_BYTES + b'\n{"next": 1}\n' + b"y" * (MAX_LINE_BYTES + 1),
                )
        reader.close()
        return time.perf_counter() - started

    seconds = anyio.run(main)
    # The last line, one byte over the bound, ends without a newline: the input ends.
    assert found == [LINE_TOO_LONG, '{"next": 1}\n', LINE_TOO_LONG]
    assert seconds < 10, f"{seconds:.1f} s for a {GARBAGE_BYTES >> 20} MB line"


def test_the_server_answers_an_overlong_line_and_goes_on_serving(
    home: Home, indexed: Path, tmp_path: Path
) -> None:
    with (tmp_path / "server.log").open("w") as errlog:
        server = RawServer(home.root, errlog)
        try:
            server.handshake()
            server.send("{" + "garbage " * (GARBAGE_BYTES // 8))
            error = server.receive()
            assert (error["id"], error["error"]["code"]) == (None, -32700)
            assert "longer than 4 MiB" in error["error"]["message"]
            answer = server.search(7, "shout")
            assert answer["results"][0]["symbolName"].endswith("shout")
            assert server.close_stdin_and_wait() == (0, [])
        finally:
            if server.process.poll() is None:
                server.process.kill()
                server.process.wait()
