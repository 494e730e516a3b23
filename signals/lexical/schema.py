"""The Tantivy schema of the lexical signal and how a chunk becomes a document.

Every text field is tokenised in Python (engine.tokens) and handed to Tantivy's built-in
``whitespace`` tokenizer, so nothing depends on custom analyzers, which Tantivy does not save
with the index and which its regex engine (no look-around) cannot split acronyms with.
"""

from __future__ import annotations

import re
from typing import Any

from engine.tokens import identifier_parts, index_text
from engine.types import Chunk

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


def path_terms(path: str) -> list[str]:
    return [p for segment in _PATH_SEGMENTS.findall(path) for p in identifier_parts(segment)]


def to_document(chunk: Chunk) -> Any:
    import tantivy

    body = chunk.text
    if chunk.signature and chunk.signature not in body:
        body = f"{chunk.signature}\n{body}"  # a later window of a long definition
    whole, parts = index_text(body)
    name_whole = [n.lower() for n in {chunk.name, chunk.qualified_name} if n]
    name_whole += [p.lower() for p in chunk.qualified_name.split(".") if p]
    doc = tantivy.Document()
    doc.add_text(ID, str(chunk.id))
    doc.add_unsigned(CHUNK_ID, chunk.id)
    doc.add_text(IDENT, whole)
    doc.add_text(PARTS, parts)
    doc.add_text(NAME, " ".join(name_whole))
    doc.add_text(NAME_PARTS, " ".join(identifier_parts(chunk.name)))
    doc.add_text(PATH, " ".join(path_terms(chunk.path)))
    return doc
