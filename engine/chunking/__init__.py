"""Chunking: cut one source file into chunks and find its definitions (tree-sitter).

- ``chunker``: the entry point (``chunk_file``) and the chunker version.
- ``parsing``: parsers and compiled queries, built on first use; the time-guarded parse.
- ``grammars``: per-language knowledge of which nodes are definitions and how they are named.
- ``naming``: how a definition node is named (identifier, written qualifiers, body).
- ``definitions``: the definitions of a parsed file (names, kinds, nesting, ranges, docs).
- ``layout``: the rules that turn definitions into chunks.
- ``windows``: long line ranges cut into windows, at statement starts where possible.
- ``markdown``: Markdown chunks, one per heading section.
"""
