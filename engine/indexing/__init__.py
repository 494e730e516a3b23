"""Indexing: from a folder on disk to a published generation, and keeping it current.

- ``walk``: which files are worth indexing, and why every other path was skipped.
- ``source_file``: reading one source file (its bytes once, their hash, decoded text).
- ``parallel_chunking`` + ``workerpool``: chunk files in worker processes a parser crash
  cannot take down.
- ``indexer``: the build (walk, read, chunk, store, every signal, publish).
- ``streaming``: feed a first build's chunks to the signals while the files are chunked.
- ``git_changes``: what git knows changed since the indexed commit.
- ``freshness`` + ``status``: how stale an index is against the disk, and what it holds.
- ``watch``: poll, let a burst settle, update once.
"""
