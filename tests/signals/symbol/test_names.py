from __future__ import annotations

from pathlib import Path

from signals.symbol.names import (
    context_parts,
    inner_name,
    name_parts,
    packages_on_disk,
    qualified_key,
    readable_name,
)


def test_inner_name_drops_the_module_and_path_namespaces() -> None:
    assert inner_name("scip-python python toy 0.1 `toy.greeter`/Greeter#greet().") == (
        "Greeter.greet"
    )
    assert inner_name("engine . . . toy/`greeter.py`/Greeter#greet().") == "Greeter.greet"
    assert inner_name("scip-typescript npm toyts 0.1.0 src/`shapes.ts`/Circle#") == "Circle"
    assert inner_name("scip-python python toy 0.1 toy/__init__:") == ""
    assert inner_name("not a symbol") == ""


def test_readable_name_is_importable_for_a_src_layout_package() -> None:
    """Issue 17: ``src.flask.sansio.app.App.register_blueprint`` named no module."""
    symbol = "engine . . . src/flask/sansio/`app.py`/App#register_blueprint()."
    name = readable_name("src/flask/sansio/app.py", symbol, {"src/flask"})
    assert name == "flask.sansio.app.App.register_blueprint"


def test_packages_on_disk_finds_the_init_files(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "sub" / "mod.py").write_text("x = 1\n")
    found = packages_on_disk(tmp_path, ["src/pkg/sub/mod.py", "src/app.ts"])
    assert found == {"src/pkg"}


def test_qualified_key_unifies_separators() -> None:
    assert qualified_key("src/shapes.ts.Circle") == "src.shapes.ts.circle"
    assert qualified_key("toy.greeter.Greeter.greet") == "toy.greeter.greeter.greet"


def test_name_parts_split_every_style_once() -> None:
    assert name_parts("parseHTTPRequest") == ("parse", "http", "request")
    assert name_parts("parse_header_links") == ("parse", "header", "links")
    assert name_parts("__init__") == ("init",)
    assert name_parts("get_get") == ("get",)


def test_context_parts_come_from_enclosing_names_and_path_without_the_name() -> None:
    parts = context_parts("requests.utils.Session.parse_url", "parse_url", "requests/utils.py")
    assert parts == ("requests", "utils", "session")
    # The name's own parts and the file extension are not context.
    assert "py" not in parts and "parse" not in parts
