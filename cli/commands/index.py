"""``engine index PATH``: register a repository and build (or update) its index."""

from __future__ import annotations

from pathlib import Path

import click

from cli.invocation import Invocation, errors_reported, json_option, plugins
from cli.output import print_report
from cli.progress import Progress
from engine.index.home import slug_from_folder, validate_slug
from engine.signal import EmbedPrecision, IndexOptions, ScipIndexerChoice


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", "slug", help="Repository name (default: the folder name).")
@click.option("--wait", is_flag=True, help="Wait for another indexer of this repo to finish.")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating.")
@click.option(
    "--model",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="A local sentence-transformers model folder (default: the bundled MiniLM).",
)
@click.option(
    "--scip",
    "scip_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="A SCIP index (index.scip) to take symbols from.",
)
@click.option(
    "--scip-indexer",
    type=click.Choice(["auto", "none"]),
    default="none",
    show_default=True,
    help="auto: run the installed real SCIP indexers (scip-python, scip-typescript).",
)
@click.option(
    "--embed-precision",
    type=click.Choice(["fp32", "mixed", "int8"]),
    help="fp32: the model's own weights; mixed: int8 weights where each layer's feed-forward "
    "block widens (faster, same ranking quality); int8: int8 weights throughout (faster "
    "still, lower quality; see eval/RESULTS.md). Default: what the index used, else mixed; "
    "an existing index is re-embedded (the cache keeps what it can).",
)
@click.option(
    "--document-tokens",
    type=click.IntRange(16, 512),
    help="Word pieces of each chunk's text the embedder reads (default: what the index used, "
    "else the measured default); an existing index is re-embedded.",
)
@json_option
def index(
    path: Path,
    slug: str | None,
    wait: bool,
    full: bool,
    model: Path | None,
    scip_file: Path | None,
    scip_indexer: ScipIndexerChoice,
    embed_precision: EmbedPrecision | None,
    document_tokens: int | None,
    as_json: bool,
) -> None:
    """Register the repository at PATH and index it (incrementally when already indexed)."""
    run = Invocation(as_json)
    with errors_reported(as_json):
        from engine.indexing.indexer import Indexer

        name = validate_slug(slug) if slug else slug_from_folder(path.resolve())
        progress = Progress()
        options = IndexOptions(
            home=run.home.root,
            model=str(model.resolve()) if model else None,
            scip_file=scip_file.resolve() if scip_file else None,
            scip_indexer=scip_indexer,
            embed_precision=embed_precision,
            document_tokens=document_tokens,
        )
        registered = plugins()
        for plugin in registered.values():  # a bad --model or --scip, before anything is written
            if plugin.check_options is not None:
                plugin.check_options(options)
        indexer = Indexer(run.home, registered, options, progress)
        report = indexer.index(name, path, wait=wait, full=full)
        progress.finish()
        print_report(report, as_json)
