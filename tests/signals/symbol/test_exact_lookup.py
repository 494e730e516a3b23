"""Issue 17's symbol defects, end to end over a small src-layout package indexed in tmp_path:
exact matches first and marked, an exact miss answers nothing plus suggestions, whole
definition ranges, one qualified-name scheme, and expansion by scope rather than bare name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.output import location_json
from engine.context.expansion import used_definitions
from engine.index.home import Home
from engine.index.opening import OpenIndex, open_index
from engine.indexing.indexer import Indexer
from engine.signal import IndexOptions, OpenOptions
from signals import registry
from signals.symbol.lookup import file_outline, find_definitions, suggest_names
from signals.symbol.resolver import SymbolResolver

FILES = {
    "src/pkg/__init__.py": "from .app import App, Flask\n",
    "src/pkg/app.py": (
        "def decorator(cls):\n"  # 1
        "    return cls\n"
        "\n"
        "\n"
        "class App:\n"  # 5
        "    def route(self, rule):\n"
        "        return rule\n"
        "\n"
        "    def url_for(self, endpoint):\n"
        "        return endpoint\n"  # 10
        "\n"
        "\n"
        "# The application object.\n"  # 13
        "@decorator\n"
        "class Flask(App):\n"  # 15
        '    """The app."""\n'
        "\n"
        "    def url_for(self, endpoint):\n"
        '        return "/" + endpoint\n'
        "\n"  # 20
        "    def run(self):\n"
        "        return None\n"  # 22
    ),
    "src/pkg/helpers.py": "def url_for(endpoint):\n    return endpoint\n",
    "src/pkg/blueprints.py": (
        "from .app import App\n"
        "\n"
        "\n"
        "class Blueprint:\n"
        "    def register(self, app: App) -> None:\n"
        "        App.route(app, '/')\n"
    ),
    # Same folder as app.py, so nearness alone cannot tell the two App apart.
    "src/pkg/cli.py": "def App():\n    return 1\n",
}


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[OpenIndex]:
    root = tmp_path / "repo"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    home = Home(tmp_path / "home")
    plugins = {k: v for k, v in registry.plugins().items() if k != "vector"}
    Indexer(home, plugins, IndexOptions(home.root)).index("pkg", root)
    index = open_index(home, "pkg", plugins, OpenOptions(home.root))
    yield index
    index.close()


def test_a_name_that_exists_nowhere_answers_nothing_and_suggests(opened: OpenIndex) -> None:
    assert find_definitions(opened.generation, "url_fro") == []
    assert find_definitions(opened.generation, "no_such_thing_anywhere") == []
    assert "url_for" in suggest_names(opened.generation, "url_fro")
    assert suggest_names(opened.generation, "Blueprint.url_for")[:2] == [
        "App.url_for",
        "Flask.url_for",
    ]


def test_exact_matches_come_first_and_say_so(opened: OpenIndex) -> None:
    found = find_definitions(opened.generation, "Flask.url_for")
    assert (found[0].symbol, found[0].match) == ("pkg.app.Flask.url_for", "exact")
    assert all(f.match == "partial" for f in found[1:])
    # helpers.url_for shares the name, not the dotted path: never exact, never above it.
    helpers = [f for f in found if f.symbol == "pkg.helpers.url_for"]
    assert all(f.match == "partial" for f in helpers)
    names = [f.symbol for f in find_definitions(opened.generation, "url_for", partial=False)]
    assert sorted(names) == ["pkg.app.App.url_for", "pkg.app.Flask.url_for", "pkg.helpers.url_for"]


def test_a_member_the_class_inherits_resolves_to_the_base(opened: OpenIndex) -> None:
    found = find_definitions(opened.generation, "Flask.route")
    assert (found[0].symbol, found[0].match) == ("pkg.app.App.route", "exact")


def test_a_definition_range_is_the_whole_class(opened: OpenIndex) -> None:
    """``findSymbol Blueprint`` answered the header chunk's lines (18-18), not the class."""
    (flask,) = find_definitions(opened.generation, "pkg.app.Flask", partial=False)
    data = location_json("pkg", opened.store, flask)
    assert (data["startLine"], data["endLine"]) == (13, 22)  # comment, decorator ... run()
    assert data["content"].startswith("# The application object.\n@decorator\nclass Flask")
    assert data["content"].endswith("        return None")
    assert (data["symbolName"], data["qualifiedName"]) == ("Flask", "pkg.app.Flask")
    assert (data["match"], data["indexed"]) == ("exact", True)
    assert location_json("pkg", opened.store, flask, include_body=False)["content"] == ""


def test_search_results_name_the_module_and_the_whole_definition(opened: OpenIndex) -> None:
    results = opened.searcher.search("Flask", limit=20).results
    header = next(r for r in results if r.symbol_name == "Flask")
    assert header.qualified_name == "pkg.app.Flask"  # never "src.pkg.app.Flask"
    assert (header.definition_start_line, header.definition_end_line) == (13, 22)
    data = header.contract_json()
    assert data["definition"] == {"startLine": 13, "endLine": 22}
    whole = next(r for r in results if r.symbol_name == "Flask.url_for")
    assert "definition" not in whole.contract_json()  # the chunk is its whole definition


def test_file_outline_nests_whole_ranges(opened: OpenIndex) -> None:
    outline = file_outline(opened.store, "src/pkg/app.py")
    assert [(e.symbol_name, e.kind, e.start_line, e.end_line, e.depth) for e in outline] == [
        ("decorator", "function", 1, 2, 0),
        ("App", "class", 5, 10, 0),
        ("App.route", "method", 6, 7, 1),
        ("App.url_for", "method", 9, 10, 1),
        ("Flask", "class", 13, 22, 0),
        ("Flask.url_for", "method", 18, 19, 1),
        ("Flask.run", "method", 21, 22, 1),
    ]
    assert outline[4].qualified_name == "pkg.app.Flask"
    assert file_outline(opened.store, "nowhere.py") == []


def test_expansion_resolves_a_name_through_the_file_imports(opened: OpenIndex) -> None:
    """flask: ``App`` in blueprints resolved by bare name (a CLI variable), not the import."""
    register = next(
        c for c in opened.store.chunks_in_file("src/pkg/blueprints.py") if c.name == "register"
    )
    resolver = SymbolResolver(opened)
    try:
        used = {c.site.symbol for c in used_definitions([register], resolver)}
    finally:
        resolver.close()
    assert "pkg.app.App" in used
    assert "pkg.cli.App" not in used
