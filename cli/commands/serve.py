"""``engine serve``: the MCP server for coding agents (cli/serve)."""

from __future__ import annotations

import click


@click.command()
@click.option(
    "--no-watch",
    is_flag=True,
    help="Do not reindex opened repositories when their files change (results from changed "
    "files are still marked moved or stale; the reindex tool updates on request).",
)
def serve(no_watch: bool) -> None:
    """Serve the search tools to coding agents over MCP (JSON-RPC on stdin/stdout).

    Add to an agent's MCP config as: {"command": "engine", "args": ["serve"]}. Logs go to
    stderr; the server stops when stdin closes. Repositories it has opened are reindexed
    once their files have stopped changing for a second, unless --no-watch.
    """
    from cli.serve.server import serve as serve_stdio
    from cli.serve.watching import SERVE_WATCH

    serve_stdio(watch=None if no_watch else SERVE_WATCH)
