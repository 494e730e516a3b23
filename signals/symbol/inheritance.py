"""``Class.member`` through the class's bases: ``Flask.register_blueprint`` is ``App``'s.

Used by lookup.py only when no definition has the dotted name itself. The bases are read from
the class chunk's stored signature (``class Flask(App):``, ``class A extends B implements C``),
so this works for every source whose class maps to a chunk; each base is looked up by its
own name (the last part of ``sansio.App``), breadth first, up to ``MAX_DEPTH`` levels.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.errors import EngineError
from engine.index.store import STORE_FILE, ChunkStore
from signals.symbol.table import SymbolRecord, SymbolTable

MAX_DEPTH = 4
_CLASS_KINDS = frozenset({"class", "interface", "struct", "trait", "type"})
_PYTHON_BASES = re.compile(r"^\s*class\s+\w+\s*(?:\[[^\]]*\])?\s*\((?P<bases>[^)]*)\)")
_EXTENDS = re.compile(r"\b(?:extends|implements)\s+(?P<bases>[\w$.,<>\s]+?)(?:\{|$)")
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def _normal(text: str) -> str:
    return text.replace("::", ".").replace("/", ".").replace("#", ".")


def base_names(signature: str) -> list[str]:
    """The own names of the bases a class header lists, in order (``metaclass=`` left out)."""
    found: list[str] = []
    match = _PYTHON_BASES.match(signature)
    if match is not None:
        parts = [p for p in match.group("bases").split(",") if "=" not in p]
    else:
        parts = [m.group("bases") for m in _EXTENDS.finditer(signature)]
        parts = [p for part in parts for p in re.sub(r"<[^>]*>", "", part).split(",")]
    for part in parts:
        name = _NAME.search(part.strip())
        if name is not None and name.group() not in ("object", "Generic", "Protocol"):
            found.append(name.group().rsplit(".", 1)[-1])
    return list(dict.fromkeys(found))


def _named(table: SymbolTable, name: str) -> list[SymbolRecord]:
    records = table.records([i for i, *_ in table.exact([name.lower()])])
    return [r for _, r in sorted(records.items()) if r.name == name]


def inherited(table: SymbolTable, generation: Path, wanted: str) -> dict[int, SymbolRecord]:
    """The definitions of ``wanted`` (``Owner.member``, separators as ``.``) in the bases of
    every class ``Owner`` names; {} when none has it or the chunk store cannot be read."""
    owner, _, member = wanted.rpartition(".")
    owner_name = owner.rsplit(".", 1)[-1]
    classes = [
        r
        for r in _named(table, owner_name)
        if r.kind in _CLASS_KINDS
        and (_normal(r.readable) == owner or _normal(r.readable).endswith("." + owner))
    ]
    if not classes:
        return {}
    try:
        store = ChunkStore.open_readonly(generation / STORE_FILE)
    except EngineError:
        return {}
    try:
        return _search_bases(table, store, classes, member)
    finally:
        store.close()


def _search_bases(
    table: SymbolTable, store: ChunkStore, classes: list[SymbolRecord], member: str
) -> dict[int, SymbolRecord]:
    seen: set[str] = {c.symbol for c in classes}
    level = classes
    members = table.records([i for i, *_ in table.exact([member.lower()])])
    for _ in range(MAX_DEPTH):
        chunks = store.chunks([c.chunk_id for c in level if c.chunk_id is not None])
        bases = [
            name
            for c in level
            if c.chunk_id is not None and c.chunk_id in chunks
            for name in base_names(chunks[c.chunk_id].signature or chunks[c.chunk_id].text)
        ]
        found = {
            i: r
            for i, r in members.items()
            if r.name == member
            and any(_normal(r.readable).endswith(f".{base}.{member}") for base in bases)
        }
        if found:
            return found
        level = [
            r
            for base in dict.fromkeys(bases)
            for r in _named(table, base)
            if r.kind in _CLASS_KINDS and r.symbol not in seen
        ]
        seen.update(r.symbol for r in level)
        if not level:
            return {}
    return {}
