"""Cutting one file into chunks and finding its definitions: the chunker's entry point.

``chunk_file`` picks the strategy by language: syntax-aware chunks (one per function,
method and class-like definition, module code between; rules in chunking_layout) for the
languages in ``SYNTAX_LANGUAGES``, heading sections for markdown, and line windows for
every other text file. A file with a line longer than ``MAX_LINE_CHARS`` (minified or
generated code) gets line windows too: syntax chunks of it would each repeat that line. So
does a file that does not parse within its time budget (chunking_parsing.parse) or whose
tree would make the definitions query pathologically slow (chunking_syntax.
too_costly_to_query); it then has no definitions.

Lines are numbered as an editor shows them: ``\\r\\n``, ``\\r`` and ``\\n`` each end a line,
and a final line ending opens no new line. Every non-blank line of the file lies in at
least one chunk, and a chunk's ``text`` is exactly its lines joined with ``\\n``.
"""

from __future__ import annotations

from engine.chunking.definitions import find_definitions, too_costly_to_query
from engine.chunking.grammars import Grammar, grammar_for
from engine.chunking.layout import layout_chunks
from engine.chunking.markdown import markdown_chunks
from engine.chunking.parsing import parse
from engine.chunking.rust_macros import macro_items
from engine.chunking.windows import text_windows
from engine.types import Definition, FileChunks

__all__ = ["CHUNKER_VERSION", "MAX_LINE_CHARS", "chunk_file", "split_lines"]

# Bump whenever the chunks produced for the same input change: stored chunks are rebuilt.
# 2: a member's chunk ends at its own last line (issue 17); 3: Rust items inside item-level
# macro bodies and `macro_rules!` definitions (issue 18); 4: Haskell declarations (issue 18);
# 5: Zig declarations, and comments that end after the next line's indentation (issue 18)
CHUNKER_VERSION = 5

# A line longer than this marks minified or generated code: the file gets line windows.
MAX_LINE_CHARS = 10_000


def chunk_file(path: str, text: str, language: str | None) -> FileChunks:
    """Chunks and definitions of one file.

    ``path`` is repository-relative with ``/``; ``text`` is the decoded file; ``language``
    is what ``engine.languages.detect_language`` said (None: chunked as plain text).
    """
    normalised = _normalise_newlines(text)
    lines = _lines_of(normalised)
    if not any(line.strip() for line in lines):
        return FileChunks([], [])
    if language is not None and max(map(len, lines)) <= MAX_LINE_CHARS:
        grammar = grammar_for(language)
        if grammar is not None:
            return _syntax_chunks(path, language, grammar, lines, _encode(normalised))
        if language == "markdown":
            return FileChunks(markdown_chunks(path, lines, _encode(normalised)), [])
    return FileChunks(text_windows(path, language or "text", lines), [])


def _syntax_chunks(
    path: str, language: str, grammar: Grammar, lines: list[str], data: bytes
) -> FileChunks:
    tree = parse(language, data)
    if tree is None or too_costly_to_query(tree):
        return FileChunks(text_windows(path, language, lines), [])
    found = find_definitions(tree, data, grammar, len(lines))
    if language == "rust":
        found += macro_items(tree.root_node, data, grammar, len(lines), offset=len(found))
    chunks = layout_chunks(path, language, lines, found, tree.root_node)
    definitions = [
        Definition(
            path,
            language,
            d.kind,
            d.name,
            d.qualified_name,
            d.name_line,
            d.name_start_col,
            d.name_end_col,
            d.start_line,
            d.end_line,
        )
        for d in found
    ]
    return FileChunks(chunks, definitions)


def split_lines(text: str) -> list[str]:
    """The file's lines as an editor numbers them, without their line endings."""
    return _lines_of(_normalise_newlines(text))


def _normalise_newlines(text: str) -> str:
    if "\r" in text:
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _lines_of(normalised: str) -> list[str]:
    lines = normalised.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final line ending ends the last line; it starts no new one
    return lines


def _encode(normalised: str) -> bytes:
    """UTF-8 for tree-sitter; lone surrogates (undecodable bytes) must not raise."""
    try:
        return normalised.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        # surrogateescape restores the file's original bytes, keeping byte columns right.
        return normalised.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return normalised.encode("utf-8", "replace")
