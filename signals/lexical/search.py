"""Searches the lexical index: analysed query terms OR-ed together with per-field boosts.

User text never reaches Tantivy's query parser, so no input can raise a syntax error.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import IndexCorrupt
from engine.terms import analyze_query
from engine.types import LEXICAL, Hit, Query
from signals.lexical.schema import CHUNK_ID, IDENT, NAME, NAME_PARTS, PARTS, PATH

# Field boosts: a term naming the chunk's own definition counts most, then whole identifiers
# in the code, then identifier parts and path parts.
WHOLE_BOOSTS: Mapping[str, float] = {NAME: 4.0, IDENT: 1.5}
PART_BOOSTS: Mapping[str, float] = {NAME_PARTS: 2.5, PARTS: 1.0, PATH: 1.0}
PHRASE_BOOST = 3.0
MAX_TERMS = 256  # a pasted log can hold thousands of tokens; the first ones say the most


class LexicalSignal:
    name = LEXICAL
    warning = ""

    def __init__(self, index: Any) -> None:
        self._index = index
        self._schema = index.schema
        self._searcher = index.searcher()

    @classmethod
    def open(cls, directory: Path) -> LexicalSignal:
        import tantivy

        try:
            # Opening the searcher opens every segment's files: a missing, emptied or
            # truncated one fails here (a scribble inside one only when a search reads it).
            return cls(tantivy.Index.open(str(directory)))
        except (ValueError, OSError) as exc:
            raise IndexCorrupt(f"lexical index at {directory} is unreadable ({exc})") from exc

    def build_query(self, text: str) -> Any | None:
        import tantivy

        analyzed = analyze_query(text)
        Q, Should = tantivy.Query, tantivy.Occur.Should
        clauses: list[tuple[Any, Any]] = []
        for term in analyzed.whole[:MAX_TERMS]:
            for field, boost in WHOLE_BOOSTS.items():
                clauses.append(
                    (Should, Q.boost_query(Q.term_query(self._schema, field, term), boost))
                )
        for term in analyzed.parts[:MAX_TERMS]:
            for field, boost in PART_BOOSTS.items():
                clauses.append(
                    (Should, Q.boost_query(Q.term_query(self._schema, field, term), boost))
                )
        for phrase in analyzed.phrases:
            if len(phrase) > 1:
                clauses.append(
                    (
                        Should,
                        Q.boost_query(
                            Q.phrase_query(self._schema, PARTS, list(phrase)), PHRASE_BOOST
                        ),
                    )
                )
        if not clauses:
            return None
        return Q.boolean_query(clauses)

    def search(self, query: Query, limit: int) -> list[Hit]:
        built = self.build_query(query.text)
        if built is None:
            return []
        found = self._searcher.search(built, limit).hits
        hits = []
        for score, address in found:
            doc = self._searcher.doc(address)
            hits.append(Hit(chunk_id=int(doc[CHUNK_ID][0]), score=float(score)))
        return hits
