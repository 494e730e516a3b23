"""The stdio transport of the agent server: the SDK's, plus an answer to malformed lines.

The SDK's stdio transport drops a line that is not a JSON-RPC message after logging it at
debug level, so a client that sent a broken request would wait for an answer forever. Here
every line is checked first; a bad one gets a JSON-RPC error (``-32700`` parse error or
``-32600`` invalid request, with the request's id when it has a readable one) written
through the SDK's own writer, so replies never interleave. The SDK keeps everything else:
framing and shutdown at end of input. A line longer than ``MAX_LINE_BYTES`` is answered with
a parse error as soon as it passes the bound, and the rest of it is dropped unread into any
buffer: a runaway client cannot make the server hold (or re-scan) an unbounded line.

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

import logging
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from io import TextIOWrapper
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread
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
# The longest message line accepted. The largest real request (a search's arguments) is a few
# KiB; the bound is far above it and keeps one line from holding the loop (20 MB took 21 s).
MAX_LINE_BYTES = 4 << 20


@dataclass(frozen=True)
class LineTooLong:
    """In place of a line that passed ``MAX_LINE_BYTES``: it is answered, never parsed."""


LINE_TOO_LONG = LineTooLong()


def overlong_error() -> JSONRPCError:
    return JSONRPCError(
        jsonrpc=JSONRPC_VERSION,
        id=None,
        error=ErrorData(
            code=PARSE_ERROR,
            message=f"Parse error: a message line longer than {MAX_LINE_BYTES >> 20} MiB was "
            "dropped; send one JSON-RPC message per line",
        ),
    )


def rejection(line: str) -> JSONRPCError | None:
    """The error to answer ``line`` with, or None when it is a well-formed message."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        pass
    else:
        return None if _id_is_valid(line) else _invalid_id()
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


def _id_is_valid(line: str) -> bool:
    """Whether a request's ``id`` is a string or an integer. The SDK's models take a request
    whose id is null, a float, a bool, a list or an object for a notification (extra fields
    are allowed) and never answer it; JSON-RPC wants an Invalid Request error for it."""
    data = orjson.loads(line)
    if not isinstance(data, dict) or "method" not in data or "id" not in data:
        return True
    found = data["id"]
    return isinstance(found, str | int) and not isinstance(found, bool)


def _invalid_id() -> JSONRPCError:
    return JSONRPCError(
        jsonrpc=JSONRPC_VERSION,
        id=None,
        error=ErrorData(
            code=INVALID_REQUEST,
            message='Invalid Request: a request\'s "id" must be a string or an integer '
            "(leave it out for a notification)",
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
            if isinstance(line, LineTooLong):
                error = overlong_error()
                log.warning("answered a line longer than %d bytes with an error", MAX_LINE_BYTES)
            elif not line.strip():
                continue  # a blank line is framing noise, not a message
            elif (found := rejection(line)) is None:
                yield line
                continue
            else:
                error = found
                log.warning("answered a malformed message: %.*r", MAX_LOGGED_CHARS, line)
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
    U+FFFD; a last line without a newline is yielded at end of input; a line that passes
    ``MAX_LINE_BYTES`` is ``LINE_TOO_LONG``, once, and its bytes up to its newline are dropped.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._fd = stream.fileno()
        self._stream = stream  # keeps the descriptor open
        os.set_blocking(self._fd, False)

    async def __aiter__(self) -> AsyncIterator[str | LineTooLong]:
        pending = bytearray()  # the line so far; split as bytes, since b"\n" never occurs
        dropping = False  # inside an overlong line, until its newline
        while True:
            await anyio.wait_readable(self._fd)
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                continue  # woken without data: wait again
            start = 0
            while start < len(data):
                end = data.find(b"\n", start)
                stop = len(data) if end == -1 else end + 1
                if dropping:
                    dropping = end == -1
                else:
                    pending += data[start:stop]
                    if len(pending) > MAX_LINE_BYTES:
                        pending.clear()
                        dropping = end == -1
                        yield LINE_TOO_LONG
                    elif end != -1:
                        yield pending.decode("utf-8", errors="replace")
                        pending.clear()
                start = stop
            if not data:
                if pending:
                    yield pending.decode("utf-8", errors="replace")
                return


class FileLines:
    """The lines of a terminal or a regular file, read in a worker thread with the same bound
    and the same items as ``PipeLines``."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[str | LineTooLong]:
        while line := await anyio.to_thread.run_sync(self._stream.readline, MAX_LINE_BYTES + 1):
            if len(line) <= MAX_LINE_BYTES:
                yield line.decode("utf-8", errors="replace")
                continue
            yield LINE_TOO_LONG
            while not line.endswith(b"\n"):  # drop the rest of it, a read at a time
                line = await anyio.to_thread.run_sync(self._stream.readline, READ_SIZE)
                if not line:
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
    source = PipeLines(wire.stdin) if pollable(wire.stdin) else FileLines(wire.stdin)
    stdout: Any
    if pollable(wire.stdout):
        stdout = PipeWriter(wire.stdout)
    else:
        stdout = anyio.wrap_file(TextIOWrapper(wire.stdout, encoding="utf-8"))
    lines = _CheckedLines(source)
    async with stdio_server(stdin=cast(Any, lines), stdout=stdout) as (read_stream, write_stream):
        lines.reply_to(write_stream)
        yield read_stream, write_stream
