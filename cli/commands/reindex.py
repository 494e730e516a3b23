"""``engine reindex SLUG``: bring an indexed repository up to date with its folder."""

from __future__ import annotations

import click

from cli.invocation import Invocation, errors_reported, json_option, plugins
from cli.output import print_report
from cli.progress import Progress
from engine.index.home import validate_slug
from engine.signal import IndexOptions, VectorTier


@click.command()
@click.argument("slug")
@click.option("--wait", is_flag=True, help="Wait for another indexer of this repo to finish.")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating.")
@click.option(
    "--vectors",
    type=click.Choice(["full", "fast"]),
    help="Switch the vector tier (see engine index --help); default: what the index used.",
)
@json_option
def reindex(slug: str, wait: bool, full: bool, vectors: VectorTier | None, as_json: bool) -> None:
    """Bring the index of SLUG up to date with its folder (only changed files are redone)."""
    run = Invocation(as_json)
    with errors_reported(as_json):
        from engine.indexing.indexer import Indexer

        progress = Progress()
        options = IndexOptions(home=run.home.root, vectors=vectors)
        indexer = Indexer(run.home, plugins(), options, progress)
        report = indexer.reindex(validate_slug(slug), wait=wait, full=full)
        progress.finish()
        print_report(report, as_json)
