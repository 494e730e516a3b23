"""The tests that exercise a context's primary code, found through references, not file names.

For each primary chunk that is a definition, its own definition is looked up (the one whose
enclosing chunk is that chunk) and its references are asked for; those in test files (by
engine/search/ranking/priors.py's path rule) are grouped by the test chunk that holds them.
Tests with an index-confirmed reference come before name matches, then those touching more
primary code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.context.expansion import DefinitionResolver, DefinitionSite
from engine.search.ranking.options import DEFAULT_RANKING
from engine.search.ranking.priors import path_prior
from engine.types import Chunk

DEFINITION_KINDS = frozenset(
    {"function", "method", "class", "interface", "struct", "enum", "trait", "impl"}
)


@dataclass(frozen=True, slots=True)
class RelatedTest:
    """A test chunk that references primary code. Lines are 1-based and inclusive."""

    path: str
    line: int  # the first line of the test that references primary code
    start_line: int  # the test's enclosing chunk
    end_line: int
    enclosing: str  # the test's qualified name ("" for module-level test code)
    tests: tuple[str, ...]  # the primary definitions it references, by readable name
    exact: bool  # True when an index (not a name match) recorded one of those references


def is_test_path(path: str) -> bool:
    return path_prior(path, DEFAULT_RANKING)[1] == "test"


def _own_site(chunk: Chunk, sites: Sequence[DefinitionSite]) -> DefinitionSite | None:
    for site in sites:
        if site.chunk_id == chunk.id:
            return site
    for site in sites:
        if site.path == chunk.path and chunk.start_line <= site.start_line <= chunk.end_line:
            return site
    return None


def related_tests(primary: Sequence[Chunk], resolver: DefinitionResolver) -> list[RelatedTest]:
    definitions = [c for c in primary if c.kind in DEFINITION_KINDS and c.name]
    if not definitions:
        return []
    by_name = resolver.definitions_named({c.name for c in definitions})
    found: dict[tuple[str, int, int], RelatedTest] = {}
    for chunk in definitions:
        site = _own_site(chunk, by_name.get(chunk.name, ()))
        if site is None or is_test_path(site.path):
            continue
        for ref in resolver.references(site):
            if not is_test_path(ref.path) or not ref.enclosing:
                continue  # module-level uses in a test file are imports, not tests
            key = (ref.path, ref.start_line, ref.end_line)
            before = found.get(key)
            if before is None:
                found[key] = RelatedTest(
                    ref.path,
                    ref.line,
                    ref.start_line,
                    ref.end_line,
                    ref.enclosing,
                    (site.symbol,),
                    ref.exact,
                )
                continue
            tests = before.tests if site.symbol in before.tests else (*before.tests, site.symbol)
            found[key] = RelatedTest(
                before.path,
                min(before.line, ref.line),
                before.start_line,
                before.end_line,
                before.enclosing,
                tests,
                before.exact or ref.exact,
            )
    return sorted(found.values(), key=lambda t: (not t.exact, -len(t.tests), t.path, t.line))
