"""The stdio transport of the agent server: the SDK's, plus an answer to malformed lines.

The SDK's stdio transport drops a line that is not a JSON-RPC message after logging it at
debug level, so a client that sent a broken request would wait for an answer forever. Here
every line is checked first; a bad one gets a JSON-RPC error (``-32700`` parse error or
``-32600`` invalid request, with the request's id when it has a readable one) written
through the SDK's own writer, so replies never interleave. The SDK keeps everything else:
framing and shutdown at end of input.

``claim_stdio`` is called first thing, before any engine or model import: it keeps private
copies of the two pipes and points fd 1 at stderr and fd 0 at /dev/null, so nothing printed
by any library (or read by any child process) can touch the protocol stream.

When stdin and stdout are pipes or sockets (as an MCP client starts a server), they are read
and written non-blocking from the event loop itself. The SDK's default wraps them as files
whose every readline, write and flush is a trip to a worker thread and back: three of them
per request on top of the tool call's own, each a wake-up of another thread. A terminal or a
regular file keeps the SDK's threaded files (non-blocking mode would leak to whoever shares
a terminal, and files cannot be polled).
"""

from __future__ import annotations

import codecs
import logging
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from io import TextIOWrapper
from typing import Any, BinaryIO, cast

import anyio
import orjson
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    JSONRPC_VERSION,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

log = logging.getLogger(__name__)

MAX_LOGGED_CHARS = 200


def rejection(line: str) -> JSONRPCError | None:
    """The error to answer ``line`` with, or None when it is a well-formed message."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        pass
    else:
        return None
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return JSONRPCError(
            jsonrpc=JSONRPC_VERSION,
            id=None,
            error=ErrorData(code=PARSE_ERROR, message=f"Parse error: not valid JSON ({exc})"),
        )
    found = data.get("id") if isinstance(data, dict) else None
    request_id = found if isinstance(found, str | int) and not isinstance(found, bool) else None
    return JSONRPCError(
        jsonrpc=JSONRPC_VERSION,
        id=request_id,
        error=ErrorData(
            code=INVALID_REQUEST,
            message='Invalid Request: expected one JSON-RPC 2.0 object per line, with "jsonrpc": '
            '"2.0" and a string "method" (and an "id" for a request)',
        ),
    )


class _CheckedLines:
    """The lines of stdin that are JSON-RPC messages; the others are answered with errors."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._replies: Any = None  # the SDK's write stream, once the transport is up

    def reply_to(self, write_stream: Any) -> None:
        self._replies = write_stream

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue  # a blank line is framing noise, not a message
            error = rejection(line)
            if error is None:
                yield line
                continue
            log.warning("answered a malformed message with an error: %.*r", MAX_LOGGED_CHARS, line)
            if self._replies is not None:
                await self._replies.send(SessionMessage(error))


@dataclass(frozen=True)
class StdioWire:
    """The protocol's own copies of the process's stdin and stdout."""

    stdin: BinaryIO
    stdout: BinaryIO


def claim_stdio() -> StdioWire:
    """Take stdin/stdout for the protocol; fd 0 then reads /dev/null and fd 1 writes stderr."""
    wire = StdioWire(os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb"))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire


READ_SIZE = 1 << 16


def pollable(stream: BinaryIO) -> bool:
    """Whether ``stream`` is a pipe or socket, which the event loop can wait on directly."""
    mode = os.fstat(stream.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class PipeLines:
    """The lines of a pipe, read from the event loop without a worker thread.

    Each yielded line keeps its newline (as a text file's would); undecodable bytes become
    U+FFFD; a last line without a newline is yielded at end of input.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._fd = stream.fileno()
        self._stream = stream  # keeps the descriptor open
        os.set_blocking(self._fd, False)

    async def __aiter__(self) -> AsyncIterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        while True:
            await anyio.wait_readable(self._fd)
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                continue  # woken without data: wait again
            pending += decoder.decode(data, final=not data)
            *lines, pending = pending.split("\n")
            for line in lines:
                yield line + "\n"
            if not data:
                if pending:
                    yield pending
                return


class PipeWriter:
    """Text written straight to a pipe from the event loop, waiting while the pipe is full."""

    def __init__(self, stream: BinaryIO) -> None:
        self._fd = stream.fileno()
        self._stream = stream
        os.set_blocking(self._fd, False)

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            data = data[written:]

    async def flush(self) -> None:
        """Nothing is buffered: ``write`` returns once the pipe holds all of it."""


@asynccontextmanager
async def checked_stdio(wire: StdioWire) -> AsyncIterator[tuple[Any, Any]]:
    """``stdio_server()`` over ``wire``, answering malformed lines instead of dropping them."""
    source: Any
    if pollable(wire.stdin):
        source = PipeLines(wire.stdin)
    else:
        source = anyio.wrap_file(TextIOWrapper(wire.stdin, encoding="utf-8", errors="replace"))
    stdout: Any
    if pollable(wire.stdout):
        stdout = PipeWriter(wire.stdout)
    else:
        stdout = anyio.wrap_file(TextIOWrapper(wire.stdout, encoding="utf-8"))
    lines = _CheckedLines(source)
    async with stdio_server(stdin=cast(Any, lines), stdout=stdout) as (read_stream, write_stream):
        lines.reply_to(write_stream)
        yield read_stream, write_stream
