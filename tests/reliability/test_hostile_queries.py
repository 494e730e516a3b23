"""Hostile query text through every entry point: an answer or a clear error, never a crash.

Queries an agent or a user can send: empty, huge, only punctuation, any script, control
characters (NUL included where the transport can carry it), query-language syntax. Each goes
through the searcher, the CLI (query, defs, refs) and the agent tools, and must come back as
a well-formed answer whose results are real chunks, or as ``{"error": ...}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.serve.indexes import IndexCache
from cli.serve.reindex import ReindexJobs
from cli.serve.server import run_tool
from cli.serve.tools import TOOLS, ToolContext
from engine.errors import UsageError
from engine.index.home import Home
from engine.index.opening import open_index
from engine.search.searcher import MAX_QUERY_CHARS
from engine.signal import OpenOptions
from signals import registry
from tests.reliability.conftest import cli, stored_chunks

WORDS = "where is the retry backoff delay computed for a failed request "

QUERIES: dict[str, str] = {
    "long-100kb": (WORDS * (100_000 // len(WORDS) + 1))[:100_000],
    "one-token-100kb": "a" * 100_000,
    "pasted-log": "Traceback (most recent call last):\n  File 'x.py', line 3\n" * 2000,
    "punctuation": "!@#$%^&*()_+-=[]{}|;':\",./<>?`~\\",
    "single-char": "x",
    "digits": "0123456789 42",
    "cjk": "重试 退避 延迟 函数",
    "emoji": "🔁 retry 🚀",
    "rtl-and-combining": "\u202eyaled\u202c e\u0301\u0301\u0301 ﷽",
    "controls": "backoff\x01\x02\x1b[31m\x7f\x08 delay\r\n\t\u200b\ufeff",
    "nul": "backoff\x00delay\x00",
    "lone-surrogate": "retry \ud800 delay",
    "query-syntax": 'AND OR NOT name:greet "unclosed (a|b)+ * ? ~2 ^3 [1 TO 5]',
    "sql": "'; DROP TABLE chunks; --",
    "path-like": "../../../etc/passwd",
}
EMPTY: dict[str, str] = {
    "empty": "",
    "spaces": "   \t\n  ",
    "only-controls": "\x00\x01\x02\x1b",
}
CLI_SAFE = [name for name, text in QUERIES.items() if "\x00" not in text and "\ud800" not in text]


@pytest.fixture
def chunk_set(home: Home, indexed: Path) -> set[tuple[str, int, int, str]]:
    return set(stored_chunks(home))


def check_results(results: list[dict[str, Any]], chunks: set[tuple[str, int, int, str]]) -> None:
    for item in results:
        key = (item["filePath"], item["startLine"], item["endLine"], item["content"])
        assert key in chunks, item
        assert 0.0 <= item["score"] <= 1.0


@pytest.mark.parametrize("name", list(QUERIES))
def test_searcher_answers_hostile_queries(
    home: Home, chunk_set: set[tuple[str, int, int, str]], name: str
) -> None:
    opened = open_index(home, "toy", registry.plugins(), OpenOptions(home=home.root))
    try:
        response = opened.searcher.search(QUERIES[name], limit=10)
    finally:
        opened.close()
    assert response.warnings == []  # no signal failed
    assert all(not run.error for run in response.runs)
    assert len(response.query) <= MAX_QUERY_CHARS
    assert response.query.isprintable() or set(response.query) <= {*" \n\t"} | {
        ch for ch in response.query if ch.isprintable()
    }
    for r in response.results:
        assert (r.path, r.start_line, r.end_line, r.content) in chunk_set


@pytest.mark.parametrize("name", list(EMPTY))
def test_empty_queries_are_a_usage_error(home: Home, indexed: Path, name: str) -> None:
    opened = open_index(home, "toy", registry.plugins(), OpenOptions(home=home.root))
    try:
        with pytest.raises(UsageError, match="the query is empty"):
            opened.searcher.search(EMPTY[name], limit=10)
    finally:
        opened.close()


@pytest.mark.parametrize("name", CLI_SAFE)
def test_cli_answers_hostile_queries(
    home: Home, chunk_set: set[tuple[str, int, int, str]], name: str
) -> None:
    code, data = cli("query", "toy", QUERIES[name])
    assert code == 0, data
    assert "warning" not in data
    check_results(data["results"], chunk_set)
    for command in ("defs", "refs"):
        code, data = cli(command, "toy", QUERIES[name])
        assert code == 0, data
        assert isinstance(data["results"], list)


@pytest.mark.parametrize("command", ["query", "defs", "refs"])
def test_cli_empty_query(home: Home, indexed: Path, command: str) -> None:
    code, data = cli(command, "toy", "  ")
    if command == "query":
        assert code == 1 and "the query is empty" in data["error"]
    else:
        assert code == 0 and data["results"] == []


@pytest.fixture
def tools(home: Home, indexed: Path) -> Iterator[ToolContext]:
    indexes = IndexCache(home, registry.plugins())
    jobs = ReindexJobs(home.root)
    try:
        yield ToolContext(home, indexes, jobs)
    finally:
        jobs.close()
        indexes.close()


def tool(context: ToolContext, tool_name: str, **arguments: Any) -> dict[str, Any]:
    spec = next(spec for spec in TOOLS if spec.name == tool_name)
    return run_tool(spec, context, arguments)


@pytest.mark.parametrize("name", [*QUERIES, *EMPTY])
def test_agent_tools_answer_hostile_queries(
    tools: ToolContext, chunk_set: set[tuple[str, int, int, str]], name: str
) -> None:
    text = {**QUERIES, **EMPTY}[name]
    data = tool(tools, "semanticSearch", repo="toy", query=text)
    if name in EMPTY:
        assert data == {"error": "the query is empty — say what code you are looking for"}
    else:
        assert "error" not in data and "warning" not in data, data
        check_results(data["results"], chunk_set)
    for lookup, argument in (("findSymbol", "name"), ("findReferences", "symbol")):
        found = tool(tools, lookup, repo="toy", **{argument: text})
        assert "error" not in found or "internal error" not in found["error"], found
        assert isinstance(found.get("results", []), list)


def test_hostile_repo_names_in_agent_tools(tools: ToolContext) -> None:
    for repo in ("", "..", "../../etc", "toy\x00", "TOY", "a" * 1000, "toy/../toy"):
        data = tool(tools, "semanticSearch", repo=repo, query="greet")
        assert "error" in data and "internal error" not in data["error"], data
        assert "indexed repositories: toy" in data["error"]


@pytest.mark.parametrize("command", ["query", "defs", "refs"])
def test_cli_argument_that_is_not_utf8(
    home: Home, chunk_set: set[tuple[str, int, int, str]], command: str
) -> None:
    # Python hands undecodable argv bytes over as lone surrogates ("\xff" -> "\udcff").
    code, data = cli(command, "toy", "\udcffgreet\udcfe")
    assert code == 0, data
    assert data["query"] == " greet "
    if command == "query":
        check_results(data["results"], chunk_set)
    assert data["results"][0]["filePath"] == "toy/greeter.py"
