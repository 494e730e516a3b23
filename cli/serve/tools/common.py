"""What every agent tool shares: its context, its spec, and the checks on its arguments.

A tool is a plain function ``run(context, **arguments) -> dict`` that returns a JSON object
and may raise ``EngineError``; the server runs it on a worker thread and turns any failure
into ``{"error": ...}``. Its signature (after ``context``) becomes the tool's input schema, so
argument names, types, defaults and ``Field`` descriptions are what the model reads; its
``output`` model becomes the tool's ``outputSchema``, and the JSON it returns is sent both as
``structuredContent`` and as the text block older clients read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, get_args

from pydantic import BaseModel, Field

from cli.serve.tools.answer import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from engine.errors import RepoNotFound, UsageError
from engine.index.home import Home, validate_slug
from engine.languages import KNOWN_LANGUAGES
from engine.types import ChunkKind, Filters, SearchResponse

if TYPE_CHECKING:
    from cli.serve.indexes import IndexCache
    from cli.serve.reindex import ReindexJobs

REINDEX_WAIT_S = 50.0  # under the 60 s many clients allow a call; longer runs report "running"
MAX_LIMIT = 100
LANGUAGES: tuple[str, ...] = tuple(sorted(KNOWN_LANGUAGES))
KINDS: tuple[str, ...] = tuple(get_args(ChunkKind))

# Said by every tool whose answers carry lines of indexed files (engine/search/freshness.py).
FRESHNESS = (
    " Results are checked against the files on disk: a result whose file changed but whose "
    "code is still there, at other lines, comes back with its current startLine/endLine and "
    '"moved": true; if the file no longer holds that code, or was deleted, the result has '
    '"stale": true and its lines and content are as indexed, not the file\'s current ones: '
    'read the file before editing. "warning" then names the changed files; the server '
    "reindexes on its own shortly after edits settle (unless started with --no-watch), and "
    "reindex forces it."
)


ClusterSearch = Callable[[Sequence[str], str, int, Filters], SearchResponse]
"""search(repos, query, limit, filters): semanticSearch answered by a Ray cluster's router
(``engine serve --cluster``; cli/commands/query_cluster.py)."""


@dataclass(frozen=True)
class ToolContext:
    """What every tool may use: the index home, the warm indexes, the reindex jobs."""

    home: Home
    indexes: IndexCache
    jobs: ReindexJobs
    reindex_wait_s: float = REINDEX_WAIT_S
    cluster: ClusterSearch | None = None  # semanticSearch goes through it when set


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str  # written for the model: what it is for, when to use it, what comes back
    run: Callable[..., dict[str, Any]]  # run(context, **arguments)
    output: type[BaseModel]  # the shape of a successful answer: the tool's outputSchema
    read_only: bool = True
    progress: bool = False  # run(context, ..., progress=callback) reports progress


def repo_names(home: Home) -> list[str]:
    return [entry.slug for entry in home.list()]


def repo_slug(repo: str) -> str:
    """``repo`` as a slug; a name that cannot be a slug is simply a repository that is not there."""
    try:
        return validate_slug(repo)
    except UsageError as exc:
        raise RepoNotFound(str(exc)) from None


def strings(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    return tuple(item.strip() for item in items if item.strip())


def _checked(values: Iterable[str], valid: tuple[str, ...], what: str) -> tuple[str, ...]:
    """``values`` lower-cased, each one of ``valid``; else a usage error listing them."""
    checked: list[str] = []
    for value in values:
        name = value.strip().lower()
        if name not in valid:
            raise UsageError(f"unknown {what} {value!r} — valid values: {', '.join(valid)}")
        checked.append(name)
    return tuple(checked)


def languages(value: str | list[str] | None) -> tuple[str, ...]:
    return _checked(strings(value), LANGUAGES, "language")


def kinds(value: str | list[str] | None) -> tuple[str, ...]:
    return _checked(strings(value), KINDS, "kind")


def _one_or_many(values: tuple[str, ...], description: str) -> Any:
    """A ``str | list[str]`` argument whose schema lists its valid values."""
    return Field(
        description=description,
        json_schema_extra={
            "anyOf": [
                {"type": "string", "enum": list(values)},
                {"type": "array", "items": {"type": "string", "enum": list(values)}},
                {"type": "null"},
            ]
        },
    )


Repo = Annotated[
    str, Field(description="Repository name (slug) as listed by listRepos, e.g. 'my-app'.")
]
Lang = Annotated[
    str | list[str] | None,
    _one_or_many(
        LANGUAGES,
        "Only code in this language or these languages, e.g. 'python' or ['typescript', "
        "'tsx'] (case does not matter; indexStatus lists a repository's languages).",
    ),
]
Kind = Annotated[
    str | list[str] | None,
    _one_or_many(
        KINDS,
        "Only chunks of this kind: function, method, class, interface, struct, enum, trait, "
        "impl, module (top-level code), section (markdown), window (files without a grammar).",
    ),
]
PathFilter = Annotated[
    str | list[str] | None,
    Field(
        description="Only files whose repository-relative path matches this glob or folder, "
        "e.g. 'src/server/*', 'tests', '*.py'."
    ),
]
Budget = Annotated[
    int | None,
    Field(
        ge=MIN_BUDGET,
        le=MAX_BUDGET,
        description=f"At most this many tokens for the whole answer (default {DEFAULT_BUDGET}, "
        "counted with cl100k_base); what does not fit is shortened or left for nextCursor.",
    ),
]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Results per page (1-100).")]
Cursor = Annotated[
    str | None,
    Field(description="The nextCursor of a previous answer, to get the next page of it."),
]
