"""The index on disk: where it lives, its immutable generations, and opening one to search.

- ``home``: ``$ENGINE_HOME``, repository slugs, the registry of indexed repositories.
- ``generations``: immutable generations and the atomic ``CURRENT`` pointer that publishes them.
- ``manifest``: the typed manifest of a generation (``Manifest``, ``SignalState``), read and
  written there and nowhere else.
- ``store``: the chunk store (SQLite: files, chunks, definitions), one per generation.
- ``opening``: open a repository's published generation for searching.
- ``verify``: spot-check indexed chunks against the files on disk.
- ``write_failures``: what to tell the user when a write is refused (full disk, read-only).
"""
