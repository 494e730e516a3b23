"""Which definitions the primary chunks of a context use, ranked for the expansion share.

Candidates are the names each primary chunk of code uses (engine/context/used_names.py: outside
comments and strings), resolved through a ``DefinitionResolver``:

- Where an index records a definition's references (a real SCIP indexer's output), it is
  kept only if a recorded reference lies inside the chunk: that tells ``greet`` the function
  from ``Greeter.greet`` the method, and a parameter ``name`` from a field ``name``.
- Where none does (the engine's own tree-sitter symbols), how the name is used decides what
  it can mean: a bare name is a function or type (or a method of the same file in languages
  with an implicit ``this``), ``self.x`` a member in the same file, ``value.x`` a function or
  type qualified by its module, or a method only when no other definition has that name.
  What remains is resolved by scope, as the language would (issue 17: by bare name, ``App``
  in flask's blueprints resolved to a CLI variable): a definition in the same file; else
  what the file imports under that name (``from .app import App`` is ``flask.sansio.app.App``
  or, for a re-export, a definition of that name inside the imported package), and nothing
  when the file imports the name from outside the repository; else the definitions in the
  file's own top-level package. Of those, only the nearest are kept (same folder, ...), and
  none when even those are too many to be a guess worth paying tokens for.

Ranking: definitions used by more primary chunks first, functions and types before variables
and fields, then nearer ones (same file first), then those used by a better-ranked chunk,
then by position for a stable order.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine.context.used_names import Receiver, code_uses, is_code
from engine.search.ranking.options import DEFAULT_RANKING
from engine.search.ranking.priors import path_prior
from engine.types import Chunk

MAX_AMBIGUOUS = 3  # name-only: more equally near definitions than this is a coin toss
MIN_NAME_CHARS = 3  # shorter identifiers (i, x, ok, db) are mostly locals
# Kinds that are not worth a block of their own: a parameter is shown with its function.
SKIPPED_KINDS = frozenset({"parameter", "type_parameter", "local"})
# Languages where a bare name inside a class can call one of its methods (an implicit this).
IMPLICIT_THIS_LANGUAGES = frozenset({"java", "csharp", "cpp", "kotlin", "scala", "swift", "ruby"})
# A variable or field (SCIP "term") says less than the function or type that uses it: among
# definitions used equally often, these come last.
VALUE_KINDS = frozenset({"term", "variable", "field", "constant", "property"})


@dataclass(frozen=True, slots=True)
class DefinitionSite:
    """A definition the expansion may add. Lines are 1-based and inclusive."""

    key: str  # the resolver's own id of the definition (a SCIP symbol string)
    name: str  # its own name as written in the code, e.g. "greet"
    symbol: str  # qualified name (engine.qualified), e.g. "toy.greeter.Greeter.greet"
    kind: str
    path: str  # repository-relative, "/"-separated
    start_line: int  # the whole definition when the index knows it, else its name line
    end_line: int
    chunk_id: int | None  # the smallest stored chunk holding its name line; None: no chunk
    indexed: bool  # True when an index records where this definition is referenced
    symbol_name: str = ""  # the name within its file, e.g. "Greeter.greet"


@dataclass(frozen=True, slots=True)
class ReferenceSite:
    """A place that uses a definition. ``line`` is 1-based; the range is its enclosing chunk."""

    path: str
    line: int
    start_line: int
    end_line: int
    enclosing: str  # the enclosing chunk's qualified name ("" at module level)
    exact: bool  # False when found by matching the name alone


class DefinitionResolver(Protocol):
    """Symbol lookups the context needs; ``cli`` implements it over the symbol signal's table."""

    def definitions_named(self, names: Collection[str]) -> Mapping[str, Sequence[DefinitionSite]]:
        """Definitions whose own name is exactly one of ``names`` (case-sensitive), by name."""
        ...

    def references(self, site: DefinitionSite) -> Sequence[ReferenceSite]:
        """Where ``site`` is used: the index's references, or name matches when it has none."""
        ...

    def imports_of(self, path: str) -> Mapping[str, str]:
        """The names the file at ``path`` imports -> the qualified names they stand for."""
        ...

    def module_of(self, path: str) -> str:
        """The file's module in engine.qualified's scheme (``flask.sansio.app``)."""
        ...


@dataclass
class Candidate:
    """A definition some primary chunks use, with what ranks it."""

    site: DefinitionSite
    used_by: list[int] = field(default_factory=list)  # indexes into the primary list
    distance: int = 1_000  # path distance to the nearest chunk using it (0: same file)

    def sort_key(self) -> tuple[int, bool, int, int, str, int]:
        return (
            -len(self.used_by),
            self.site.kind in VALUE_KINDS,
            self.distance,
            min(self.used_by),
            self.site.path,
            self.site.start_line,
        )


def path_distance(a: str, b: str) -> int:
    """0 for the same file, 1 for the same folder, +1 for every folder step between them."""
    if a == b:
        return 0
    left, right = a.split("/")[:-1], b.split("/")[:-1]
    common = 0
    for x, y in zip(left, right, strict=False):
        if x != y:
            break
        common += 1
    return 1 + (len(left) - common) + (len(right) - common)


def _is_test(path: str) -> bool:
    return path_prior(path, DEFAULT_RANKING)[1] == "test"


def _uses_in(chunk: Chunk) -> dict[str, set[Receiver]]:
    if not is_code(chunk.language):
        return {}  # prose and data name no definitions worth resolving
    text = chunk.text
    if chunk.name:
        # The name in the definition's own header is no use of anything; a later one is
        # (greet() inside Greeter.greet calls the module's greet()).
        text = re.sub(rf"(?<![\w$]){re.escape(chunk.name)}(?![\w$])", " ", text, count=1)
    return {
        name: receivers
        for name, receivers in code_uses(text, chunk.language).items()
        if len(name) >= MIN_NAME_CHARS
    }


def _inside(site: DefinitionSite, chunk: Chunk) -> bool:
    return (
        site.path == chunk.path
        and site.start_line <= chunk.end_line
        and chunk.start_line <= site.end_line
    )


class _ReferenceCache:
    def __init__(self, resolver: DefinitionResolver) -> None:
        self._resolver = resolver
        self._lines: dict[str, list[tuple[str, int]]] = {}

    def used_in(self, site: DefinitionSite, chunk: Chunk) -> bool:
        lines = self._lines.get(site.key)
        if lines is None:
            lines = [(r.path, r.line) for r in self._resolver.references(site) if r.exact]
            self._lines[site.key] = lines
        return any(
            path == chunk.path and chunk.start_line <= line <= chunk.end_line
            for path, line in lines
        )


def _reachable(site: DefinitionSite, chunk: Chunk, receivers: set[Receiver], unique: bool) -> bool:
    """Whether the name, used as ``receivers`` say, can mean ``site`` (module docstring)."""
    member = site.kind == "method"
    same_file = site.path == chunk.path
    implicit_this = chunk.language in IMPLICIT_THIS_LANGUAGES
    # A bare name from another file reaches only top-level definitions: a function nested in
    # a function (flask's run_command.app) is local to it.
    top_level = "." not in site.symbol_name
    return (
        (
            "bare" in receivers
            and (not member or (same_file and implicit_this))
            and (same_file or top_level)
        )
        or ("self" in receivers and same_file)
        or ("other" in receivers and (not member or unique))
    )


def _nearest(chunk: Chunk, sites: Sequence[DefinitionSite]) -> list[DefinitionSite]:
    nearest = min(path_distance(chunk.path, s.path) for s in sites)
    tier = [s for s in sites if path_distance(chunk.path, s.path) == nearest]
    return tier if len(tier) <= MAX_AMBIGUOUS else []


def _in_scope(
    chunk: Chunk, name: str, sites: Sequence[DefinitionSite], resolver: DefinitionResolver
) -> list[DefinitionSite] | None:
    """The definitions ``name`` can mean by scope (module docstring); None: scope says nothing."""
    same_file = [s for s in sites if s.path == chunk.path]
    if same_file:
        return same_file
    target = resolver.imports_of(chunk.path).get(name)
    if target is not None:
        exact = [s for s in sites if s.symbol == target]
        if exact:
            return exact
        package = target.rsplit(".", 1)[0]
        within = [s for s in sites if s.symbol.startswith(package + ".")]
        return _nearest(chunk, within) if within else []  # [] : imported from elsewhere
    top = resolver.module_of(chunk.path).split(".", 1)[0]
    same_package = [s for s in sites if top and s.symbol.split(".", 1)[0] == top]
    return _nearest(chunk, same_package) if same_package else None


def _used_sites(
    chunk: Chunk,
    name: str,
    receivers: set[Receiver],
    sites: Sequence[DefinitionSite],
    references: _ReferenceCache,
    resolver: DefinitionResolver,
) -> list[DefinitionSite]:
    """Which of the definitions sharing one name ``chunk`` really uses (module docstring)."""
    sites = [
        s
        for s in sites
        if s.kind not in SKIPPED_KINDS
        and not _inside(s, chunk)
        and (_is_test(chunk.path) or not _is_test(s.path))
    ]
    indexed = [s for s in sites if s.indexed]
    if indexed:
        return [s for s in indexed if references.used_in(s, chunk)]
    unique = len(sites) == 1
    sites = [s for s in sites if _reachable(s, chunk, receivers, unique)]
    if not sites:
        return []
    scoped = _in_scope(chunk, name, sites, resolver) if receivers != {"self"} else None
    return scoped if scoped is not None else _nearest(chunk, sites)


def used_definitions(primary: Sequence[Chunk], resolver: DefinitionResolver) -> list[Candidate]:
    """The definitions the ``primary`` chunks use, best first (module docstring)."""
    names_of = [_uses_in(chunk) for chunk in primary]
    wanted = {name for names in names_of for name in names}
    if not wanted:
        return []
    by_name = resolver.definitions_named(wanted)
    references = _ReferenceCache(resolver)
    found: dict[str, Candidate] = {}
    for index, (chunk, names) in enumerate(zip(primary, names_of, strict=True)):
        for name, receivers in names.items():
            found_sites = by_name.get(name, ())
            for site in _used_sites(chunk, name, receivers, found_sites, references, resolver):
                candidate = found.setdefault(site.key, Candidate(site))
                if index not in candidate.used_by:
                    candidate.used_by.append(index)
                candidate.distance = min(candidate.distance, path_distance(chunk.path, site.path))
    return sorted(found.values(), key=Candidate.sort_key)
