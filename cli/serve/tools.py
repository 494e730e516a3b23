"""The agent tools: what each does, its typed arguments, and the registry the server serves.

A tool is a plain function ``run(context, **arguments) -> dict`` that returns a JSON object
and may raise ``EngineError``; the server runs it on a worker thread and turns any failure
into ``{"error": ...}``. Its signature (after ``context``) becomes the tool's input schema, so
argument names, types, defaults and ``Field`` descriptions are what the model reads.

To add a tool (``findSymbol``, ``findReferences``): write its function and a ``ToolSpec``
below, and append the spec to ``TOOLS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from cli.output import location_json, response_json
from cli.serve.indexes import IndexCache
from cli.serve.reindex import ReindexJobs
from engine.errors import EngineError, RepoNotFound, UsageError
from engine.index.home import Home, validate_slug
from engine.index.opening import load_manifest
from engine.indexing.status import repo_status
from engine.search.searcher import clean_query
from engine.types import Filters

REINDEX_WAIT_S = 50.0  # under the 60 s many clients allow a call; longer runs report "running"
MAX_LIMIT = 100


@dataclass(frozen=True)
class ToolContext:
    """What every tool may use: the index home, the warm indexes, the reindex jobs."""

    home: Home
    indexes: IndexCache
    jobs: ReindexJobs
    reindex_wait_s: float = REINDEX_WAIT_S


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str  # written for the model: what it is for, when to use it, what comes back
    run: Callable[..., dict[str, Any]]  # run(context, **arguments)
    read_only: bool = True


def repo_names(home: Home) -> list[str]:
    return [entry.slug for entry in home.list()]


def repo_slug(repo: str) -> str:
    """``repo`` as a slug; a name that cannot be a slug is simply a repository that is not there."""
    try:
        return validate_slug(repo)
    except UsageError as exc:
        raise RepoNotFound(str(exc)) from None


def _strings(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    return tuple(item.strip() for item in items if item.strip())


# --- semanticSearch ------------------------------------------------------------------------

Repo = Annotated[
    str, Field(description="Repository name (slug) as listed by listRepos, e.g. 'my-app'.")
]

SEMANTIC_SEARCH = """\
Search an indexed repository and get back the code that answers a question: file path, \
exact line range, enclosing symbol and the source text, best match first.

Prefer this over grep/find when you do not know the exact names to look for: \
natural-language or conceptual questions ("where are failed requests retried?", "how is \
the config file parsed?"), behaviour described in words, an error message or log line, a \
half-remembered identifier, or when you want the few most relevant places ranked instead of \
every textual match. It fuses several signals (BM25 over identifiers and code, semantic \
embeddings, symbol definitions), so exact identifiers work too. Use grep when you need every \
literal occurrence of a known string.

Returns {"query", "results": [...], "total", "warning"?, "lowConfidence"?}. Each result \
has: repo; filePath (relative to the repository root, '/'-separated); startLine and \
endLine (1-based, inclusive line numbers in that file, so you can read or edit exactly \
that range); symbolName (the enclosing definition, e.g. "Parser.parse", or "" for \
module-level code); content (exactly those lines); score (0 to 1, higher is more relevant, \
comparable between queries on the same repository); sources (which signals ranked it: \
"lexical", "vector", "symbol"); alsoIn (only when the same code appears verbatim in other \
files: their paths). "warning" is present when a signal is off or degraded and says how to \
fix it. "lowConfidence": true means nothing matched well: treat the results as leads, not \
answers, and rephrase or grep. Failures come back as {"error": "..."} with the fix (e.g. \
how to index a repository that is not indexed yet)."""


def semantic_search(
    context: ToolContext,
    repo: Repo,
    query: Annotated[
        str,
        Field(
            description="What you are looking for, in words or identifiers, e.g. 'where is "
            "the retry delay computed' or 'parse_config'."
        ),
    ],
    limit: Annotated[
        int, Field(ge=1, le=MAX_LIMIT, description="How many results to return (1-100).")
    ] = 10,
    lang: Annotated[
        str | list[str] | None,
        Field(
            description="Only code in this language or these languages, e.g. 'python' or "
            "['typescript', 'tsx'] (names as in indexStatus 'languages')."
        ),
    ] = None,
    path: Annotated[
        str | list[str] | None,
        Field(
            description="Only files whose repository-relative path matches this glob or "
            "folder, e.g. 'src/server/*', 'tests', '*.py'."
        ),
    ] = None,
    kind: Annotated[
        str | list[str] | None,
        Field(
            description="Only chunks of this kind: function, method, class, interface, "
            "struct, enum, trait, impl, module (top-level code), section (markdown), window."
        ),
    ] = None,
) -> dict[str, Any]:
    slug = repo_slug(repo)
    filters = Filters(languages=_strings(lang), path_globs=_strings(path), kinds=_strings(kind))
    with context.indexes.use(slug) as opened:
        response = opened.searcher.search(query, limit=limit, filters=filters)
    return response_json(response)


# --- indexStatus -----------------------------------------------------------------------------

INDEX_STATUS = """\
Show what the index of one repository holds and whether it is up to date: the folder it was \
built from, when, the number of files and chunks per language, which search signals are \
ready, and how many files changed on disk since the build (changedSinceBuild). Also reports \
a reindex started from this server ("reindex": running, done or failed). Call it before \
searching a repository you have not used yet, or after reindex said it is still running. \
Failures come back as {"error": "..."} with the fix."""


def index_status(context: ToolContext, repo: Repo) -> dict[str, Any]:
    slug = repo_slug(repo)
    data = repo_status(context.home, slug)
    job = context.jobs.state(slug)
    if job is not None:
        data["reindex"] = job
    return data


# --- listRepos ------------------------------------------------------------------------------

LIST_REPOS = """\
List the repositories that are indexed and can be searched, with the folder each was built \
from and its size. Use the "repo" value as the repo argument of the other tools. A \
repository that is not listed must be indexed first, outside this server, with: engine \
index PATH --name SLUG."""


def list_repos(context: ToolContext) -> dict[str, Any]:
    repos: list[dict[str, Any]] = []
    for entry in context.home.list():
        item: dict[str, Any] = {"repo": entry.slug, "root": str(entry.root)}
        try:
            _, manifest = load_manifest(entry)
        except EngineError as exc:
            item["error"] = str(exc)
        else:
            item.update(
                files=manifest.files,
                chunks=manifest.chunks,
                builtAt=manifest.built_at or None,
            )
        repos.append(item)
    data: dict[str, Any] = {"repos": repos, "total": len(repos)}
    if not repos:
        data["hint"] = "no repository is indexed yet — run: engine index PATH --name SLUG"
    return data


# --- reindex --------------------------------------------------------------------------------

REINDEX = """\
Bring the index of a repository up to date with the files on disk, after you (or anyone) \
changed, added or deleted files. It is incremental: only changed files are read again, so \
it is usually quick. Searches keep answering from the previous index while it runs and use \
the new one as soon as it is published. Waits up to about 50 seconds and returns a summary \
(files and chunks added/changed/removed, per-signal state); if it takes longer, it returns \
{"status": "running"} and keeps going — check with indexStatus. Calling it again while one \
is running for the same repository returns status "running" instead of starting another. \
Failures come back as {"error": "..."} with the fix."""


def reindex(context: ToolContext, repo: Repo) -> dict[str, Any]:
    slug = repo_slug(repo)
    context.home.get(slug)  # an unknown repository fails here, with the hint to index it
    return context.jobs.run(slug, wait_s=context.reindex_wait_s)


# --- findSymbol / findReferences -------------------------------------------------------------

LOCATION_FIELDS = (
    "Each result has: repo; filePath; startLine and endLine (1-based, inclusive); symbolName "
    '(the readable dotted name, e.g. "pkg.module.Class.method"); content; role ("definition" '
    'or "reference"); line (the line of the name or of the reference); kind; enclosing (for '
    "a reference, the function or class it sits in); exact (false when found by matching the "
    "name as a word, not from a code-intelligence index: it may be a comment or another "
    "symbol with the same name); source (which index said so)."
)

FIND_SYMBOL = (
    "Find where something is defined, by name: a function, method, class, interface, struct "
    'or type. Give a plain name ("parse_config"), a dotted path ("Parser.parse") or a SCIP '
    "symbol. Exact name matches come first, then close ones. Prefer this over semanticSearch "
    "when you know (most of) the name and want its definition rather than code that talks "
    'about it.\n\nReturns {"query", "results": [...], "total"}. ' + LOCATION_FIELDS
)


def find_symbol(
    context: ToolContext,
    repo: Repo,
    name: Annotated[str, Field(description="The name, dotted path or SCIP symbol to find.")],
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="At most this many.")] = 20,
) -> dict[str, Any]:
    return _lookup(context, repo, name, limit, references=False)


FIND_REFERENCES = (
    "List where a symbol is used: its definition first, then references inside functions and "
    "methods (the callers), then the rest. Give a name, a dotted path or a SCIP symbol. Use it "
    "before changing a function's signature or behaviour, to find every caller. With a real "
    "SCIP index references are exact; otherwise they are whole-word matches of the name "
    '(exact: false).\n\nReturns {"query", "results": [...], "total"}. ' + LOCATION_FIELDS
)


def find_references(
    context: ToolContext,
    repo: Repo,
    symbol: Annotated[str, Field(description="The name, dotted path or SCIP symbol.")],
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="At most this many.")] = 50,
) -> dict[str, Any]:
    return _lookup(context, repo, symbol, limit, references=True)


def _lookup(
    context: ToolContext, repo: str, text: str, limit: int, *, references: bool
) -> dict[str, Any]:
    from signals.symbol.lookup import find_definitions
    from signals.symbol.lookup import find_references as references_of

    slug = repo_slug(repo)
    with context.indexes.use(slug) as opened:
        if references:
            found = references_of(opened.generation, opened.store, text, limit)
        else:
            found = find_definitions(opened.generation, text, limit)
        results = [location_json(slug, opened.store, loc) for loc in found]
    return {"query": clean_query(text), "results": results, "total": len(results)}


# --- assembleContext ------------------------------------------------------------------------

ASSEMBLE_CONTEXT = (
    "Get, in one call and within a token budget, the code that answers a question together "
    "with the definitions that code uses (the types and helpers it calls), so you do not have "
    "to guess them or search again. Most of the budget goes to the best search results, the "
    "rest to those definitions; code is never cut mid-line and no region appears twice. Use "
    "it before editing unfamiliar code. With tests=true it also lists the tests that exercise "
    'the answer (found through references).\n\nReturns {"primary": [...], "expanded": '
    '[...], "tokens", "budget", "dropped", ...}: results in the semanticSearch shape, plus '
    '"detail" (full, signature or location) and, for expanded ones, "usedBy".'
)


def assemble_context(
    context: ToolContext,
    repo: Repo,
    query: Annotated[str, Field(description="What you are about to work on, in words.")],
    budget: Annotated[
        int, Field(ge=200, le=200_000, description="Token budget for all the code returned.")
    ] = 4000,
    tests: Annotated[bool, Field(description="Also list related tests.")] = False,
) -> dict[str, Any]:
    from engine.context.assembly import context_for
    from engine.search.tokens import agent_counter
    from signals.symbol.resolver import SymbolResolver

    slug = repo_slug(repo)
    with context.indexes.use(slug) as opened:
        return context_for(
            opened, SymbolResolver, query, budget, counter=agent_counter(), include_tests=tests
        )


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("semanticSearch", SEMANTIC_SEARCH, semantic_search),
    ToolSpec("findSymbol", FIND_SYMBOL, find_symbol),
    ToolSpec("findReferences", FIND_REFERENCES, find_references),
    ToolSpec("assembleContext", ASSEMBLE_CONTEXT, assemble_context),
    ToolSpec("indexStatus", INDEX_STATUS, index_status),
    ToolSpec("listRepos", LIST_REPOS, list_repos),
    ToolSpec("reindex", REINDEX, reindex, read_only=False),
)
