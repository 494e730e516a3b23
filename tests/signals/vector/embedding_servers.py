"""Fake embedding APIs on the loopback address: OpenAI's ``/v1/embeddings`` and Voyage's.

A ``ThreadingHTTPServer`` on 127.0.0.1 and a free port, so the remote embedder's real HTTP
path runs and nothing reaches the network. Vectors come from ``HashingEmbedder`` (texts that
share words get similar vectors, so searches find things). ``script`` holds answers to give
before the normal ones ((status, headers)); ``fail_with`` fails every request. Error bodies
echo the request's Authorization header, as careless APIs do, so tests can check that the
key never reaches a message.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from signals.vector.embedder import HashingEmbedder


@dataclass
class Seen:
    path: str
    body: dict[str, Any]
    authorization: str


@dataclass
class EmbeddingServer:
    provider: str  # "openai" | "voyage"
    dim: int = 16
    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    fail_with: int | None = None
    seen: list[Seen] = field(default_factory=list)
    port: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def texts(self, input_type: str | None = None) -> list[str]:
        """Every text embedded so far (of one input_type, for Voyage), probes included."""
        return [
            text
            for s in self.seen
            if input_type is None or s.body.get("input_type") == input_type
            for text in s.body.get("input", [])
        ]

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        authorization = handler.headers.get("Authorization", "")
        with self.lock:
            self.seen.append(Seen(handler.path, body, authorization))
            scripted = self.script.pop(0) if self.script else None
            dim = self.dim
        if scripted is None and self.fail_with is not None:
            scripted = (self.fail_with, {})
        if handler.path != "/v1/embeddings":
            scripted = (404, {})
        if scripted is not None:
            status, headers = scripted
            echo = json.dumps({"error": f"failed; you sent Authorization: {authorization}"})
            self._send(handler, status, echo.encode(), headers)
            return
        texts = body["input"]
        # Models that can shorten their vectors honour the size asked for.
        dim = int(body.get("dimensions") or body.get("output_dimension") or dim)
        vectors = HashingEmbedder(dim).embed_documents(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in vectors[i]]}
            for i in reversed(range(len(texts)))  # out of order: clients must sort by index
        ]
        answer = {"object": "list", "data": data, "model": body.get("model")}
        self._send(handler, 200, json.dumps(answer).encode(), {})

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, status: int, payload: bytes, headers: dict[str, str]
    ) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)


@contextmanager
def running(server: EmbeddingServer) -> Iterator[EmbeddingServer]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            server.answer(self)

        def log_message(self, format: str, *args: Any) -> None:
            del format, args  # quiet test output

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    server.port = int(httpd.server_address[1])
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
