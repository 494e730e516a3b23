from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import pytest

from engine.context.assembly import Block, build_context, context_json
from engine.context.expansion import DefinitionSite, ReferenceSite
from engine.context.markdown import context_markdown
from engine.errors import UsageError
from engine.search.budget import LOCATION_TOKENS
from engine.search.searcher import Searcher
from engine.types import Chunk, Hit
from tests.fakes import FakeChunkSource, FakeSignal, make_chunk

QUERY = "handle a request"

HANDLE = make_chunk(
    1,
    "pkg/app.py",
    'def handle(request):\n    """Answer one request."""\n    data = parse_body(request)\n'
    "    return render(data)",
    name="handle",
)
PARSE_BODY = make_chunk(
    2,
    "pkg/app.py",
    "def parse_body(request):\n    return request.body",
    name="parse_body",
    start_line=6,
)
RENDER = make_chunk(3, "pkg/views.py", "def render(data):\n    return str(data)", name="render")
FAR_RENDER = make_chunk(4, "other/render.py", "def render(x):\n    return x", name="render")
HELPER = make_chunk(
    5, "pkg/util.py", "def helper():\n    value = 1\n    return value", name="helper"
)
TEST = make_chunk(
    6, "tests/test_app.py", "def test_handle():\n    assert handle(1)", name="test_handle"
)
CHUNKS = [HANDLE, PARSE_BODY, RENDER, FAR_RENDER, HELPER, TEST]


def site(chunk: Chunk, *, indexed: bool = False) -> DefinitionSite:
    return DefinitionSite(
        key=f"{chunk.path}#{chunk.name}",
        name=chunk.name,
        symbol=f"{chunk.path.removesuffix('.py').replace('/', '.')}.{chunk.name}",
        kind=chunk.kind,
        path=chunk.path,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        chunk_id=chunk.id,
        indexed=indexed,
    )


class FakeResolver:
    """A DefinitionResolver over a fixed list of definitions and references."""

    def __init__(
        self,
        sites: Sequence[DefinitionSite],
        references: Mapping[str, Sequence[ReferenceSite]] | None = None,
        imports: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.sites = list(sites)
        self.refs = dict(references or {})
        self.imports = dict(imports or {})  # path -> the names it imports -> qualified names

    def definitions_named(self, names: Collection[str]) -> Mapping[str, Sequence[DefinitionSite]]:
        found: dict[str, list[DefinitionSite]] = {}
        for s in self.sites:
            if s.name in names:
                found.setdefault(s.name, []).append(s)
        return found

    def references(self, target: DefinitionSite) -> Sequence[ReferenceSite]:
        return self.refs.get(target.key, [])

    def imports_of(self, path: str) -> Mapping[str, str]:
        return self.imports.get(path, {})

    def module_of(self, path: str) -> str:
        return path.removesuffix(".py").replace("/", ".")


def words(text: str) -> int:
    return len(text.split())


COUNTER = (words, "words")


def searcher(*hits: Hit) -> Searcher:
    return Searcher("r", FakeChunkSource(CHUNKS), {"lexical": FakeSignal("lexical", {QUERY: hits})})


def build(
    resolver: FakeResolver, budget: int, *hits: Hit, share: float = 0.2, tests: bool = False
) -> tuple[list[Block], list[Block], dict[str, object]]:
    context = build_context(
        searcher(*(hits or (Hit(1, 1.0),))),
        FakeChunkSource(CHUNKS),
        resolver,
        QUERY,
        budget_tokens=budget,
        expansion_share=share,
        include_tests=tests,
        counter=COUNTER,
    )
    return context.primary, context.expanded, context_json(context)


ALL_SITES = [site(c) for c in CHUNKS]


def test_expands_with_used_definitions_nearest_first() -> None:
    primary, expanded, data = build(FakeResolver(ALL_SITES), 1000)
    assert [b.result.path for b in primary] == ["pkg/app.py"]
    # parse_body: same file; render: pkg/views.py (same folder) wins over other/render.py.
    assert [(b.result.path, b.result.qualified_name) for b in expanded] == [
        ("pkg/app.py", "pkg.app.parse_body"),
        ("pkg/views.py", "pkg.views.render"),
    ]
    assert expanded[0].result.content == PARSE_BODY.text
    assert expanded[0].used_by[0].path == "pkg/app.py"
    item = data["expanded"][0]  # type: ignore[index]
    assert item["usedBy"] == [
        {"filePath": "pkg/app.py", "startLine": 1, "endLine": 4, "symbolName": "handle"}
    ]
    assert item["sources"] == ["symbol"]
    assert data["dropped"] == []


def test_more_users_rank_first() -> None:
    # helper's chunk also calls render: render is used by two primary chunks now.
    helper = make_chunk(5, "pkg/util.py", "def helper():\n    return render(2)", name="helper")
    chunks = [HANDLE, PARSE_BODY, RENDER, FAR_RENDER, helper]
    context = build_context(
        Searcher(
            "r",
            FakeChunkSource(chunks),
            {"lexical": FakeSignal("lexical", {QUERY: [Hit(1, 1.0), Hit(5, 0.9)]})},
        ),
        FakeChunkSource(chunks),
        FakeResolver([site(c) for c in chunks]),
        QUERY,
        budget_tokens=1000,
        counter=COUNTER,
    )
    assert [b.result.qualified_name for b in context.expanded] == [
        "pkg.views.render",
        "pkg.app.parse_body",
    ]
    assert len(context.expanded[0].used_by) == 2


def test_indexed_references_decide_between_same_named_definitions() -> None:
    sites = [site(c, indexed=True) for c in CHUNKS]
    # The index says line 4 of handle uses the far render, and nothing uses parse_body there.
    references = {
        site(FAR_RENDER).key: [ReferenceSite("pkg/app.py", 4, 1, 4, "handle", exact=True)],
        site(PARSE_BODY).key: [ReferenceSite("pkg/other.py", 9, 9, 9, "", exact=True)],
    }
    _, expanded, _ = build(FakeResolver(sites, references), 1000)
    assert [b.result.path for b in expanded] == ["other/render.py"]


def test_names_in_strings_and_comments_are_not_uses() -> None:
    handle = make_chunk(
        1,
        "pkg/app.py",
        'def handle(request):\n    # parse_body later\n    return "render"',
        name="handle",
    )
    chunks = [handle, PARSE_BODY, RENDER]
    context = build_context(
        Searcher(
            "r", FakeChunkSource(chunks), {"lexical": FakeSignal("lexical", {QUERY: [Hit(1, 1.0)]})}
        ),
        FakeChunkSource(chunks),
        FakeResolver([site(c) for c in chunks]),
        QUERY,
        budget_tokens=1000,
        counter=COUNTER,
    )
    assert context.expanded == []


def test_budget_is_never_exceeded_and_lines_are_never_cut() -> None:
    by_id = {c.id: c for c in CHUNKS}
    hits = (Hit(1, 1.0), Hit(5, 0.9), Hit(3, 0.8))
    for budget in range(1, 200, 3):
        for share in (0.0, 0.2, 0.5, 0.9):
            primary, expanded, data = build(FakeResolver(ALL_SITES), budget, *hits, share=share)
            assert data["tokens"] <= budget  # type: ignore[operator]
            blocks = [*primary, *expanded]
            for block in blocks:
                r = block.result
                assert r.chunk_id is not None
                chunk = by_id[r.chunk_id]
                lines = chunk.text.split("\n")[r.start_line - chunk.start_line :]
                if block.detail == "location":
                    assert r.content == ""
                else:
                    shown = r.content.split("\n")
                    assert shown == lines[: len(shown)]
                    assert r.end_line == r.start_line + len(shown) - 1
            for i, a in enumerate(blocks):
                for b in blocks[i + 1 :]:
                    assert not (
                        a.result.path == b.result.path
                        and a.result.start_line <= b.result.end_line
                        and b.result.start_line <= a.result.end_line
                    ), (budget, share)


def test_tokens_count_code_plus_a_location_line_per_block() -> None:
    primary, expanded, data = build(FakeResolver(ALL_SITES), 1000)
    expected = sum(words(b.result.content) + LOCATION_TOKENS for b in [*primary, *expanded])
    assert data["tokens"] == expected
    assert data["budget"] == 1000


def test_unused_expansion_budget_goes_back_to_primary_code() -> None:
    hits = (Hit(1, 1.0), Hit(5, 0.9))
    full = words(HANDLE.text) + words(HELPER.text) + 2 * LOCATION_TOKENS
    primary, expanded, _ = build(FakeResolver([]), full, *hits, share=0.5)
    assert expanded == []
    assert [b.detail for b in primary] == ["full", "full"]


def test_what_does_not_fit_is_listed_as_dropped() -> None:
    hits = (Hit(1, 1.0), Hit(5, 0.9))
    budget = words(HANDLE.text) + LOCATION_TOKENS
    primary, expanded, data = build(FakeResolver(ALL_SITES), budget, *hits, share=0.0)
    assert [b.detail for b in primary] == ["full"]
    assert expanded == []
    assert data["dropped"] == [
        {
            "role": "primary",
            "filePath": "pkg/util.py",
            "startLine": 1,
            "endLine": 3,
            "symbolName": "helper",
        },
        {
            "role": "expanded",
            "filePath": "pkg/app.py",
            "startLine": 6,
            "endLine": 7,
            "symbolName": "parse_body",
        },
        {
            "role": "expanded",
            "filePath": "pkg/views.py",
            "startLine": 1,
            "endLine": 2,
            "symbolName": "render",
        },
    ]


def test_an_expanded_definition_already_shown_is_not_repeated() -> None:
    _, expanded, _ = build(FakeResolver(ALL_SITES), 1000, Hit(1, 1.0), Hit(2, 0.9))
    assert [b.result.path for b in expanded] == ["pkg/views.py"]


def test_related_tests_come_from_references_in_test_files() -> None:
    references = {
        site(HANDLE).key: [
            ReferenceSite("tests/test_app.py", 2, 1, 2, "test_handle", exact=False),
            ReferenceSite("pkg/cli.py", 7, 5, 9, "main", exact=False),
        ]
    }
    _, _, data = build(FakeResolver(ALL_SITES, references), 1000, tests=True)
    assert data["tests"] == [
        {
            "filePath": "tests/test_app.py",
            "line": 2,
            "startLine": 1,
            "endLine": 2,
            "symbolName": "test_handle",
            "tests": ["pkg.app.handle"],
            "exact": False,
        }
    ]
    assert data["testsFound"] == 1
    _, _, without = build(FakeResolver(ALL_SITES, references), 1000)
    assert "tests" not in without


def test_json_and_markdown_shapes() -> None:
    _, _, data = build(FakeResolver(ALL_SITES), 1000, tests=True)
    assert list(data) == [
        "query",
        "repo",
        "budget",
        "tokens",
        "tokenizer",
        "expansionShare",
        "primary",
        "expanded",
        "tests",
        "testsFound",
        "dropped",
    ]
    first = data["primary"][0]  # type: ignore[index]
    assert list(first)[:8] == [
        "repo",
        "filePath",
        "startLine",
        "endLine",
        "symbolName",
        "content",
        "score",
        "sources",
    ]
    text = context_markdown(data)
    assert "### pkg/app.py:1-4 (handle)\n```python\ndef handle(request):" in text
    assert "### pkg/views.py:1-2 (pkg.views.render) — used by handle\n```python\n" in text
    assert text.endswith(f"_{data['tokens']} of 1000 tokens (words)_\n")


def test_markdown_fence_outlasts_backticks_in_the_code() -> None:
    data = {
        "query": "q",
        "primary": [
            {
                "filePath": "a.md",
                "startLine": 1,
                "endLine": 3,
                "symbolName": "",
                "content": "```sh\nls\n```",
                "language": "markdown",
                "detail": "full",
            }
        ],
        "expanded": [],
        "dropped": [],
        "tokens": 5,
        "budget": 10,
        "tokenizer": "words",
    }
    assert "### a.md:1-3\n````markdown\n```sh\nls\n```\n````" in context_markdown(data)


def test_bad_budget_or_share_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        build(FakeResolver([]), 0)
    with pytest.raises(UsageError):
        build(FakeResolver([]), 100, share=1.0)
