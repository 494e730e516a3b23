"""Formatting search results and reports: the JSON contract and the readable listing.

Every JSON object here is camelCase, like the query contract, and is the one rendering that
the CLI's ``--json`` and the agent tools (cli/serve) share.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import click
import orjson

from engine.search.freshness import FileView, FreshnessCheck
from engine.types import Result, SearchResponse

if TYPE_CHECKING:
    from engine.index.store import ChunkStore
    from engine.indexing.indexer import IndexReport

MAX_PRINTED_PROBLEMS = 20  # problems the text summary lists; --json has them all


def result_json(result: Result, *, explain: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = result.contract_json()
    if result.duplicates:
        data["alsoIn"] = list(result.duplicates)
    if explain:
        data["prior"] = {"factor": result.prior, "reason": result.prior_reason}
        data["ranking"] = [
            {"feature": a.feature, "factor": round(a.factor, 4), "reason": a.reason}
            for a in result.adjustments
        ]
        data["explain"] = [
            {
                "signal": c.signal,
                "rank": c.rank,
                "rawScore": round(c.raw_score, 6),
                "weight": c.weight,
                "rrf": round(c.rrf, 6),
            }
            for c in result.contributions
        ]
    return data


def response_json(response: SearchResponse, *, explain: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "query": response.query,
        "results": [result_json(r, explain=explain) for r in response.results],
        "total": len(response.results),
    }
    if response.warnings:
        data["warning"] = "; ".join(dict.fromkeys(response.warnings))
    if response.low_confidence:
        data["lowConfidence"] = True
    if response.coverage is not None:  # a cluster answer (README, "Searching on a cluster")
        data["coverage"] = {
            "answered": response.coverage.answered,
            "asked": response.coverage.asked,
            "missing": list(response.coverage.missing),
        }
    if explain:
        data["queryKind"] = response.query_kind
        data["signals"] = [
            {
                "signal": run.signal,
                "latencyMs": round(run.latency_ms, 2),
                "hits": len(run.hits),
                **({"tier": run.tier} if run.tier else {}),
                **({"error": run.error} if run.error else {}),
            }
            for run in response.runs
        ]
    return data


def dumps(data: Any) -> str:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()


SNIPPET_LINES = 8

# Unicode's control characters (category Cc: C0, DEL, C1) and line and paragraph separators.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """``text`` (a file path, a problem line) for the one-line-per-item text output: control
    characters become Python-style escapes (``\\n``, ``\\x1b``), so that a file named with a
    newline cannot split a line or a terminal escape restyle the screen. ``--json`` keeps the
    exact text."""
    return _UNPRINTABLE.sub(_escaped, text)


# The same set less tab and newline, and less a carriage return that ends a line (CRLF files).
_UNPRINTABLE_IN_CODE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]|\r(?!\n)")


def printable_code(text: str) -> str:
    """Indexed code (a snippet, a Markdown context) for a terminal: like ``printable``, but
    tabs and line breaks stay as they are, since they are the code's layout. An ``ESC[2J`` or
    an OSC title in a file is shown as ``\\x1b[2J``, never sent to the terminal."""
    return _UNPRINTABLE_IN_CODE.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]


def print_response(response: SearchResponse, *, explain: bool = False) -> None:
    """The human listing: path:lines, symbol, score, sources, then a short snippet."""
    for warning in dict.fromkeys(response.warnings):
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    if not response.results:
        click.echo("no results")
    elif response.low_confidence:
        click.secho("low confidence: nothing matched the query well", fg="yellow")
    for number, r in enumerate(response.results, 1):
        as_indexed = " (as indexed)" if r.freshness == "stale" else ""
        where = click.style(
            f"{printable(r.path)}:{r.start_line}-{r.end_line}{as_indexed}", fg="cyan", bold=True
        )
        symbol = click.style(printable(r.symbol_name), fg="green") if r.symbol_name else ""
        meta = click.style(f"score {r.score:.3f}  [{', '.join(r.sources)}]", dim=True)
        click.echo(f"{number:>2}. {where}  {symbol}  {meta}")
        if r.freshness == "moved":
            click.secho(
                "      moved: the file changed; these are the code's current lines", dim=True
            )
        elif r.freshness == "stale":
            click.secho(
                "      stale: the file changed and no longer holds this code — lines and code "
                "as indexed, not as on disk",
                fg="yellow",
            )
        if r.duplicates:
            also = ", ".join(printable(path) for path in r.duplicates)
            click.echo(click.style(f"      same code also in: {also}", dim=True))
        if explain:
            for c in r.contributions:
                click.echo(
                    f"      {c.signal:<8} rank {c.rank:<4} raw {c.raw_score:<10.4f} "
                    f"weight {c.weight:<4} rrf {c.rrf:.5f}"
                )
            for a in r.adjustments:
                click.echo(f"      {a.feature:<14} ×{a.factor:.3f}  {printable(a.reason)}")
        lines = r.content.splitlines()
        for offset, line in enumerate(lines[:SNIPPET_LINES]):
            # A stale snippet gets no line numbers: they are not the file's lines any more.
            gutter = "     ~" if r.freshness == "stale" else f"{r.start_line + offset:>6}"
            number_col = click.style(f"{gutter} ", dim=True)
            click.echo(f"{number_col}{printable_code(line)}")
        if len(lines) > SNIPPET_LINES:
            click.echo(click.style(f"       … {len(lines) - SNIPPET_LINES} more lines", dim=True))
        click.echo()
    if explain:
        click.echo(f"query routed as: {response.query_kind}")
        for run in response.runs:
            status = f" error: {run.error}" if run.error else ""
            status += f"  ({run.tier} tier)" if run.tier else ""
            click.echo(f"{run.signal:<8} {run.latency_ms:8.2f} ms  {len(run.hits):>4} hits{status}")


def location_json(
    repo: str, store: ChunkStore, location: Any, *, include_body: bool = True
) -> dict[str, Any]:
    """A SymbolLocation (signals/symbol/lookup.py) as a search result.

    A definition's lines are the whole definition (decorators and doc comment through its
    last line) and ``content`` is its code; a reference's are its line, with that line as
    ``content``. ``include_body=False`` leaves ``content`` empty. ``match`` says whether the
    name matched exactly; ``indexed`` (formerly ``exact``) whether an index recorded it, false
    for a reference found by matching the name alone."""
    start, end, content = location.start_line, location.end_line, ""
    if location.role == "reference":
        start = end = location.line
    if include_body:
        content = _stored_lines(store, location.path, start, end, location.chunk_id)
    return {
        "repo": repo,
        "filePath": location.path,
        "startLine": start,
        "endLine": end,
        "symbolName": location.symbol_name or location.symbol,
        "qualifiedName": location.symbol,
        "content": content,
        "role": location.role,
        "line": location.line,
        "kind": location.kind,
        "enclosing": location.enclosing,
        "match": location.match,
        "indexed": location.indexed,
        "source": location.source,
        "symbol": location.scip_symbol,
    }


def _stored_lines(store: ChunkStore, path: str, start: int, end: int, chunk_id: int | None) -> str:
    """Lines ``start..end`` of ``path`` as indexed, from its stored chunks (every non-blank line
    lies in one; a line no chunk holds is blank)."""
    chunk = store.chunks([chunk_id]).get(chunk_id) if chunk_id is not None else None
    chunks = (
        [chunk]
        if chunk is not None and chunk.start_line <= start and end <= chunk.end_line
        else store.chunks_in_file(path)
    )
    lines: dict[int, str] = {}
    for c in chunks:
        if c.end_line < start or c.start_line > end:
            continue
        for offset, text in enumerate(c.text.split("\n")):
            lines.setdefault(c.start_line + offset, text)
    if not lines:
        return ""
    return "\n".join(lines.get(n, "") for n in range(start, end + 1))


def outline_json(repo: str, path: str, entries: Any) -> dict[str, Any]:
    """``file_outline``'s entries (signals/symbol/outline.py) for the agent tool and --json."""
    return {
        "repo": repo,
        "filePath": path,
        "definitions": [
            {
                "symbolName": e.symbol_name,
                "qualifiedName": e.qualified_name,
                "name": e.name,
                "kind": e.kind,
                "startLine": e.start_line,
                "endLine": e.end_line,
                "line": e.line,
                "depth": e.depth,
            }
            for e in entries
        ],
        "total": len(entries),
    }


def check_locations(items: list[dict[str, Any]], files: FileView | None, repo: str) -> list[str]:
    """Place each ``location_json`` object against the files on disk, as searches do
    (engine/search/freshness.py): a moved one gets its current lines and ``moved: true``, a
    stale one ``stale: true`` and its indexed lines. Returns the warning, if any."""
    if files is None:
        return []
    check = FreshnessCheck(files, repo)
    for item in items:
        placed = check.place(item["filePath"], item["startLine"], item["endLine"], item["content"])
        if placed.freshness == "current":
            continue
        item[placed.freshness] = True
        shift = placed.start_line - item["startLine"]
        item["startLine"], item["endLine"] = placed.start_line, placed.end_line
        item["line"] += shift
    return check.warnings()


def report_json(report: IndexReport, *, max_problems: int | None = None) -> dict[str, Any]:
    """The summary of one ``engine index``/``reindex`` run (``--json`` and the agent's
    ``reindex`` tool). ``problems`` lists at most ``max_problems`` (all when None);
    ``problemCount`` is always complete."""
    problems = report.problems if max_problems is None else report.problems[:max_problems]
    return {
        "repo": report.repo,
        "root": report.root,
        "generation": report.generation,
        "upToDate": report.up_to_date,
        "fullRebuild": report.full_rebuild,
        "files": report.files_indexed,
        "filesAdded": report.files_added,
        "filesChanged": report.files_changed,
        "filesRemoved": report.files_removed,
        "filesUnchanged": report.files_unchanged,
        "chunks": report.chunks,
        "chunksAdded": report.chunks_added,
        "chunksRemoved": report.chunks_removed,
        "skipped": report.skipped,
        "signals": {
            name: {
                "ready": state.ready,
                "synced": state.synced,
                "message": state.message,
            }
            for name, state in report.signals.items()
        },
        "stageSeconds": {stage: round(s, 3) for stage, s in report.stage_seconds.items()},
        "problems": problems,
        "problemCount": len(report.problems),
        # What the user must hear even though the run succeeded (code sent off this machine).
        "warnings": list(dict.fromkeys(report.warnings)),
    }


def print_report(report: IndexReport, as_json: bool, *, shown: Collection[str] = ()) -> None:
    """``engine index``/``reindex`` output: ``report_json``, or a few readable lines, and the
    report's warnings on stderr (less those ``shown`` there already)."""
    for warning in dict.fromkeys(report.warnings):
        if warning not in shown:
            click.secho(f"warning: {warning}", fg="yellow", err=True)
    if as_json:
        click.echo(dumps(report_json(report)))
        return
    verb = "built" if report.full_rebuild else "updated"
    if report.up_to_date:
        verb = "already up to date"
    click.echo(
        f"{report.repo}: index {verb} ({report.generation}) — {report.files_indexed} files, "
        f"{report.chunks} chunks"
    )
    click.echo(
        f"  files: +{report.files_added} added, ~{report.files_changed} changed, "
        f"-{report.files_removed} removed, {report.files_unchanged} unchanged"
    )
    click.echo(f"  chunks: +{report.chunks_added} added, -{report.chunks_removed} removed")
    if report.skipped:
        reasons = ", ".join(f"{reason} {count}" for reason, count in report.skipped.items())
        click.echo(f"  skipped: {sum(report.skipped.values())} ({reasons})")
    for name, state in report.signals.items():
        ready = "ready" if state.ready else "not ready"
        click.echo(f"  {name}: {ready} {state.message}".rstrip())
    stages = ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in report.stage_seconds.items())
    click.echo(f"  time: {stages}")
    for problem in report.problems[:MAX_PRINTED_PROBLEMS]:
        click.secho(f"  problem: {printable(problem)}", fg="yellow")
    if len(report.problems) > MAX_PRINTED_PROBLEMS:
        more = len(report.problems) - MAX_PRINTED_PROBLEMS
        click.secho(f"  … {more} more problems (see --json)", fg="yellow")
