"""``engine remove SLUG``: delete an index (never the repository)."""

from __future__ import annotations

import shutil

import click

from cli.invocation import Invocation, errors_reported, json_option
from cli.output import dumps
from engine.index.home import validate_slug


@click.command()
@click.argument("slug")
@json_option
def remove(slug: str, as_json: bool) -> None:
    """Delete the index of SLUG (the repository itself is not touched)."""
    run = Invocation(as_json)
    with errors_reported(as_json):
        from engine.index.generations import writer_lock

        entry = run.home.get(validate_slug(slug))
        with writer_lock(entry.directory, wait=False, slug=slug):
            shutil.rmtree(entry.directory)
        if as_json:
            click.echo(dumps({"removed": slug}))
        else:
            click.echo(f"removed the index of {slug}")
