"""Evaluation datasets: JSONL files of queries with labeled relevant locations.

Format (one object per line; documented in eval/README.md):
``{"id", "query", "repo"?, "relevant": [path | {path, startLine, endLine}], "category"?,
"negative"?}``. Lines are 1-based and inclusive; a bare path makes the whole file relevant.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from engine.errors import UsageError


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    start_line: int | None = None  # None: the whole file
    end_line: int | None = None

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
        start, end = raw.get("startLine"), raw.get("endLine")
        if isinstance(start, int) and isinstance(end, int) and 1 <= start <= end:
            return Target(raw["path"], start, end)
    raise UsageError(f"{where}: each relevant entry is a path or {{path, startLine, endLine}}")


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
