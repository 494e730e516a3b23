"""Parsers, compiled queries and the time-guarded parse, built on first use and cached.

Parsers are cached per thread, since a ``Parser`` must not be shared between threads;
compiled queries are immutable and shared. Nothing here runs at import.

The parser never sees a code point above U+FFFF (see ``scanner_safe``): several grammars'
external scanners pass the lookahead code point to C's ``isdigit``, which indexes a 384-entry
table with it, and an astral code point reads up to 2 MiB past that table and can crash the
process (tree-sitter-markdown 0.5.x with a digit or tree-sitter-bash with ``{`` before it).
"""

from __future__ import annotations

import functools
import re
import threading
import time
from typing import TYPE_CHECKING, cast

from engine.chunking.grammars import grammar_for

if TYPE_CHECKING:
    from tree_sitter import Parser, Point, Query, Tree
    from tree_sitter_language_pack import SupportedLanguage


@functools.cache
def query_for(language: str) -> Query:
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    grammar = grammar_for(language)
    if grammar is None:
        raise KeyError(f"no grammar for {language!r}")
    source = grammar.query
    if grammar.wrappers:
        source += "[" + " ".join(f"({w})" for w in grammar.wrappers) + "] @wrap"
    return Query(get_language(cast("SupportedLanguage", language)), source)


# Error recovery on text that is not really code (a `.cs` file of prose) can parse at
# 40 KB/s, worse than linearly; a parse over budget is abandoned and the caller falls back
# to line windows. Code parses at 1-4 MB/s here, so the budget only stops such files. Small
# files skip the guard: the callback-driven parse costs ~10% more and they cannot be slow.
PARSE_BUDGET_S = 2.0
PARSE_BUDGET_S_PER_MB = 4.0
GUARDED_PARSE_MIN_BYTES = 32_000


def parse(language: str, data: bytes) -> Tree | None:
    """The syntax tree of ``data``, or None when parsing ran over its time budget.

    Byte offsets and rows in the tree are those of ``data``; read names from ``data``, never
    from ``Node.text`` (the parser may have seen placeholders, see ``scanner_safe``).
    """
    parser = parser_for(language)
    data = scanner_safe(data)
    if len(data) < GUARDED_PARSE_MIN_BYTES:
        return parser.parse(data)
    deadline = time.monotonic() + PARSE_BUDGET_S + PARSE_BUDGET_S_PER_MB * len(data) / 1e6

    def read(offset: int, point: Point) -> bytes:
        del point
        return data[offset : offset + 65_536]

    def over_budget(offset: int, has_error: bool) -> bool:
        del offset, has_error
        return time.monotonic() > deadline

    try:
        # A progress callback is only honoured with a read callback, not with bytes.
        return parser.parse(read, progress_callback=over_budget)
    except ValueError:  # "Parsing failed": the callback stopped it
        return None


# A well-formed 4-byte UTF-8 sequence: one code point in U+10000..U+10FFFF.
_ASTRAL = re.compile(
    rb"\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)
_WORD_PLACEHOLDER = "\u00aa\u00aa".encode()  # two letters: still part of an identifier
_SYMBOL_PLACEHOLDER = "\u00a4\u00a4".encode()  # two symbols, as an emoji is


def scanner_safe(data: bytes) -> bytes:
    """``data`` with each astral code point replaced by two Latin-1 characters of its class.

    The placeholder has the same 4 UTF-8 bytes, so every byte offset and row is unchanged,
    and the same role in a token (identifier character or not), so the tree keeps its shape.
    Code points up to U+FFFF stay: their ``isdigit`` read lands within 128 KiB of the table,
    which never crashed here (tree-sitter-language-pack 0.13.0, glibc, C.UTF-8 and C).
    """
    if data.isascii() or _ASTRAL.search(data) is None:
        return data
    return _ASTRAL.sub(_placeholder, data)


def _placeholder(match: re.Match[bytes]) -> bytes:
    char = match.group().decode("utf-8")
    return _WORD_PLACEHOLDER if ("a" + char).isidentifier() else _SYMBOL_PLACEHOLDER


_parsers = threading.local()


def parser_for(language: str) -> Parser:
    cache: dict[str, Parser] | None = getattr(_parsers, "by_language", None)
    if cache is None:
        cache = {}
        _parsers.by_language = cache
    parser = cache.get(language)
    if parser is None:
        from tree_sitter_language_pack import get_parser

        parser = get_parser(cast("SupportedLanguage", language))
        cache[language] = parser
    return parser
