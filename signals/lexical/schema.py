"""The Tantivy schema of the lexical signal and how a chunk becomes a document.

Every text field is tokenised in Python (engine.terms) and handed to Tantivy's built-in
``whitespace`` tokenizer, so nothing depends on custom analyzers, which Tantivy does not save
with the index and which its regex engine (no look-around) cannot split acronyms with. The
tokenising (``analyze``) runs in the chunking worker processes during indexing; the builder
only turns its strings into documents.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from engine.terms import identifier_parts, index_text
from engine.types import Chunk, ChunkDraft

SCHEMA_VERSION = 1

ID = "id"  # the chunk id as a raw string: tantivy cannot delete by an unsigned-field term
CHUNK_ID = "chunk_id"
IDENT = "ident"  # whole identifiers of signature, docstring and code, lower-cased
PARTS = "parts"  # identifier parts (and plain words) in text order, for terms and phrases
NAME = "name"  # the chunk's own name and qualified name, whole
NAME_PARTS = "name_parts"  # parts of the name
PATH = "path"  # parts of the file path

_PATH_SEGMENTS = re.compile(r"[^/\\._-]+")


def build_schema() -> Any:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field(ID, tokenizer_name="raw")
    sb.add_unsigned_field(CHUNK_ID, stored=True, indexed=False)
    for field in (IDENT, PARTS, NAME, NAME_PARTS, PATH):
        sb.add_text_field(field, tokenizer_name="whitespace")
    return sb.build()


DocumentText = tuple[str, str, str, str, str]
"""A chunk's terms for the IDENT, PARTS, NAME, NAME_PARTS and PATH fields, each joined by
spaces: everything in its document but the id."""


def path_terms(path: str) -> list[str]:
    return [p for segment in _PATH_SEGMENTS.findall(path) for p in identifier_parts(segment)]


def document_text(chunk: Chunk | ChunkDraft, path_text: str | None = None) -> DocumentText:
    """The terms of ``chunk``'s fields; ``path_text`` is ``path_terms`` of its path, joined."""
    body = chunk.text
    if chunk.signature and chunk.signature not in body:
        body = f"{chunk.signature}\n{body}"  # a later window of a long definition
    whole, parts = index_text(body)
    name_whole = [n.lower() for n in dict.fromkeys((chunk.name, chunk.qualified_name)) if n]
    name_whole += [p.lower() for p in chunk.qualified_name.split(".") if p]
    if path_text is None:
        path_text = " ".join(path_terms(chunk.path))
    return whole, parts, " ".join(name_whole), " ".join(identifier_parts(chunk.name)), path_text


def analyze(drafts: Sequence[ChunkDraft]) -> list[DocumentText]:
    """``document_text`` of one file's chunks (the signal's ``ChunkAnalyzer``)."""
    path_texts: dict[str, str] = {}
    texts = []
    for draft in drafts:
        path_text = path_texts.get(draft.path)
        if path_text is None:
            path_text = path_texts[draft.path] = " ".join(path_terms(draft.path))
        texts.append(document_text(draft, path_text))
    return texts


def to_document(chunk: Chunk, text: DocumentText | None = None) -> Any:
    """The Tantivy document of ``chunk``; ``text`` is its ``document_text`` if known."""
    import tantivy

    whole, parts, name, name_parts, path = text if text is not None else document_text(chunk)
    doc = tantivy.Document()
    doc.add_text(ID, str(chunk.id))
    doc.add_unsigned(CHUNK_ID, chunk.id)
    doc.add_text(IDENT, whole)
    doc.add_text(PARTS, parts)
    doc.add_text(NAME, name)
    doc.add_text(NAME_PARTS, name_parts)
    doc.add_text(PATH, path)
    return doc
