"""``engine status [SLUG]``: what an index holds and how fresh it is."""

from __future__ import annotations

from typing import Any

import click

from cli.invocation import Invocation, errors_reported, json_option, plugins
from cli.output import dumps, printable
from cli.progress import eta
from engine.errors import EngineError
from engine.index.home import validate_slug


@click.command()
@click.argument("slug", required=False)
@json_option
def status(slug: str | None, as_json: bool) -> None:
    """Show what the index of SLUG (or of every repository) holds and how fresh it is."""
    run = Invocation(as_json)
    with errors_reported(as_json):
        from engine.indexing.status import repo_status

        slugs = [validate_slug(slug)] if slug else [e.slug for e in run.home.list()]
        registered = plugins()
        found: list[dict[str, Any]] = []
        for name in slugs:
            try:
                found.append(repo_status(run.home, name, registered))
            except EngineError as exc:
                if slug:
                    raise
                found.append({"repo": name, "error": str(exc)})
        if as_json:
            click.echo(dumps(found[0] if slug else found))
            return
        if not found:
            click.echo("no repositories indexed — run engine index PATH")
        for item in found:
            _print_status(item)


def _print_status(item: dict[str, Any]) -> None:
    if "error" in item:
        click.echo(f"{item['repo']}: {item['error']}")
        return
    click.secho(f"{item['repo']}  ({printable(item['root'])})", bold=True)
    if item.get("firstBuild"):
        click.echo(f"  first index being built: {_progress(item['building'])}")
        click.echo("  it answers queries once this build publishes its first generation")
        return
    click.echo(f"  built {item['builtAt']}  {item['generation']}")
    if item.get("sourceCommit"):
        click.echo(f"  commit {item['sourceCommit']}")
    languages = ", ".join(f"{k} {v}" for k, v in item["languages"].items())
    click.echo(f"  {item['files']} files, {item['chunks']} chunks ({languages})")
    if item.get("storeDamaged"):
        click.secho(
            f"  the chunk store is damaged: {item['storeDamaged']} — run {item['fix']}",
            fg="yellow",
        )
    for name, state in item["signals"].items():
        if state.get("damaged"):
            message = printable(state["message"])
            click.secho(f"  {name}: not ready, {message} — run {item['fix']}", fg="yellow")
            continue
        ready = "ready" if state["ready"] else "not ready"
        extra = "" if state.get("synced", True) or not state["ready"] else " (updating)"
        click.echo(f"  {name}: {ready}{extra} {state.get('message', '')}".rstrip())
        if isinstance(state.get("tiers"), dict):
            shares = ", ".join(f"{t} {share:.0%}" for t, share in state["tiers"].items())
            click.echo(f"    tiers: {shares} (answering: {state.get('tier')})")
    building = item.get("building")
    if building:
        click.echo(f"  in the background: {_progress(building)}")
    changed = item.get("changedSinceBuild")
    if changed is None:
        click.secho(f"  {item.get('warning')}", fg="yellow")
    elif changed["total"]:
        click.secho(
            f"  {changed['total']} files changed since the build (+{changed['added']} "
            f"~{changed['modified']} -{changed['removed']}) — run engine reindex {item['repo']}",
            fg="yellow",
        )
    else:
        click.echo("  up to date with the working tree")


def _progress(building: dict[str, Any]) -> str:
    """``stage done of total (at time)``, or as much of it as the build has written."""
    if not building.get("stage"):
        return "no progress written yet"
    total = building.get("total") or 0
    done = building.get("done")
    counted = f" {done} of {total}" if total else (f" {done}" if done else "")
    left = eta(int(done or 0), int(total), float(building.get("stageSeconds") or 0.0))
    ahead = f", ETA {left}" if left else ""
    at = f" (at {building['at']}{ahead})" if building.get("at") else ""
    return f"{building.get('stage')}{counted}{at}"
