"""``engine serve``: the MCP server that gives coding agents the search tools.

- ``server``: the protocol (tools/list, tools/call), threads, start and shutdown.
- ``tools``: what each agent tool does, its typed arguments, and the tool registry.
- ``indexes``: warm open indexes, swapped when a reindex publishes.
- ``reindex``: reindex jobs in child processes (``python -m cli.serve.reindex SLUG``).
- ``transport``: stdin/stdout as JSON-RPC lines, with malformed input rejected.
"""
