"""``engine index --cluster ADDRESS LIST --cluster-store DIR``: many repositories on Ray.

Imported only when ``--cluster`` is given, so a local ``engine index`` never imports Ray.
The wiring a cluster build needs from the signals (the registry's plugins and the vector
signal's embedding side) is made here, the composition root, and handed to engine.cluster.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import click

from cli.invocation import EXIT_ERROR, plugins
from cli.output import dumps
from cli.progress import Progress
from engine.errors import EngineError, UsageError
from engine.signal import IndexOptions


def check_cluster_options(options: IndexOptions, *, slug: str | None, wait: bool) -> None:
    """What a cluster build cannot do yet, said before anything starts."""
    refused = []
    if slug:
        refused.append("--name (names come from the list: 'PATH NAME' lines)")
    if wait:
        refused.append("--wait (one coordinator per store; a second one is refused)")
    if options.scip_file is not None:
        refused.append("--scip (one SCIP file cannot serve many repositories)")
    if options.vectors == "fast":
        refused.append("--vectors fast (the cluster builds the full tier)")
    if options.embedder is not None and options.embedder.provider != "local":
        refused.append("--embedder openai/voyage (the cluster embeds with the local model)")
    if refused:
        raise UsageError(f"--cluster does not take {'; '.join(refused)}")


def index_on_cluster(
    address: str,
    source: Path,
    store: Path | None,
    options: IndexOptions,
    as_json: bool,
    actors: int,
    repos_per_round: int | None,
) -> None:
    from engine.cluster.connect import connect
    from engine.cluster.indexing_repos import read_repo_list

    if store is None:
        raise UsageError(
            "--cluster needs --cluster-store DIR: a folder every node can reach (a shared "
            "path), where the indexes are published"
        )
    repos = read_repo_list(source)
    connect(address)
    from engine.cluster.indexing import index_on_cluster as run
    from signals.vector.cluster_embedding import ClusterVectorEmbedding

    progress = Progress()
    with ClusterVectorEmbedding(options) as side:
        report = run(
            repos,
            store.resolve(),
            plugins(),
            options,
            side,
            actors=actors,
            repos_per_round=repos_per_round,
            progress=progress,
        )
    progress.finish()
    failed = "; ".join(f"{r.slug}: {r.error}" for r in report.failed)
    if as_json:
        data: dict[str, Any] = dataclasses.asdict(report)
        if failed:
            data["error"] = failed
        click.echo(dumps(data))
        if failed:
            sys.exit(EXIT_ERROR)
        return
    else:
        click.echo(
            f"indexed {len(report.repos) - len(report.failed)} of {len(report.repos)} "
            f"repositories into {report.store} in {report.rounds} round(s)"
        )
        click.echo(
            f"  texts: {report.texts} unique, {report.cached} cached, {report.embedded} embedded"
        )
        for stats in report.embedding:
            if stats.batches:
                click.echo(
                    f"  embedding: {stats.texts} texts in {stats.batches} batches on "
                    f"{stats.actors} actors, {stats.seconds:.1f} s (pool ready after "
                    f"{stats.pool_start_s:.1f} s)"
                )
        for repo in report.repos:
            where = repo.generation or "not published"
            click.echo(f"  {repo.slug}: {repo.files} files, {repo.chunks} chunks, {where}")
    if failed:
        raise EngineError(f"{failed} — the other repositories were published")
