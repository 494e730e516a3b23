"""``engine defs`` and ``engine refs``: definitions and references in the search result shape."""

from __future__ import annotations

from typing import Any

import click

from cli.invocation import Invocation, errors_reported, json_option, plugins
from cli.output import check_locations, dumps, location_json, printable, printable_code
from engine.index.home import Home, validate_slug
from engine.signal import OpenOptions, SignalPlugin
from engine.types import SYMBOL


def lookup(
    home: Home,
    plugins: dict[str, SignalPlugin],
    slug: str,
    text: str,
    *,
    references: bool,
    limit: int,
) -> dict[str, Any]:
    from engine.index.opening import open_index
    from engine.indexing.freshness import DiskFiles
    from engine.search.searcher import clean_query
    from signals.symbol.lookup import find_definitions, find_references, suggest_names

    # The symbol signal alone: it is what answers, so when it cannot open the error names
    # the fix (and the embedding model is not loaded for nothing).
    opened = open_index(
        home,
        validate_slug(slug),
        plugins,
        OpenOptions(home=home.root),
        only=[SYMBOL],
        files=DiskFiles.of,
    )
    try:
        if references:
            found = find_references(opened.generation, opened.store, text, limit)
        else:
            found = find_definitions(opened.generation, text, limit)
        results = [location_json(slug, opened.store, loc) for loc in found]
        # A name that exists nowhere: what it perhaps meant (defs only; refs match names).
        suggestions = [] if references or found else suggest_names(opened.generation, text)
        warnings = check_locations(results, opened.searcher.files, slug)
    finally:
        opened.close()
    data: dict[str, Any] = {"query": clean_query(text), "results": results, "total": len(results)}
    if not references:
        data["suggestions"] = suggestions
    if warnings:
        data["warning"] = "; ".join(warnings)
    return data


def _print_lookup(slug: str, text: str, limit: int, as_json: bool, *, references: bool) -> None:
    run = Invocation(as_json)
    with errors_reported(as_json):
        data = lookup(run.home, plugins(), slug, text, references=references, limit=limit)
        if as_json:
            click.echo(dumps(data))
            return
        if "warning" in data:
            click.secho(f"warning: {data['warning']}", fg="yellow", err=True)
        if not data["results"]:
            click.echo("nothing found")
            if data.get("suggestions"):
                click.echo(f"did you mean: {', '.join(map(printable, data['suggestions']))}")
        for item in data["results"]:
            where = click.style(
                f"{printable(item['filePath'])}:{item['line']}", fg="cyan", bold=True
            )
            role = item["role"] if item["indexed"] else f"{item['role']} (name match)"
            role += " (partial match)" if item["match"] == "partial" and item["indexed"] else ""
            inside = f" in {printable(item['enclosing'])}" if item["enclosing"] else ""
            name = click.style(printable(item["symbolName"]), fg="green")
            fresh = " (stale: as indexed)" if item.get("stale") else ""
            fresh = " (moved)" if item.get("moved") else fresh
            click.echo(f"{where}  {name}  {role}{inside}{fresh}")
            if item["role"] == "reference" and item["content"]:
                click.echo(f"    {printable_code(item['content'].strip())}")


@click.command()
@click.argument("slug")
@click.argument("name")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@json_option
def defs(slug: str, name: str, limit: int, as_json: bool) -> None:
    """Find definitions of NAME (a name, a dotted path or a SCIP symbol)."""
    _print_lookup(slug, name, limit, as_json, references=False)


@click.command()
@click.argument("slug")
@click.argument("symbol")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@json_option
def refs(slug: str, symbol: str, limit: int, as_json: bool) -> None:
    """List the definition and the references of SYMBOL, callers first."""
    _print_lookup(slug, symbol, limit, as_json, references=True)
