"""``engine serve`` end to end: a real server process driven by the official MCP client."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli.output import response_json
from engine.index.home import Home
from engine.index.opening import open_index
from engine.indexing.indexer import Indexer
from engine.signal import IndexOptions, OpenOptions
from engine.types import Filters
from tests.conftest import fake_plugins

PROJECT_ROOT = Path(__file__).resolve().parents[3]
# The server and its reindex children embed with the test fake, like the index built here.
FAKE = "from tests.conftest import install_fake_registry; install_fake_registry()"
CHILD_CODE = f"{FAKE}; from cli.serve.reindex import child_main; child_main()"
SERVER_CODE = (
    f"import sys; {FAKE}; from cli.serve.server import serve; "
    f"serve(reindex_command=[sys.executable, '-c', {CHILD_CODE!r}])"
)
SERVER_COMMAND = [sys.executable, "-c", SERVER_CODE]
SIGNALS = {"lexical", "vector", "symbol"}
HANG_GUARD_S = 120  # fails a test that would otherwise hang; not a speed check
RESULT_KEYS = [
    "repo",
    "filePath",
    "startLine",
    "endLine",
    "symbolName",
    "content",
    "score",
    "sources",
    "qualifiedName",
]

TOY_FILES = {
    "toy/greeter.py": (
        "def greet(name):\n    return f'Hello {name}'\n\n\n"
        "def shout(text):\n    return text.upper()\n"
    ),
    "toy/retry.py": (
        "class RetryPolicy:\n"
        "    def backoff_delay(self, attempt):\n"
        "        return min(30, 2 ** attempt)\n"
    ),
    "web/handler.ts": (
        "export function handleRequest(body: string): string {\n  return body.trim();\n}\n"
    ),
}


def write_repo(root: Path) -> Path:
    for rel, text in TOY_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def build_home(tmp: Path) -> Path:
    home = tmp / "home"
    repo = write_repo(tmp / "toy")
    Indexer(Home(home), fake_plugins(), IndexOptions(home=home)).index("toy", repo)
    return home


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the toy repository indexed, for tests that do not change it."""
    return build_home(tmp_path_factory.mktemp("serve"))


def server_env(home: Path) -> dict[str, str]:
    return {"ENGINE_HOME": str(home), "PATH": os.environ.get("PATH", ""), "HOME": str(home)}


@asynccontextmanager
async def connected(home: Path, errlog: TextIO) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=SERVER_COMMAND[0], args=SERVER_COMMAND[1:], env=server_env(home), cwd=PROJECT_ROOT
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's JSON object; ``isError`` is checked to agree with an "error" key."""
    result = await session.call_tool(name, arguments)
    assert len(result.content) == 1
    item = result.content[0]
    assert item.type == "text"
    data = json.loads(item.text)
    assert isinstance(data, dict)
    assert result.is_error == ("error" in data)
    return data


def run_client(
    home: Path,
    tmp_path: Path,
    body: Callable[[ClientSession], Coroutine[Any, Any, None]],
) -> None:
    async def main() -> None:
        with (tmp_path / "server.log").open("w") as errlog, anyio.fail_after(HANG_GUARD_S):
            async with connected(home, errlog) as session:
                await body(session)

    anyio.run(main)


def expected_search(home: Path, query: str, limit: int, filters: Filters) -> dict[str, Any]:
    """What ``engine query --json`` prints for the same search, computed in-process."""
    opened = open_index(Home(home), "toy", fake_plugins(), OpenOptions(home=home))
    try:
        return response_json(opened.searcher.search(query, limit=limit, filters=filters))
    finally:
        opened.close()


def test_initialize_and_tools_listed(shared_home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {
            "semanticSearch",
            "findSymbol",
            "findReferences",
            "findRelated",
            "fileOutline",
            "readRange",
            "assembleContext",
            "indexStatus",
            "listRepos",
            "reindex",
            "indexRepository",
        }
        for tool in tools.values():
            assert tool.description and len(tool.description) > 100
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        search = tools["semanticSearch"]
        assert "grep" in (search.description or "")
        assert search.input_schema["required"] == ["repo", "query"]
        properties = search.input_schema["properties"]
        assert set(properties) == {
            "repo", "query", "limit", "lang", "path", "kind", "budget", "cursor", "wholeChunks"
        }  # fmt: skip
        assert properties["limit"]["default"] == 10
        assert all(prop.get("description") for prop in properties.values())
        assert tools["reindex"].annotations is not None
        assert tools["reindex"].annotations.read_only_hint is False
        assert await session.send_ping() is not None

    run_client(shared_home, tmp_path, body)


def test_semantic_search_is_the_query_json_contract(shared_home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        data = await call(session, "semanticSearch", {"repo": "toy", "query": "greet"})
        assert data["results"] == expected_search(shared_home, "greet", 10, Filters())["results"]
        assert set(data) == {"query", "results", "total", "tokens", "budget"}
        assert data["total"] == len(data["results"]) >= 1
        first = data["results"][0]
        assert list(first) == RESULT_KEYS
        assert first["repo"] == "toy"
        assert first["filePath"] == "toy/greeter.py"
        assert (first["startLine"], first["endLine"]) == (1, 2)
        assert first["symbolName"].endswith("greet")
        assert first["content"] == "def greet(name):\n    return f'Hello {name}'"
        assert all(0.0 <= r["score"] <= 1.0 for r in data["results"])
        assert "lexical" in first["sources"]
        assert set(first["sources"]) <= SIGNALS

        filtered = await call(
            session,
            "semanticSearch",
            {"repo": "toy", "query": "backoff delay request", "limit": 1, "lang": "python"},
        )
        assert (
            filtered["results"]
            == expected_search(
                shared_home, "backoff delay request", 1, Filters(languages=("python",))
            )["results"]
        )
        assert [r["filePath"] for r in filtered["results"]] == ["toy/retry.py"]

        by_path = await call(
            session,
            "semanticSearch",
            {"repo": "toy", "query": "request body", "path": ["web"], "kind": "function"},
        )
        assert [r["filePath"] for r in by_path["results"]] == ["web/handler.ts"]
        assert by_path["results"][0]["symbolName"].endswith("handleRequest")

    run_client(shared_home, tmp_path, body)


def test_find_symbol_and_references(shared_home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        found = await call(session, "findSymbol", {"repo": "toy", "name": "greet"})
        first = found["results"][0]
        assert (first["filePath"], first["startLine"], first["role"]) == (
            "toy/greeter.py",
            1,
            "definition",
        )
        assert first["symbolName"].endswith("greet")
        refs = await call(session, "findReferences", {"repo": "toy", "symbol": "greet"})
        assert refs["results"][0]["role"] == "definition"
        assert refs["total"] == len(refs["results"])
        packed = await call(
            session, "assembleContext", {"repo": "toy", "query": "greet", "budget": 500}
        )
        assert packed["tokens"] <= 500
        assert packed["primary"][0]["filePath"] == "toy/greeter.py"
        missing = await call(session, "findSymbol", {"repo": "ghost", "name": "x"})
        assert "engine index PATH --name ghost" in missing["error"]

    run_client(shared_home, tmp_path, body)


def test_index_status_and_list_repos(shared_home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        repos = await call(session, "listRepos", {})
        assert repos["total"] == 1
        (item,) = repos["repos"]
        assert item["repo"] == "toy"
        assert item["root"] == str(shared_home.parent / "toy")
        assert item["files"] == 3
        assert set(item) == {"repo", "root", "files", "chunks", "builtAt"}

        status = await call(session, "indexStatus", {"repo": "toy"})
        assert status["repo"] == "toy"
        assert status["files"] == 3
        assert status["languages"] == {"python": 2, "typescript": 1}
        assert set(status["signals"]) == SIGNALS
        assert all(state["ready"] for state in status["signals"].values())
        assert status["changedSinceBuild"]["total"] == 0
        assert "reindex" not in status

    run_client(shared_home, tmp_path, body)


def test_unknown_repo_and_bad_arguments_are_errors_then_serving_goes_on(
    shared_home: Path, tmp_path: Path
) -> None:
    async def body(session: ClientSession) -> None:
        for tool, arguments in [
            ("semanticSearch", {"repo": "ghost", "query": "greet"}),
            ("indexStatus", {"repo": "ghost"}),
            ("reindex", {"repo": "ghost"}),
        ]:
            error = (await call(session, tool, arguments))["error"]
            assert "engine index PATH --name ghost" in error
            assert "indexed repositories: toy" in error
        bad_slug = await call(session, "semanticSearch", {"repo": "../etc", "query": "x"})
        assert "invalid repository name" in bad_slug["error"]
        assert "indexed repositories: toy" in bad_slug["error"]

        wrong_type = await call(
            session, "semanticSearch", {"repo": "toy", "query": "greet", "limit": "many"}
        )
        assert wrong_type["error"].startswith("invalid arguments for semanticSearch: limit")
        too_many = await call(
            session, "semanticSearch", {"repo": "toy", "query": "greet", "limit": 0}
        )
        assert "limit" in too_many["error"]
        missing = await call(session, "semanticSearch", {"repo": "toy"})
        assert "query" in missing["error"]
        empty = await call(session, "semanticSearch", {"repo": "toy", "query": "   "})
        assert "the query is empty" in empty["error"]
        unknown = await call(session, "findEverything", {})
        assert "semanticSearch" in unknown["error"]

        after = await call(session, "semanticSearch", {"repo": "toy", "query": "shout"})
        assert after["results"][0]["symbolName"].endswith("shout")

    run_client(shared_home, tmp_path, body)


def test_concurrent_searches(shared_home: Path, tmp_path: Path) -> None:
    queries = ["greet", "shout", "backoff delay", "handle request", "RetryPolicy"] * 4

    async def body(session: ClientSession) -> None:
        answers: list[dict[str, Any]] = [{} for _ in queries]

        async def one(index: int, query: str) -> None:
            answers[index] = await call(session, "semanticSearch", {"repo": "toy", "query": query})

        async with anyio.create_task_group() as group:
            for index, query in enumerate(queries):
                group.start_soon(one, index, query)
        for query, answer in zip(queries, answers, strict=True):
            assert (
                answer["results"] == expected_search(shared_home, query, 10, Filters())["results"]
            )

    run_client(shared_home, tmp_path, body)
    # The index was opened once and stayed open for all twenty calls.
    assert (tmp_path / "server.log").read_text().count("toy: opened gen-") == 1


def test_reindex_while_searching_then_new_generation_is_served(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    repo = tmp_path / "toy"

    async def body(session: ClientSession) -> None:
        before = await call(session, "semanticSearch", {"repo": "toy", "query": "frobnicate"})
        assert all(r["filePath"] != "toy/frob.py" for r in before["results"])
        (repo / "toy" / "frob.py").write_text("def frobnicate(widget):\n    return widget\n")
        (repo / "toy" / "greeter.py").unlink()

        results: dict[str, list[dict[str, Any]]] = {"reindex": [], "semanticSearch": []}

        async def run(tool: str, arguments: dict[str, Any]) -> None:
            results[tool].append(await call(session, tool, arguments))

        async with anyio.create_task_group() as group:
            group.start_soon(run, "reindex", {"repo": "toy"})
            group.start_soon(run, "reindex", {"repo": "toy"})
            for _ in range(10):
                group.start_soon(run, "semanticSearch", {"repo": "toy", "query": "RetryPolicy"})

        statuses = sorted(r["status"] for r in results["reindex"])
        assert statuses == ["done", "running"]
        done = next(r for r in results["reindex"] if r["status"] == "done")
        running = next(r for r in results["reindex"] if r["status"] == "running")
        assert "already being reindexed" in running["message"]
        assert (done["filesAdded"], done["filesRemoved"], done["files"]) == (1, 1, 3)
        for answer in results["semanticSearch"]:
            assert answer["results"][0]["filePath"] == "toy/retry.py"

        after = await call(session, "semanticSearch", {"repo": "toy", "query": "frobnicate"})
        assert after["results"][0]["filePath"] == "toy/frob.py"
        gone = await call(session, "semanticSearch", {"repo": "toy", "query": "greet shout"})
        assert all(r["filePath"] != "toy/greeter.py" for r in gone["results"])
        status = await call(session, "indexStatus", {"repo": "toy"})
        assert status["generation"] == done["generation"]
        assert status["reindex"]["status"] == "done"

        again = await call(session, "reindex", {"repo": "toy"})
        assert again["upToDate"] is True

    run_client(home, tmp_path, body)


# --- raw JSON-RPC over the pipes --------------------------------------------------------------


class RawServer:
    """``engine serve`` spoken to line by line, as JSON-RPC over its pipes."""

    def __init__(self, home: Path, errlog: TextIO) -> None:
        self.process = subprocess.Popen(
            SERVER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=server_env(home),
            cwd=PROJECT_ROOT,
        )
        # Lines are read on a thread so that a server that never answers fails the test.
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self._lines.put(line)
        self._lines.put(b"")

    def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        line = self._lines.get(timeout=HANG_GUARD_S)
        assert line, "the server closed stdout"
        data = json.loads(line)
        assert isinstance(data, dict)
        return data

    def handshake(self) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        assert self.receive()["result"]["serverInfo"]["name"] == "engine"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def search(self, request_id: int, query: str) -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "semanticSearch", "arguments": {"repo": "toy", "query": query}},
            }
        )
        reply = self.receive()
        assert reply["id"] == request_id
        data = json.loads(reply["result"]["content"][0]["text"])
        assert isinstance(data, dict)
        return data

    def close_stdin_and_wait(self) -> tuple[int, list[dict[str, Any]]]:
        """The exit code and the messages written after stdin closed."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(HANG_GUARD_S)
        rest = []
        while line := self._lines.get(timeout=HANG_GUARD_S):
            rest.append(json.loads(line))
        return code, rest


@pytest.fixture
def raw_server(shared_home: Path, tmp_path: Path) -> Any:
    with (tmp_path / "server.log").open("w") as errlog:
        server = RawServer(shared_home, errlog)
        yield server
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def test_malformed_messages_get_jsonrpc_errors_and_serving_goes_on(raw_server: RawServer) -> None:
    raw_server.handshake()
    raw_server.send("{this is not json")
    parse_error = raw_server.receive()
    assert (parse_error["id"], parse_error["error"]["code"]) == (None, -32700)
    raw_server.send('{"jsonrpc": "2.0", "id": 41, "method": 7}')
    invalid = raw_server.receive()
    assert (invalid["id"], invalid["error"]["code"]) == (41, -32600)
    raw_server.send("[1, 2, 3]")
    batch = raw_server.receive()
    assert (batch["id"], batch["error"]["code"]) == (None, -32600)
    raw_server.send({"jsonrpc": "2.0", "id": 42, "method": "no/such/method"})
    assert raw_server.receive()["error"]["code"] == -32601

    answer = raw_server.search(43, "shout")
    assert answer["results"][0]["symbolName"].endswith("shout")
    assert raw_server.close_stdin_and_wait() == (0, [])


def reindex_children(home: Path) -> list[int]:
    """Live reindex processes started for ``home`` (found through /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if (
            b"cli.serve.reindex" in cmdline
            and f"ENGINE_HOME={home}".encode() in environ.split(b"\0")
            and state != "Z"
        ):
            found.append(int(proc.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_stdin_close_during_reindex_exits_cleanly_without_orphans(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    with (tmp_path / "server.log").open("w") as errlog:
        server = RawServer(home, errlog)
        try:
            server.handshake()
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "reindex", "arguments": {"repo": "toy"}},
                }
            )
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "reindex", "arguments": {"repo": "toy"}},
                }
            )
            # The two calls run on worker threads at once: whichever starts the child, the
            # other is answered "already being reindexed" while that child runs.
            running = server.receive()
            assert running["id"] in (1, 2)
            assert "already being reindexed" in running["result"]["content"][0]["text"]
            assert reindex_children(home)
            code, rest = server.close_stdin_and_wait()
            assert code == 0
            # The call cut short by the shutdown is answered, with an error.
            assert [(m["id"], "error" in m) for m in rest] == [(3 - running["id"], True)]
        finally:
            if server.process.poll() is None:
                server.process.kill()
                server.process.wait()
    assert reindex_children(home) == []
    assert "Traceback" not in (tmp_path / "server.log").read_text()
