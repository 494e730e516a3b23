"""Speed benchmarks on real corpora (``make bench``, ``make bench-serve``); BENCHMARKS.md
records what they printed, on what, and when.

- ``corpus``: indexing and search of the interpreter's stdlib (lexical and symbol signals).
- ``vector``: the vector signal's embedding throughput, warm search, memory and cold start.
- ``serve``: warm ``semanticSearch`` latency through a real MCP client over stdio.
"""
