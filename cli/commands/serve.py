"""``engine serve``: the MCP server for coding agents (cli/serve)."""

from __future__ import annotations

import click


@click.command()
def serve() -> None:
    """Serve the search tools to coding agents over MCP (JSON-RPC on stdin/stdout).

    Add to an agent's MCP config as: {"command": "engine", "args": ["serve"]}. Logs go to
    stderr; the server stops when stdin closes.
    """
    from cli.serve.server import serve as serve_stdio

    serve_stdio()
