"""Formatting search results and reports: the JSON contract and the readable listing."""

from __future__ import annotations

import re
from typing import Any

import click
import orjson

from engine.types import Result, SearchResponse


def result_json(result: Result, *, explain: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = result.contract_json()
    if result.duplicates:
        data["alsoIn"] = list(result.duplicates)
    if explain:
        data["prior"] = {"factor": result.prior, "reason": result.prior_reason}
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
    if explain:
        data["queryKind"] = response.query_kind
        data["signals"] = [
            {
                "signal": run.signal,
                "latencyMs": round(run.latency_ms, 2),
                "hits": len(run.hits),
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
    return _UNPRINTABLE.sub(lambda match: repr(match.group())[1:-1], text)


def print_response(response: SearchResponse, *, explain: bool = False) -> None:
    """The human listing: path:lines, symbol, score, sources, then a short snippet."""
    for warning in dict.fromkeys(response.warnings):
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    if not response.results:
        click.echo("no results")
    elif response.low_confidence:
        click.secho("low confidence: nothing matched the query well", fg="yellow")
    for number, r in enumerate(response.results, 1):
        where = click.style(
            f"{printable(r.path)}:{r.start_line}-{r.end_line}", fg="cyan", bold=True
        )
        symbol = click.style(printable(r.symbol_name), fg="green") if r.symbol_name else ""
        meta = click.style(f"score {r.score:.3f}  [{', '.join(r.sources)}]", dim=True)
        click.echo(f"{number:>2}. {where}  {symbol}  {meta}")
        if r.duplicates:
            also = ", ".join(printable(path) for path in r.duplicates)
            click.echo(click.style(f"      same code also in: {also}", dim=True))
        if explain:
            if r.prior != 1.0:
                click.echo(f"      prior    ×{r.prior} ({r.prior_reason})")
            for c in r.contributions:
                click.echo(
                    f"      {c.signal:<8} rank {c.rank:<4} raw {c.raw_score:<10.4f} "
                    f"weight {c.weight:<4} rrf {c.rrf:.5f}"
                )
        lines = r.content.splitlines()
        for offset, line in enumerate(lines[:SNIPPET_LINES]):
            number_col = click.style(f"{r.start_line + offset:>6} ", dim=True)
            click.echo(f"{number_col}{line}")
        if len(lines) > SNIPPET_LINES:
            click.echo(click.style(f"       … {len(lines) - SNIPPET_LINES} more lines", dim=True))
        click.echo()
    if explain:
        click.echo(f"query routed as: {response.query_kind}")
        for run in response.runs:
            status = f" error: {run.error}" if run.error else ""
            click.echo(f"{run.signal:<8} {run.latency_ms:8.2f} ms  {len(run.hits):>4} hits{status}")
