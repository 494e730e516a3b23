from __future__ import annotations

import pytest

from signals.symbol.names import (
    context_parts,
    engine_readable_name,
    module_path,
    name_parts,
    qualified_key,
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("toy/greeter.py", "toy.greeter"),
        ("toy/__init__.py", "toy"),
        ("__init__.py", ""),
        ("src/app.test.ts", "src.app.test"),
        ("Makefile", "Makefile"),
        ("config/.eslintrc", "config..eslintrc"),
        ("src/main/java/com/acme/Server.java", "src.main.java.com.acme.Server"),
    ],
)
def test_module_path(path: str, expected: str) -> None:
    assert module_path(path) == expected


def test_engine_readable_name_joins_module_and_qualified_name() -> None:
    assert engine_readable_name("toy/greeter.py", "Greeter.greet") == "toy.greeter.Greeter.greet"
    assert engine_readable_name("toy/__init__.py", "make") == "toy.make"
    assert engine_readable_name("__init__.py", "main") == "main"


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
