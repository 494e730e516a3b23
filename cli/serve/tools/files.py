"""readRange and fileOutline: one file's lines and one file's definitions."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import Field

from cli.output import outline_json
from cli.serve.tools.answer import checked_budget, decode_cursor, encode_cursor, fit
from cli.serve.tools.common import Budget, Cursor, Repo, ToolContext, repo_slug
from engine.errors import UsageError
from engine.indexing.source_file import NotRead, read_source
from engine.search.tokens import agent_counter

MAX_READ_BYTES = 8 * 1024 * 1024
MAX_RANGE_LINES = 2_000
ENVELOPE_TOKENS = 100  # the answer's other fields, kept out of the budget for the lines

FilePath = Annotated[
    str,
    Field(description="Repository-relative, '/'-separated path, as filePath in other answers."),
]


def relative_path(path: str) -> str:
    """``path`` as a clean repository-relative path; anything that could leave it is an error."""
    text = path.strip().replace("\\", "/")
    parts = PurePosixPath(text).parts
    if not text or text.startswith("/") or ".." in parts or "\x00" in text:
        raise UsageError(
            f"path {path!r} must be relative to the repository root, without '..' "
            "(use filePath from a search result)"
        )
    return "/".join(part for part in parts if part != ".")


READ_RANGE = (
    "Read lines of a file in an indexed repository, as they are on disk now: use it to see "
    "more around a search result, or the whole range of a result whose detail is "
    '"signature" or "location", before you edit it. The path is contained to the repository '
    "(links out of it are not followed).\n\nReturns {repo, filePath, startLine, endLine, "
    'totalLines, content, "stale"?, "truncated"?}: stale means the file differs from the '
    "indexed copy (search line numbers may be off: reindex); truncated means the range was "
    f"cut at {MAX_RANGE_LINES} lines or at the token budget."
)


def read_range(
    context: ToolContext,
    repo: Repo,
    path: FilePath,
    start: Annotated[int, Field(ge=1, description="First line, 1-based.")] = 1,
    end: Annotated[
        int | None, Field(ge=1, description="Last line, inclusive (default: to the end).")
    ] = None,
    budget: Budget = None,
) -> dict[str, Any]:
    slug = repo_slug(repo)
    rel = relative_path(path)
    if end is not None and end < start:
        raise UsageError(f"end ({end}) is before start ({start})")
    tokens = checked_budget(budget)
    entry = context.home.get(slug)
    source = read_source(entry.root / rel, max_file_bytes=MAX_READ_BYTES, beneath=entry.root)
    if isinstance(source, NotRead):
        reason = "no such file" if source.reason == "vanished" else source.reason
        raise UsageError(
            f"cannot read {rel}: {reason}{f' ({source.detail})' if source.detail else ''}"
        )
    lines = source.text.splitlines()
    total = len(lines)
    if start > max(total, 1):
        raise UsageError(f"{rel} has {total} lines; start ({start}) is past its end")
    last = min(end or total, total, start + MAX_RANGE_LINES - 1)
    truncated = last < min(end or total, total)
    count = agent_counter()[0]
    room = tokens - ENVELOPE_TOKENS
    taken = lines[start - 1 : last]
    if count("\n".join(taken)) > room:  # counted line by line only when it must be cut
        used, fitting = 0, 0
        for line in taken:
            used += count(line) + 1
            if used > room and fitting:
                break
            fitting += 1
        taken, truncated = taken[:fitting], True
    data: dict[str, Any] = {
        "repo": slug,
        "filePath": rel,
        "startLine": start,
        "endLine": start + len(taken) - 1 if taken else start,
        "totalLines": total,
        "content": "\n".join(taken),
    }
    with context.indexes.use(slug) as opened:
        record = opened.store.files().get(rel)
    if record is not None:
        data["language"] = record.language
    if record is None or record.content_hash != source.content_hash:
        data["stale"] = True
    if truncated:
        data["truncated"] = True
    return data


FILE_OUTLINE = (
    "List the definitions in one file (classes, functions, methods, types), each with its "
    "whole line range, in file order: a map of the file before reading or editing it, "
    "cheaper than reading it whole.\n\nReturns {repo, filePath, definitions: [{name, "
    "symbolName (within the file), qualifiedName, kind, line (of the name), startLine, "
    "endLine, depth (0 at top level, 1 for a member...)}], total, tokens, "
    "budget, nextCursor?}."
)


def file_outline(
    context: ToolContext,
    repo: Repo,
    path: FilePath,
    budget: Budget = None,
    cursor: Cursor = None,
) -> dict[str, Any]:
    from signals.symbol.lookup import file_outline as outline_of

    arguments = {"repo": repo, "path": path, "budget": budget}
    offset = decode_cursor("fileOutline", arguments, cursor)
    tokens = checked_budget(budget)
    slug = repo_slug(repo)
    rel = relative_path(path)
    with context.indexes.use(slug) as opened:
        if rel not in opened.store.files():
            raise UsageError(
                f"{rel} is not in the index of {slug} — check the path (as filePath in search "
                "results), or reindex if the file is new"
            )
        outline = outline_json(slug, rel, outline_of(opened.store, rel))
    entries = [{"repo": slug, "filePath": rel, **entry} for entry in outline["definitions"]]
    answer = fit(
        {"repo": slug, "filePath": rel},
        "definitions",
        entries[offset:],
        tokens,
        more=False,
        next_cursor=lambda taken: encode_cursor("fileOutline", arguments, offset + taken),
    )
    return answer
