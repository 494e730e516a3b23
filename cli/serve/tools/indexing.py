"""listRepos, indexStatus, reindex and indexRepository: what is indexed, and keeping it so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from cli.serve.tools.common import Repo, ToolContext, repo_slug
from engine.errors import EngineError, UsageError
from engine.index.home import validate_slug
from engine.index.opening import load_manifest
from engine.indexing.status import repo_status

Progress = Callable[[float, float | None, str], None]  # (done, total, message)

INDEX_STATUS = """\
Show what the index of one repository holds and whether it is up to date: the folder it was \
built from, when, the number of files and chunks per language, which search signals are \
ready, and how many files changed on disk since the build (changedSinceBuild). Also reports \
a reindex or indexRepository started from this server ("reindex": running with its \
progress, done or failed). Call it before searching a repository you have not used yet, or \
after reindex or indexRepository said it is still running. Failures come back as \
{"error": "..."} with the fix."""


def index_status(context: ToolContext, repo: Repo) -> dict[str, Any]:
    slug = repo_slug(repo)
    data = repo_status(context.home, slug, context.indexes.plugins)
    job = context.jobs.state(slug)
    if job is not None:
        data["reindex"] = job
    return data


LIST_REPOS = """\
List the repositories that are indexed and can be searched, with the folder each was built \
from and its size. Use the "repo" value as the repo argument of the other tools. A folder \
that is not listed can be indexed with indexRepository."""


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
        data["hint"] = "no repository is indexed yet — index a folder with indexRepository"
    return data


REINDEX = """\
Bring the index of a repository up to date with the files on disk, after you (or anyone) \
changed, added or deleted files (the server also does this by itself shortly after files \
stop changing, unless it runs with --no-watch). It is incremental: only changed files are \
read again, so it is usually quick. Searches keep answering from the previous index while \
it runs and use the new one as soon as it is published. Waits up to about 50 seconds, \
sending progress notifications when the call asks for them, and returns a summary (files \
and chunks added/changed/removed, per-signal state); if it takes longer, it returns \
{"status": "running"} and keeps going — check with indexStatus. Calling it again while one \
is running for the same repository returns status "running" instead of starting another. \
Failures come back as {"error": "..."} with the fix."""


def _listener(progress: Progress | None) -> Callable[[dict[str, Any]], None] | None:
    if progress is None:
        return None

    def listen(line: dict[str, Any]) -> None:
        done, total, stage = line.get("done", 0), line.get("total") or None, line.get("stage")
        progress(float(done), float(total) if total else None, f"{stage}: {done}/{total or '?'}")

    return listen


def reindex(context: ToolContext, repo: Repo, progress: Progress | None = None) -> dict[str, Any]:
    slug = repo_slug(repo)
    context.home.get(slug)  # an unknown repository fails here, with the hint to index it
    return context.jobs.run(slug, wait_s=context.reindex_wait_s, on_progress=_listener(progress))


INDEX_REPOSITORY = """\
Index a folder on this machine so that it can be searched, under a name you choose (the \
repo argument of the other tools). The first index reads every file and computes embeddings, \
which takes from seconds for a small project to many minutes for a large one: the call waits \
up to about 50 seconds, sending progress notifications when the call asks for them, then \
returns {"status": "running"} and goes on — check with indexStatus(name). Searches work as \
soon as the first stage is published. A folder already indexed under that name is brought \
up to date instead. Failures come back as {"error": "..."} with the fix."""


def index_repository(
    context: ToolContext,
    path: Annotated[
        str, Field(description="Absolute path of the folder to index, e.g. '/home/me/my-app'.")
    ],
    name: Annotated[
        str,
        Field(description="The name to search it by: letters, digits, '-', '_', '.' ('my-app')."),
    ],
    progress: Progress | None = None,
) -> dict[str, Any]:
    try:
        slug = validate_slug(name)
    except UsageError as exc:
        raise UsageError(f"name: {exc}") from None
    root = Path(path).expanduser()
    if not root.is_absolute():
        raise UsageError(f"path {path!r} must be absolute: the server does not share your cwd")
    # The rest (a folder that is missing or a file, a name taken by another folder) the
    # indexer checks in the child, as engine index does, and its error comes back as is.
    return context.jobs.run(
        slug,
        wait_s=context.reindex_wait_s,
        root=root,
        on_progress=_listener(progress),
    )
