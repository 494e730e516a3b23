"""Evaluation datasets: JSONL files of queries with labeled relevant locations.

Format (one object per line; documented in eval/README.md):
``{"id", "query", "repo"?, "relevant": [path | {path, startLine, endLine} | {path, symbol}],
"category"?, "negative"?}``. Lines are 1-based and inclusive; a bare path makes the whole file
relevant; a ``symbol`` target names a definition by qualified name (``Searcher.search``) and
is resolved to its lines in the index when the run starts, so labels of a codebase that keeps
changing (the self dataset) do not drift.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from engine.errors import UsageError


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    start_line: int | None = None  # None: the whole file (unless symbol is set)
    end_line: int | None = None
    symbol: str = ""  # a qualified name still to be resolved to lines

    def overlaps(self, path: str, start_line: int, end_line: int) -> bool:
        if path != self.path:
            return False
        if self.start_line is None or self.end_line is None:
            return True
        return start_line <= self.end_line and self.start_line <= end_line


@dataclass(frozen=True, slots=True)
class EvalQuery:
    id: str
    query: str
    repo: str | None
    relevant: tuple[Target, ...]
    category: str
    negative: bool


def _target(raw: object, where: str) -> Target:
    if isinstance(raw, str):
        return Target(raw)
    if isinstance(raw, dict) and isinstance(raw.get("path"), str):
        if isinstance(raw.get("symbol"), str) and raw["symbol"]:
            return Target(raw["path"], symbol=raw["symbol"])
        start, end = raw.get("startLine"), raw.get("endLine")
        if isinstance(start, int) and isinstance(end, int) and 1 <= start <= end:
            return Target(raw["path"], start, end)
    raise UsageError(
        f"{where}: each relevant entry is a path, {{path, startLine, endLine}} or {{path, symbol}}"
    )


def load_dataset(path: Path) -> list[EvalQuery]:
    """Read and validate a dataset; a malformed line is an error naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read dataset {path}: {exc.strerror or exc}") from None
    queries: list[EvalQuery] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"{where}: not valid JSON ({exc})") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("query"), str):
            raise UsageError(f"{where}: each line needs a string 'query'")
        negative = bool(raw.get("negative", False))
        relevant = tuple(_target(t, where) for t in raw.get("relevant", []))
        if not negative and not relevant:
            raise UsageError(f"{where}: a query that is not negative needs 'relevant' entries")
        query_id = str(raw.get("id") or f"{path.stem}-{number}")
        if query_id in seen:
            raise UsageError(f"{where}: duplicate id {query_id}")
        seen.add(query_id)
        queries.append(
            EvalQuery(
                id=query_id,
                query=raw["query"],
                repo=raw.get("repo"),
                relevant=relevant,
                category=str(raw.get("category") or "uncategorized"),
                negative=negative,
            )
        )
    if not queries:
        raise UsageError(f"dataset {path} has no queries")
    return queries


SymbolLines = Callable[[str, str], tuple[int, int] | None]
"""(path, qualified name) -> the definition's 1-based inclusive lines, or None if absent."""


def resolve_symbols(query: EvalQuery, lines_of: SymbolLines) -> EvalQuery:
    """Replace ``symbol`` targets by their line ranges; an unknown symbol is an error."""
    if not any(t.symbol for t in query.relevant):
        return query
    resolved: list[Target] = []
    for target in query.relevant:
        if not target.symbol:
            resolved.append(target)
            continue
        found = lines_of(target.path, target.symbol)
        if found is None:
            raise UsageError(
                f"{query.id}: no definition {target.symbol} in {target.path} — fix the label "
                "or reindex the repository"
            )
        resolved.append(Target(target.path, found[0], found[1]))
    return replace(query, relevant=tuple(resolved))
