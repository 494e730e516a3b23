"""``engine serve``: the MCP server for coding agents (cli/serve)."""

from __future__ import annotations

from pathlib import Path

import click

from cli.invocation import cluster_options


@click.command()
@click.option(
    "--no-watch",
    is_flag=True,
    help="Do not reindex opened repositories when their files change (results from changed "
    "files are still marked moved or stale; the reindex tool updates on request).",
)
@cluster_options(
    "Answer semanticSearch through the shards of a Ray cluster (HOST:PORT, auto, local)."
)
def serve(
    no_watch: bool, cluster: str | None, cluster_store: Path | None, deadline_ms: float
) -> None:
    """Serve the search tools to coding agents over MCP (JSON-RPC on stdin/stdout).

    Add to an agent's MCP config as: {"command": "engine", "args": ["serve"]}. Logs go to
    stderr; the server stops when stdin closes. Repositories it has opened are reindexed
    once their files have stopped changing for a second, unless --no-watch.

    With --cluster, semanticSearch is answered by the cluster's shards over the shared index
    folder; the other tools read that folder from this machine, and nothing is watched.
    """
    from cli.serve.server import serve as serve_stdio
    from cli.serve.watching import SERVE_WATCH

    if cluster is None:
        serve_stdio(watch=None if no_watch else SERVE_WATCH)
        return
    from cli.commands.query_cluster import cluster_search, shared_store
    from engine.index.home import Home, engine_home

    store = shared_store(cluster_store, Home(engine_home()))
    serve_stdio(store, watch=None, cluster=cluster_search(cluster, store, deadline_ms))
