"""Readable names of definitions, and the name and context parts searched.

Every definition's readable name, whatever index described it, is engine.qualified's one
scheme: ``qualified_name(path, inner_name(symbol), packages)``, the file's module followed by
the name within the file. The name within the file is the SCIP symbol's descriptors after
its namespaces (the module, the path segments), so scip-python's
``scip-python python toy 0.1 `toy.greeter`/Greeter#greet().`` and the engine's own
``engine . . . toy/`greeter.py`/Greeter#greet().`` both give ``Greeter.greet``, and
``toy.greeter.Greeter.greet`` in the end.

Search matches a definition by its *name parts* (``parse_header_links`` -> parse, header,
links) and, more weakly, by its *context parts*: the parts of its readable name before the
name itself and of its file path without the extension, minus the name's own parts.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache
from pathlib import Path

from engine.qualified import PYTHON_SUFFIXES, qualified_name
from engine.terms import identifier_parts, identifiers
from scip.errors import ScipError
from scip.symbols import parse_symbol

_SKIPPED_SUFFIXES = frozenset({"namespace", "parameter", "type_parameter", "meta"})


def inner_name(symbol: str) -> str:
    """The name within its file of a SCIP symbol's definition (see the module docstring);
    "" for a symbol that does not parse or names only a module or file."""
    try:
        parsed = parse_symbol(symbol)
    except ScipError:
        return ""
    return ".".join(
        d.name for d in parsed.descriptors if d.suffix not in _SKIPPED_SUFFIXES and d.name
    )


def readable_name(path: str, symbol: str, packages: Collection[str]) -> str:
    """The readable (qualified) name of ``symbol`` defined in ``path``."""
    return qualified_name(path, inner_name(symbol), packages)


def packages_on_disk(root: Path, paths: Collection[str]) -> frozenset[str]:
    """The folders above the Python files of ``paths`` that hold an ``__init__.py`` under
    ``root`` (engine.qualified's packages, when the chunk store is not at hand)."""
    folders: set[str] = set()
    for path in paths:
        if not path.endswith(PYTHON_SUFFIXES):
            continue
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return frozenset(f for f in folders if (root / f / "__init__.py").is_file())


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
