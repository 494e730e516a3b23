"""``engine index PATH``: register a repository and build (or update) its index."""

from __future__ import annotations

from pathlib import Path

import click

from cli.invocation import Invocation, errors_reported, json_option, plugins
from cli.output import print_report
from cli.progress import Progress
from engine.errors import UsageError
from engine.index.home import slug_from_folder, validate_slug
from engine.signal import (
    EmbedderChoice,
    EmbedderProvider,
    EmbedPrecision,
    IndexOptions,
    ScipIndexerChoice,
    VectorTier,
)


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
@click.option(
    "--embedder",
    type=click.Choice(["local", "openai", "voyage"]),
    help="Who embeds the code for the vector signal: local (default: the model on this "
    "machine), openai (any OpenAI-compatible /embeddings endpoint: OpenAI, Ollama, "
    "text-embeddings-inference) or voyage (Voyage AI, voyage-code-3). openai and voyage SEND "
    "YOUR CODE, and every query, to that service. Default: what the index used, else local.",
)
@click.option("--embedder-url", help="The embeddings API's base URL (…/v1) for --embedder.")
@click.option("--embedder-model", help="The model name to ask --embedder for.")
@click.option(
    "--embedder-key-env",
    metavar="NAME",
    help="The environment variable holding the API key (default: OPENAI_API_KEY or "
    "VOYAGE_API_KEY; a URL of your own needs none unless you name one). Never stored.",
)
@click.option(
    "--embedder-dim",
    type=click.IntRange(1, 65536),
    help="Ask the endpoint for vectors of this size (models that can shorten theirs).",
)
@click.option(
    "--vectors",
    type=click.Choice(["full", "fast"]),
    help="full: MiniLM vectors, embedded in the background (~40 chunks/s here) while static "
    "vectors answer from seconds after chunking; fast: the static vectors only (thousands of "
    "chunks/s; quality on the dev set in eval/RESULTS.md). Default: what the index used, "
    "else full.",
)
@click.option(
    "--cluster",
    "cluster",
    metavar="ADDRESS",
    help="Index many repositories on a Ray cluster (HOST:PORT of its head, 'auto', or "
    "'local' for this machine): PATH is then a file of 'PATH NAME' lines or a folder of "
    "checkouts. Needs pip install 'engine[cluster]' and --cluster-store.",
)
@click.option(
    "--cluster-store",
    type=click.Path(path_type=Path, file_okay=False),
    help="With --cluster: the shared folder every node reaches, where the indexes are "
    "published (laid out like $ENGINE_HOME: search it with ENGINE_HOME=DIR).",
)
@click.option(
    "--actors",
    type=click.IntRange(1, 4096),
    default=2,
    show_default=True,
    help="With --cluster: embedding actors (one model copy and one CPU each).",
)
@click.option(
    "--repos-per-round",
    type=click.IntRange(1),
    help="With --cluster: repositories per round (one embedding job each; default all): "
    "bounds the texts the coordinator holds at once.",
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
    vectors: VectorTier | None,
    embedder: EmbedderProvider | None,
    embedder_url: str | None,
    embedder_model: str | None,
    embedder_key_env: str | None,
    embedder_dim: int | None,
    cluster: str | None,
    cluster_store: Path | None,
    actors: int,
    repos_per_round: int | None,
    as_json: bool,
) -> None:
    """Register the repository at PATH and index it (incrementally when already indexed).

    With --cluster, index every repository PATH lists on a Ray cluster instead."""
    run = Invocation(as_json)
    with errors_reported(as_json):
        from engine.indexing.indexer import Indexer

        if cluster_store is not None and cluster is None:
            raise UsageError("--cluster-store goes with --cluster")
        options = IndexOptions(
            home=run.home.root,
            model=str(model.resolve()) if model else None,
            scip_file=scip_file.resolve() if scip_file else None,
            scip_indexer=scip_indexer,
            embed_precision=embed_precision,
            document_tokens=document_tokens,
            vectors=vectors,
            embedder=_embedder_choice(
                embedder, embedder_url, embedder_model, embedder_key_env, embedder_dim
            ),
        )
        if cluster is not None:
            from cli.commands.index_cluster import check_cluster_options

            check_cluster_options(options, slug=slug, wait=wait)
        registered = plugins()
        for plugin in registered.values():  # a bad --model or --scip, before anything is written
            if plugin.check_options is not None:
                plugin.check_options(options)
        if cluster is not None:
            from cli.commands.index_cluster import index_on_cluster

            index_on_cluster(
                cluster, path, cluster_store, options, as_json, actors, repos_per_round
            )
            return
        name = validate_slug(slug) if slug else slug_from_folder(path.resolve())
        progress = Progress()
        # Before the first text is sent (the builder's report repeats it in --json).
        shown = remote_notice(options)
        indexer = Indexer(run.home, registered, options, progress)
        report = indexer.index(name, path, wait=wait, full=full)
        progress.finish()
        print_report(report, as_json, shown=shown)


def _embedder_choice(
    provider: EmbedderProvider | None,
    url: str | None,
    model: str | None,
    key_env: str | None,
    dim: int | None,
) -> EmbedderChoice | None:
    if provider is None:
        if url or model or key_env or dim:
            raise UsageError("--embedder-url, -model, -key-env and -dim go with --embedder")
        return None
    if provider == "local" and (url or model or key_env or dim):
        raise UsageError("--embedder local takes no --embedder-url, -model, -key-env or -dim")
    return EmbedderChoice(provider, url=url, model=model, key_env=key_env, dim=dim)


def remote_notice(options: IndexOptions) -> list[str]:
    """Print, on stderr, that code is about to leave the machine; the lines printed."""
    choice = options.embedder
    if choice is None or choice.provider == "local":
        return []
    from signals.vector.remote_spec import leaves_machine_warning, spec_from_choice

    warning = leaves_machine_warning(spec_from_choice(choice))
    click.secho(f"warning: {warning}", fg="yellow", err=True)
    return [warning]
