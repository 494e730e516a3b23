"""The text embedded for a chunk: what matters first, because the model stops at 256 pieces.

Format (version ``DOC_FORMAT``; change the version whenever the output changes, which makes
the next ``engine index`` re-embed every chunk)::

    <kind> <qualified name> (<name split into words, when camelCase>)
    <path>
    <signature>
    <docstring>
    <body, without the signature and docstring already given above>

MiniLM reads at most 256 word pieces and a 40-line function is ~370, so the tail of a body
is often cut; the header puts the name, place and contract of the code inside the window.
With ``max_parts > 1`` a long body also gets extra windows, each led by a short header;
the signal scores a chunk by its best part.
"""

from __future__ import annotations

import re

from engine.types import Chunk

DOC_FORMAT = 1

# ~3.9 characters per MiniLM word piece on code (1,458 chars ≈ 374 pieces, STACK.md §2):
# the first part holds about this much text before truncation, later windows this much body.
FIRST_PART_CHARS = 950
WINDOW_CHARS = 850
WINDOW_OVERLAP_LINES = 2
MAX_PARTS = 16  # faiss ids reserve 4 bits for the part number (see faiss_index.py)

_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# What may separate two words of a docstring inside the source: whitespace and the comment
# punctuation of doc comments (`#`, `//`, `///`, ` * ` of `/** */`).
_DOC_GAP = r"[\s*#/]+"
_ONLY_PUNCTUATION = re.compile(r"^[\s\"'`*#/!-]*$")


def document_parts(chunk: Chunk, max_parts: int = 1, *, include_path: bool = True) -> list[str]:
    """The texts to embed for ``chunk``: one, or up to ``max_parts`` for a long body.

    ``include_path=False`` leaves the path out, so a moved file's chunks keep their cache
    entries, at the price of the path's words no longer informing the vector.
    """
    header = _header(chunk, include_path)
    body = _body(chunk)
    first = f"{header}\n{body}" if body else header
    if max_parts <= 1 or len(first) <= FIRST_PART_CHARS:
        return [first]
    short = _short_header(chunk, include_path)
    lines = body.split("\n")
    # Later windows start where the first part's text budget runs out.
    budget = max(FIRST_PART_CHARS - len(header) - 1, 0)
    start = _line_at_offset(lines, budget)
    parts = [first]
    while start < len(lines) and len(parts) < min(max_parts, MAX_PARTS):
        end = start
        size = 0
        while end < len(lines) and (size == 0 or size + len(lines[end]) + 1 <= WINDOW_CHARS):
            size += len(lines[end]) + 1
            end += 1
        window = "\n".join(lines[start:end]).strip()
        if window:
            parts.append(f"{short}\n{window}")
        if end >= len(lines):
            break
        start = max(end - WINDOW_OVERLAP_LINES, start + 1)
    return parts


def _header(chunk: Chunk, include_path: bool) -> str:
    title = chunk.qualified_name or chunk.name
    words = _split_words(chunk.name)
    first = f"{chunk.kind} {title}" if title else chunk.kind
    if words:
        first += f" ({words})"
    lines = [first, chunk.path] if include_path else [first]
    if chunk.signature.strip():
        lines.append(chunk.signature.strip())
    if chunk.docstring.strip():
        lines.append(chunk.docstring.strip())
    return "\n".join(lines)


def _short_header(chunk: Chunk, include_path: bool) -> str:
    title = chunk.qualified_name or chunk.name
    first = f"{chunk.kind} {title}" if title else chunk.kind
    return f"{first}\n{chunk.path}" if include_path else first


def _split_words(name: str) -> str:
    """``parseHTTPRequest`` -> ``parse http request``; "" when splitting adds nothing.

    The uncased word-piece tokenizer already splits snake_case at underscores, but it sees
    ``parsehttprequest`` as one unknown word.
    """
    if not _CAMEL.search(name):
        return ""
    return " ".join(w.lower() for w in _WORD.findall(name))


def _body(chunk: Chunk) -> str:
    body = chunk.text
    signature = chunk.signature.strip()
    if signature:
        body = body.replace(signature, "", 1)
    docstring = chunk.docstring.strip()
    if docstring:
        body = _remove_docstring(body, docstring)
    # Drop what the removals left behind (empty quotes, bare comment markers) and blank
    # lines: they cost no word pieces but would skew the character budgets of the windows.
    lines = (line.rstrip() for line in body.split("\n"))
    return "\n".join(line for line in lines if not _ONLY_PUNCTUATION.match(line))


def _remove_docstring(body: str, docstring: str) -> str:
    if docstring in body:
        return body.replace(docstring, "", 1)
    words = docstring.split()
    # The chunker may have dedented the docstring or stripped comment markers: match its
    # words with any whitespace/comment punctuation between them.
    pattern = _DOC_GAP.join(re.escape(w) for w in words)
    return re.sub(pattern, "", body, count=1)


def _line_at_offset(lines: list[str], offset: int) -> int:
    size = 0
    for index, line in enumerate(lines):
        size += len(line) + 1
        if size > offset:
            return index
    return len(lines)
