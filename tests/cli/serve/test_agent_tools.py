"""Every agent tool through the official SDK client: budgets and pages, validation, exact
symbols and whole ranges, the navigation tools, several repositories, and indexing a new
folder with progress notifications.

The client validates each successful answer's ``structuredContent`` against the tool's
``outputSchema`` (mcp's ClientSession does on every call), so every call here also checks
that the declared schemas are true of real answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import ClientSession

from engine.index.home import Home
from engine.indexing.indexer import Indexer
from engine.search.tokens import agent_counter
from engine.signal import IndexOptions
from tests.cli.serve.test_server import run_client
from tests.conftest import fake_plugins

FILES = {
    "shop/cart.py": (
        "from shop.prices import unit_price\n"
        "\n"
        "\n"
        "# A customer's basket.\n"
        "@dataclass\n"
        "class Cart:\n"
        '    """Items a customer is about to buy."""\n'
        "\n"
        "    def total(self, items):\n"
        "        return sum(unit_price(item) for item in items)\n"
        "\n"
        "    def empty(self):\n"
        "        return not self.items\n"
    ),
    "shop/prices.py": (
        "def unit_price(item):\n"
        "    return item.price * (1 - item.discount)\n"
        "\n"
        "\n"
        "def bulk_price(items):\n"
        "    return sum(unit_price(item) for item in items)\n"
    ),
    "shop/__init__.py": "",
    "web/handler.ts": (
        "export class Greeter {\n"
        "  greet(name: string): string {\n"
        "    return `Hello ${name}`;\n"
        "  }\n"
        "}\n"
    ),
}
FILES["shop/orders.py"] = (
    "def process_order(order):\n"
    + "".join(f"    order.audit_step_{n}()\n" for n in range(40))
    + "    return order.issue_refund_to_card()\n"
)
for number in range(12):  # enough results to need a second page under a small budget
    FILES[f"shop/rules_{number}.py"] = (
        f"def discount_rule_{number}(item):\n"
        f"    # discount price rule number {number} for an item in the cart\n"
        f"    return item.price * 0.{number + 1}\n"
    )


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("tools")
    home = tmp / "home"
    indexer = Indexer(Home(home), fake_plugins(), IndexOptions(home=home))
    indexer.index("shop", write(tmp / "shop", FILES))
    indexer.index("other", write(tmp / "other", {"lib/price.py": FILES["shop/prices.py"]}))
    return home


async def answer(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The answer, checked to be the same in structuredContent and in the text block."""
    result = await session.call_tool(name, arguments)
    (item,) = result.content
    assert item.type == "text"
    data: dict[str, Any] = json.loads(item.text)
    assert result.is_error == ("error" in data)
    if not result.is_error:
        assert result.structured_content == data
    return data


def tokens_of(data: dict[str, Any]) -> int:
    return agent_counter()[0](orjson.dumps(data).decode())


def test_every_tool_declares_its_output_and_enums(home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert len(tools) == 11
        for tool in tools.values():
            assert tool.output_schema is not None, tool.name
            assert "progress" not in tool.input_schema["properties"]
        lang = tools["semanticSearch"].input_schema["properties"]["lang"]
        assert "python" in lang["anyOf"][0]["enum"]
        kind = tools["semanticSearch"].input_schema["properties"]["kind"]
        assert "function" in kind["anyOf"][0]["enum"]

    run_client(home, tmp_path, body)


def test_budget_counts_the_whole_answer_and_the_cursor_pages_through(
    home: Path, tmp_path: Path
) -> None:
    async def body(session: ClientSession) -> None:
        question = {"repo": "shop", "query": "discount price rule for an item", "limit": 40}
        whole = await answer(session, "semanticSearch", question)
        assert whole["budget"] == 8000 and whole["tokens"] <= 8000
        assert "nextCursor" not in whole
        assert abs(whole["tokens"] - tokens_of(whole)) <= 2

        small = {**question, "budget": 300}
        first = await answer(session, "semanticSearch", small)
        assert tokens_of(first) <= 300
        assert first["results"] and first["nextCursor"]
        seen = [(r["filePath"], r["startLine"]) for r in first["results"]]
        cursor = first["nextCursor"]
        while cursor:
            page = await answer(session, "semanticSearch", {**small, "cursor": cursor})
            assert tokens_of(page) <= 300
            seen += [(r["filePath"], r["startLine"]) for r in page["results"]]
            cursor = page.get("nextCursor")
        assert seen == [(r["filePath"], r["startLine"]) for r in whole["results"]]

        foreign = await answer(
            session, "semanticSearch", {**small, "query": "other", "cursor": first["nextCursor"]}
        )
        assert "cursor belongs to another question" in foreign["error"]
        assert (
            "budget" in (await answer(session, "semanticSearch", {**small, "budget": 50}))["error"]
        )

        context = await answer(
            session, "assembleContext", {"repo": "shop", "query": "cart total", "budget": 400}
        )
        assert context["tokens"] <= 400 and tokens_of(context) <= 410

    run_client(home, tmp_path, body)


def test_filters_and_arguments_are_checked(home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        base = {"repo": "shop", "query": "price"}
        klingon = await answer(session, "semanticSearch", {**base, "lang": "klingon"})
        assert "unknown language 'klingon'" in klingon["error"]
        assert "python" in klingon["error"]
        nonsense = await answer(session, "semanticSearch", {**base, "kind": "nonsense"})
        assert "unknown kind 'nonsense'" in nonsense["error"] and "function" in nonsense["error"]
        upper = await answer(session, "semanticSearch", {**base, "lang": "Python"})
        assert upper["results"] and all(r["filePath"].endswith(".py") for r in upper["results"])
        extra = await answer(session, "semanticSearch", {**base, "langauge": "python"})
        assert "unknown argument 'langauge'" in extra["error"]
        assert "lang" in extra["error"] and "query" in extra["error"]

    run_client(home, tmp_path, body)


def test_symbols_are_exact_whole_and_suggest_when_missing(home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        cart = await answer(session, "findSymbol", {"repo": "shop", "name": "Cart"})
        first = cart["results"][0]
        assert first["match"] == "exact"
        assert (first["filePath"], first["startLine"], first["endLine"]) == ("shop/cart.py", 4, 13)
        assert first["content"].startswith("# A customer's basket.\n@dataclass")
        bare = await answer(
            session, "findSymbol", {"repo": "shop", "name": "Cart", "includeBody": False}
        )
        assert "content" not in bare["results"][0]
        assert tokens_of(bare) < tokens_of(cart)

        missing = await answer(session, "findSymbol", {"repo": "shop", "name": "unit_prize"})
        assert missing["results"] == []
        assert "unit_price" in missing["suggestions"]

        refs = await answer(session, "findReferences", {"repo": "shop", "symbol": "unit_price"})
        assert refs["results"][0]["role"] == "definition"
        assert {r["filePath"] for r in refs["results"][1:]} >= {"shop/cart.py", "shop/prices.py"}

    run_client(home, tmp_path, body)


def test_outline_read_range_and_related(home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        outline = await answer(session, "fileOutline", {"repo": "shop", "path": "shop/cart.py"})
        spans = {d["symbolName"]: (d["startLine"], d["endLine"]) for d in outline["definitions"]}
        assert spans["Cart"] == (4, 13)
        assert spans["Cart.total"] == (9, 10)
        ts = await answer(session, "fileOutline", {"repo": "shop", "path": "web/handler.ts"})
        assert {d["symbolName"]: d["endLine"] for d in ts["definitions"]}["Greeter.greet"] == 4
        unknown = await answer(session, "fileOutline", {"repo": "shop", "path": "nope.py"})
        assert "not in the index" in unknown["error"]

        lines = await answer(
            session, "readRange", {"repo": "shop", "path": "shop/prices.py", "start": 1, "end": 2}
        )
        assert lines["content"] == FILES["shop/prices.py"].split("\n\n\n")[0].rstrip("\n")
        assert (lines["startLine"], lines["endLine"], lines["totalLines"]) == (1, 2, 6)
        assert "stale" not in lines
        for path in ("../home/x", "/etc/passwd"):
            escaped = await answer(session, "readRange", {"repo": "shop", "path": path})
            assert "relative to the repository root" in escaped["error"]
        cut = await answer(
            session, "readRange", {"repo": "shop", "path": "shop/orders.py", "budget": 200}
        )
        assert cut["truncated"] is True and tokens_of(cut) <= 200
        assert cut["startLine"] == 1 and 1 < cut["endLine"] < 42
        assert cut["content"].count("\n") == cut["endLine"] - 1
        gone = await answer(session, "readRange", {"repo": "shop", "path": "shop/nothing.py"})
        assert "no such file" in gone["error"]

        related = await answer(
            session, "findRelated", {"repo": "shop", "path": "shop/cart.py", "line": 10}
        )
        assert related["anchor"]["symbolName"].endswith("Cart.total")
        relations = {
            (r["relation"], r["symbolName"].rsplit(".", 1)[-1]) for r in related["results"]
        }
        assert ("uses", "unit_price") in relations
        assert all(
            not (r["filePath"] == "shop/cart.py" and r["startLine"] == 9)
            for r in related["results"]
        )
        used = await answer(
            session, "findRelated", {"repo": "shop", "path": "shop/prices.py", "line": 1}
        )
        assert {r["filePath"] for r in used["results"] if r["relation"] == "usedBy"} >= {
            "shop/cart.py"
        }

    run_client(home, tmp_path, body)


def test_read_range_says_when_the_file_changed_since_indexing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = write(tmp_path / "repo", {"a.py": "def one():\n    return 1\n"})
    Indexer(Home(home), fake_plugins(), IndexOptions(home=home)).index("repo", repo)
    (repo / "a.py").write_text("# new first line\ndef one():\n    return 1\n")

    async def body(session: ClientSession) -> None:
        lines = await answer(session, "readRange", {"repo": "repo", "path": "a.py"})
        assert lines["content"].startswith("# new first line")
        assert lines["stale"] is True

    run_client(home, tmp_path, body)


def test_search_over_several_repositories(home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> None:
        for repo in ("*", ["shop", "other"], "shop,other"):
            found = await answer(
                session, "semanticSearch", {"repo": repo, "query": "bulk_price", "limit": 5}
            )
            assert set(found["repos"]) == {"shop", "other"}
            assert {r["repo"] for r in found["results"]} == {"shop", "other"}
        ghost = await answer(session, "semanticSearch", {"repo": ["shop", "ghost"], "query": "x"})
        assert "ghost" in ghost["error"]

    run_client(home, tmp_path, body)


def test_index_repository_reports_progress_and_then_searches(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = write(tmp_path / "fresh", {"calc.py": "def add(a, b):\n    return a + b\n"})
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def body(session: ClientSession) -> None:
        relative = await answer(session, "indexRepository", {"path": "fresh", "name": "calc"})
        assert "must be absolute" in relative["error"]
        bad_name = await answer(session, "indexRepository", {"path": str(folder), "name": "../x"})
        assert bad_name["error"].startswith("name:")
        missing = await answer(
            session, "indexRepository", {"path": str(tmp_path / "nope"), "name": "nope"}
        )
        assert "does not exist" in missing["error"]
        result = await session.call_tool(
            "indexRepository", {"path": str(folder), "name": "calc"}, progress_callback=progress
        )
        (item,) = result.content
        assert item.type == "text"
        data = json.loads(item.text)
        assert data["status"] == "done", data
        assert seen and all(message for _, _, message in seen)
        found = await answer(session, "findSymbol", {"repo": "calc", "name": "add"})
        assert found["results"][0]["filePath"] == "calc.py"
        listed = await answer(session, "listRepos", {})
        assert [r["repo"] for r in listed["repos"]] == ["calc"]

    run_client(home, tmp_path, body)


def test_a_long_chunk_comes_as_its_best_lines_unless_whole_chunks_are_asked(
    home: Path, tmp_path: Path
) -> None:
    async def body(session: ClientSession) -> None:
        question = {"repo": "shop", "query": "issue refund to card", "limit": 1}
        (cut,) = (await answer(session, "semanticSearch", question))["results"]
        assert cut["filePath"] == "shop/orders.py" and cut["detail"] == "excerpt"
        assert cut["chunk"] == {"startLine": 1, "endLine": 42}
        assert cut["endLine"] == 42 and cut["endLine"] - cut["startLine"] + 1 == 16
        assert cut["content"].endswith("return order.issue_refund_to_card()")
        assert cut["header"] == "def process_order(order):"
        whole = await answer(session, "semanticSearch", {**question, "wholeChunks": True})
        (full,) = whole["results"]
        assert (full["startLine"], full["endLine"]) == (1, 42) and "detail" not in full

    run_client(home, tmp_path, body)
