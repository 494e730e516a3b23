from __future__ import annotations

import pytest

from engine.qualified import module_name, package_dirs, qualified_name

FLASK_PACKAGES = package_dirs(
    [
        "src/flask/__init__.py",
        "src/flask/json/__init__.py",
        "tests/test_apps/blueprintapp/__init__.py",
        "tests/test_apps/blueprintapp/apps/__init__.py",
        "tests/test_apps/blueprintapp/apps/admin/__init__.py",
        "README.md",
    ]
)


def test_package_dirs_are_the_folders_with_an_init_file() -> None:
    assert "src/flask" in FLASK_PACKAGES
    assert "src" not in FLASK_PACKAGES
    assert package_dirs(["__init__.py"]) == {""}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # Issue 17: the package root is found by the __init__.py chain, so no "src." prefix.
        ("src/flask/app.py", "flask.app"),
        ("src/flask/sansio/app.py", "flask.sansio.app"),  # a namespace folder in a package
        ("src/flask/json/__init__.py", "flask.json"),
        ("tests/test_apps/blueprintapp/apps/admin/__init__.py", "blueprintapp.apps.admin"),
        ("tests/test_app.py", "tests.test_app"),  # no package: from the repository root
        ("src/tool.py", "tool"),  # ... less a source root
        ("__init__.py", ""),
        ("src/app.test.ts", "src.app.test"),
        ("Makefile", "Makefile"),
        ("config/.eslintrc", "config..eslintrc"),
        ("src/main/java/com/acme/Server.java", "src.main.java.com.acme.Server"),
    ],
)
def test_module_name(path: str, expected: str) -> None:
    assert module_name(path, FLASK_PACKAGES) == expected


def test_qualified_name_joins_module_and_name_within_the_file() -> None:
    assert (
        qualified_name("src/flask/sansio/app.py", "App.register_blueprint", FLASK_PACKAGES)
        == "flask.sansio.app.App.register_blueprint"
    )
    assert qualified_name("toy/__init__.py", "make", package_dirs(["toy/__init__.py"])) == (
        "toy.make"
    )
    assert qualified_name("__init__.py", "main", frozenset()) == "main"
    assert qualified_name("src/flask/app.py", "", FLASK_PACKAGES) == "flask.app"
