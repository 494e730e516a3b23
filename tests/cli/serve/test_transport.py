from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

import anyio
import pytest

from cli.serve.transport import LineTooLong, PipeLines, PipeWriter, pollable, rejection

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
PROJECT_ROOT = Path(__file__).resolve().parents[3]
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
        "from cli.serve.transport import claim_stdio\n"
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


def _pipe() -> tuple[BinaryIO, BinaryIO]:
    read_fd, write_fd = os.pipe()
    return os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb")


async def _lines(reader: BinaryIO) -> list[str | LineTooLong]:
    return [line async for line in PipeLines(reader)]


def test_pipe_lines_split_and_decode_across_reads() -> None:
    reader, writer = _pipe()
    snowman = "☃".encode()

    async def main() -> list[str | LineTooLong]:
        async with anyio.create_task_group() as group:
            found: list[str | LineTooLong] = []

            async def read() -> None:
                found.extend(await _lines(reader))

            group.start_soon(read)
            # A line arrives in pieces, one cut inside a multi-byte character.
            for piece in (b'{"a": "x', snowman[:1], snowman[1:] + b'"}\n{"b"', b": 2}\n\nlast"):
                writer.write(piece)
                writer.flush()
                await anyio.sleep(0.01)
            writer.close()
        return found

    assert anyio.run(main) == ['{"a": "x☃"}\n', '{"b": 2}\n', "\n", "last"]
    reader.close()


def test_pipe_lines_replace_undecodable_bytes() -> None:
    reader, writer = _pipe()
    writer.write(b"caf\xe9\n")
    writer.close()
    assert anyio.run(_lines, reader) == ["caf\ufffd\n"]
    reader.close()


def test_pipe_writer_waits_while_the_pipe_is_full() -> None:
    reader, writer = _pipe()
    text = "x" * 300_000 + "\n"  # several times a pipe's buffer
    received = bytearray()

    async def main() -> None:
        async def drain() -> None:
            async for line in PipeLines(reader):
                assert isinstance(line, str)
                received.extend(line.encode())

        async with anyio.create_task_group() as group:
            group.start_soon(drain)
            out = PipeWriter(writer)
            await out.write(text)
            await out.write("ok\n")
            await out.flush()
            writer.close()

    anyio.run(main)
    assert received == (text + "ok\n").encode()
    reader.close()


def test_only_pipes_and_sockets_are_polled(tmp_path: Path) -> None:
    reader, writer = _pipe()
    assert pollable(reader) and pollable(writer)
    with (tmp_path / "file").open("wb") as regular:
        assert not pollable(regular)
    reader.close()
    writer.close()
