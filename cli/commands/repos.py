"""``engine repos``: the indexed repositories and their folders."""

from __future__ import annotations

import click

from cli.invocation import Invocation, errors_reported, json_option
from cli.output import dumps, printable


@click.command()
@json_option
def repos(as_json: bool) -> None:
    """List the indexed repositories."""
    run = Invocation(as_json)
    with errors_reported(as_json):
        entries = run.home.list()
        if as_json:
            click.echo(dumps([{"repo": e.slug, "root": str(e.root)} for e in entries]))
            return
        if not entries:
            click.echo("no repositories indexed — run engine index PATH")
        for e in entries:
            click.echo(f"{e.slug}\t{printable(str(e.root))}")
