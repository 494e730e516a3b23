"""Readable names for the engine's own symbols, and the name and context parts searched.

The readable-name rule for engine-emitted (tree-sitter) definitions: the file's *module path*
followed by the definition's qualified name, joined with ``.``. The module path is the
repository-relative path with its last extension removed and ``/`` turned into ``.``; a final
``__init__`` segment (a Python package's own file) is dropped::

    toy/greeter.py    + Greeter.greet  ->  toy.greeter.Greeter.greet
    toy/__init__.py   + make           ->  toy.make
    src/app.test.ts   + run            ->  src.app.test.run
    __init__.py       + main           ->  main

Real indexers' symbols keep ``scip.symbols.readable_name`` (``toy.greeter.Greeter.greet`` for
scip-python, ``src/shapes.ts.Circle`` for scip-typescript).

Search matches a definition by its *name parts* (``parse_header_links`` -> parse, header,
links) and, more weakly, by its *context parts*: the parts of its readable name before the
name itself and of its file path without the extension, minus the name's own parts.
"""

from __future__ import annotations

from functools import lru_cache

from engine.terms import identifier_parts, identifiers

_PACKAGE_FILE = "__init__"


def module_path(path: str) -> str:
    """``toy/greeter.py`` -> ``toy.greeter``; ``toy/__init__.py`` -> ``toy``."""
    segments = [s for s in path.split("/") if s]
    if not segments:
        return ""
    last = segments[-1]
    # A leading dot is a hidden file's name, not an extension (".eslintrc.js" -> ".eslintrc").
    cut = last.rfind(".")
    if cut > 0:
        segments[-1] = last[:cut]
    if segments[-1] == _PACKAGE_FILE:
        segments.pop()
    return ".".join(segments)


def engine_readable_name(path: str, qualified_name: str) -> str:
    """The readable name of an engine-emitted definition (see the module docstring)."""
    module = module_path(path)
    return f"{module}.{qualified_name}" if module else qualified_name


def qualified_key(readable: str) -> str:
    """The form dotted queries are matched against: lower case, every separator a ``.``."""
    return readable.lower().replace("/", ".").replace("#", ".").replace("::", ".")


@lru_cache(maxsize=100_000)
def name_parts(name: str) -> tuple[str, ...]:
    """Distinct identifier parts of a definition's own name (or any text), in order."""
    return tuple(dict.fromkeys(p for token in identifiers(name) for p in identifier_parts(token)))


def context_parts(readable: str, name: str, path: str) -> tuple[str, ...]:
    """Parts of the enclosing names and the file path that are not parts of ``name``."""
    prefix = readable[: -len(name)] if name and readable.endswith(name) else readable
    cut = path.rfind(".")
    stem = path[:cut] if cut > path.rfind("/") + 1 else path
    own = name_parts(name)
    found = dict.fromkeys(name_parts(prefix) + name_parts(stem))
    return tuple(p for p in found if p not in own)
