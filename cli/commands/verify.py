"""``engine verify SLUG``: a sample of indexed chunks compared with the files on disk."""

from __future__ import annotations

from pathlib import Path

import click

from cli.invocation import errors_reported
from cli.output import dumps, printable
from engine.index.home import Home, engine_home, validate_slug


@click.command(name="verify")
@click.argument("slug")
@click.option(
    "--sample",
    default=200,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    help="How many indexed chunks to compare with the files on disk.",
)
@click.option("--seed", type=int, help="Sample the same chunks every time.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def verify(slug: str, sample: int, seed: int | None, as_json: bool) -> None:
    """Check a sample of SLUG's indexed chunks against the files on disk."""
    with errors_reported(as_json, interrupted=None):
        from engine.index.opening import load_manifest
        from engine.index.store import STORE_FILE, ChunkStore
        from engine.index.verify import verify_chunks

        entry = Home(engine_home()).get(validate_slug(slug))
        generation, _ = load_manifest(entry)
        store = ChunkStore.open_readonly(generation / STORE_FILE)
        try:
            report = verify_chunks(Path(entry.root), store, sample, seed=seed)
        finally:
            store.close()
        data = report.as_json(slug)
        if as_json:
            click.echo(dumps(data))
            return
        click.echo(
            f"{slug}: {report.stale} of {report.sampled} sampled chunks are stale "
            f"({report.stale_share:.1%}) across {report.files} files"
        )
        for item in report.examples:
            click.echo(f"  {printable(item.path)}:{item.start_line}-{item.end_line}  {item.reason}")
        if report.stale:
            # The fix JSON gives: reindex trusts size and mtime, which is what missed these.
            lead = f"more than {report.threshold:.0%} stale" if report.reindex_suggested else ""
            lead = lead or "stale chunks found"
            click.secho(f"  {lead} — run {printable(report.fix(slug))}", fg="yellow")
