"""The ``engine`` commands, one module each; ``cli/main.py`` adds them to the group.

- ``index``, ``reindex``: build or update an index (engine/indexing).
- ``status``, ``repos``, ``remove``, ``verify``: what is indexed, and how fresh it is.
- ``query``: search; ``defs``/``refs`` (``lookup``): the symbol table; ``context``: code
  plus the definitions it uses, in a token budget.
- ``serve``: the MCP server (cli/serve); ``watch``: keep one index current; ``eval``:
  retrieval quality on a labeled dataset.
"""
