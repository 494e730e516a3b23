"""The one qualified-name scheme: what every answer (search, symbols, context, refs) calls code.

A qualified name is the *module* of the file followed by the definition's name within the
file (``App.register_blueprint``), joined with ``.``. The module depends on the language:

- **Python** (``.py``, ``.pyi``, ``.pyx``): the importable module. The package root is the
  highest folder of the file's ancestors that holds an ``__init__.py``; the module is the path
  from that folder down, so ``src/flask/sansio/app.py`` (``src/flask/__init__.py``, no
  ``src/__init__.py``) is ``flask.sansio.app``, and ``tests/test_apps/blueprintapp/apps/
  admin/__init__.py`` is ``blueprintapp.apps.admin``. A folder without ``__init__.py`` below a
  package is a namespace package and stays in the name. A file no package holds is named from
  the repository root, less a leading source root (``src/``, ``lib/``), which is how a test
  runner or ``python -m`` run from the root imports it (``tests/test_app.py`` ->
  ``tests.test_app``). A final ``__init__`` is dropped.
- **Every other language**: the repository-relative path without its last extension, ``/``
  turned into ``.`` (``src/shapes.ts`` + ``Circle.area`` -> ``src.shapes.Circle.area``); a
  final ``__init__``/``index`` segment is kept, since those languages import files by path.

Search results show the short name (``symbolName``, the name within the file) and this one
(``qualifiedName``); the symbol table stores it (signals/symbol/records.py), the searcher
computes it for chunks (engine/search/searcher.py), both through ``qualified_name``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

__all__ = ["PYTHON_SUFFIXES", "SOURCE_ROOTS", "module_name", "package_dirs", "qualified_name"]

PYTHON_SUFFIXES = (".py", ".pyi", ".pyx")
SOURCE_ROOTS = frozenset({"src", "lib"})  # folders that hold code but are no package
_PACKAGE_FILE = "__init__"


def package_dirs(paths: Iterable[str]) -> frozenset[str]:
    """The folders (repository-relative, ``""`` for the root) that hold an ``__init__.py``."""
    found: set[str] = set()
    for path in paths:
        folder, _, name = path.rpartition("/")
        if name in ("__init__.py", "__init__.pyi"):
            found.add(folder)
    return frozenset(found)


def _strip_extension(segments: list[str]) -> None:
    last = segments[-1]
    cut = last.rfind(".")  # a leading dot is a hidden file's name, not an extension
    if cut > 0:
        segments[-1] = last[:cut]


def module_name(path: str, packages: Collection[str]) -> str:
    """The module of the file at ``path`` (see the module docstring); ``packages`` are the
    folders holding an ``__init__.py`` (``package_dirs``)."""
    segments = [s for s in path.split("/") if s]
    if not segments:
        return ""
    if not path.endswith(PYTHON_SUFFIXES):
        _strip_extension(segments)
        return ".".join(segments)
    _strip_extension(segments)
    folders = segments[:-1]
    root = next(
        (depth for depth in range(1, len(folders) + 1) if "/".join(folders[:depth]) in packages),
        None,
    )
    if root is not None:
        segments = segments[root - 1 :]
    elif segments[0] in SOURCE_ROOTS and len(segments) > 1:
        segments = segments[1:]
    if segments[-1] == _PACKAGE_FILE:
        segments.pop()
    return ".".join(segments)


def qualified_name(path: str, name: str, packages: Collection[str]) -> str:
    """``module_name(path)`` + ``.`` + ``name`` (the name within the file, e.g. ``A.b``);
    just the module for ``name == ""``, just ``name`` for a file with no module (``__init__.py``
    at the root)."""
    module = module_name(path, packages)
    if not name:
        return module
    return f"{module}.{name}" if module else name
