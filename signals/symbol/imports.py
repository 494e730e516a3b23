"""What a Python file imports, as local name -> qualified name, for scoped resolution.

``from .app import App`` in ``flask/sansio/blueprints.py`` binds ``App`` to
``flask.sansio.app.App``; ``import numpy as np`` binds ``np`` to ``numpy``. Relative imports
are resolved against the file's module (engine.qualified); imports inside functions or
``if TYPE_CHECKING:`` blocks count too (they are the names the code uses). Star imports bind
nothing. Other languages have no parser here yet: their files import nothing, and
resolution falls back to nearness (engine/context/expansion.py).
"""

from __future__ import annotations

import re

from engine.qualified import PYTHON_SUFFIXES

_FROM = re.compile(
    r"^[ \t]*from[ \t]+(?P<module>\.*[\w.]*)[ \t]+import[ \t]+"
    r"(?P<names>\([^)]*\)|[^\n#;]+)",
    re.MULTILINE,
)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(?P<names>[^\n#;]+)", re.MULTILINE)
_ALIAS = re.compile(r"^(?P<name>[\w.]+)(?:\s+as\s+(?P<alias>\w+))?$")


def _absolute(module: str, importer: str, is_package: bool) -> str:
    """``module`` as written after ``from`` (``..x``), made absolute for ``importer``."""
    dots = len(module) - len(module.lstrip("."))
    if not dots:
        return module
    base = importer.split(".") if importer else []
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (dots - 1)] if dots > 1 else base
    rest = module[dots:]
    return ".".join([*base, rest] if rest else base)


def python_imports(text: str, path: str, module: str) -> dict[str, str]:
    """Names bound by the imports in ``text`` (the code of ``path``, whose module is
    ``module``) -> the qualified names they stand for; {} for a non-Python file."""
    if not path.endswith(PYTHON_SUFFIXES):
        return {}
    is_package = path.rsplit("/", 1)[-1].startswith("__init__.")
    bound: dict[str, str] = {}
    for match in _FROM.finditer(text):
        source = _absolute(match.group("module"), module, is_package)
        names = match.group("names").strip().strip("()").replace("\\\n", " ")
        for item in names.split(","):
            alias = _ALIAS.match(" ".join(item.split()))
            if alias is None or alias.group("name") == "*":
                continue
            name = alias.group("name")
            bound[alias.group("alias") or name] = f"{source}.{name}" if source else name
    for match in _IMPORT.finditer(text):
        for item in match.group("names").split(","):
            alias = _ALIAS.match(" ".join(item.split()))
            if alias is None:
                continue
            name = alias.group("name")
            bound[alias.group("alias") or name.split(".", 1)[0]] = (
                name if alias.group("alias") else name.split(".", 1)[0]
            )
    return bound
