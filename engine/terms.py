"""Code-aware tokenisation shared by indexing and querying: identifiers, their parts, stopwords.

One function family serves documents and queries, so that a query term and the code it should
match are always cut the same way. Everything is lower-cased.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# An identifier-like token: a letter, "_" or "$" followed by those or digits, or a run of
# digits; that is, "[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+". Written to begin with one character
# class (a look-behind tells a digit run from a name) because the regex engine then skips
# every other character in a tight C loop instead of trying the alternation at each one:
# ~30% fewer instructions for the same matches, on the indexing hot path.
_IDENT = re.compile(r"[A-Za-z0-9_$](?:(?<=[0-9])[0-9]*|[A-Za-z0-9_$]*)")
# One identifier part: an acronym not followed by a lower-case letter ("HTTP" in
# "HTTPRequest"), a capitalised or lower-case word, or a run of digits.
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_QUOTED = re.compile(r'"([^"]+)"')

MAX_TOKEN_CHARS = 64

# Common English words that carry no signal in a question about code. Kept small on purpose:
# words such as "get", "set", "new", "list", "type" or "file" name real code and stay.
STOPWORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto as is are was
    were be been being do does did doing done have has had having i me my we our you your he she
    it its they them their this that these those there here what which who whom whose where when
    why how can could should would will shall may might must not no nor so than too very just
    about above below over under again further once all any both each few more most other some
    such only own same up down out off via per also like want need find show look looking code
    function method class implementation implemented handles handled handling thing things way
    ways something someone somewhere""".split()
)


@lru_cache(maxsize=200_000)
def identifier_parts(identifier: str) -> tuple[str, ...]:
    """Split an identifier into lower-case parts: camelCase, PascalCase, snake_case, acronyms.

    ``parseHTTPRequest_body2`` -> ``("parse", "http", "request", "body", "2")``.
    """
    return tuple(p.lower() for p in _PART.findall(identifier))


def identifiers(text: str) -> list[str]:
    """Identifier-like tokens of ``text``, in order, as written (not lower-cased)."""
    return [t for t in _IDENT.findall(text) if len(t) <= MAX_TOKEN_CHARS]


def index_terms(text: str) -> tuple[list[str], list[str]]:
    """Terms to index for a piece of code: (whole identifiers, identifier parts), in order.

    Whole identifiers are lower-cased; parts are what ``identifier_parts`` gives for each
    identifier, in text order, so that phrase positions in the parts field follow the text.
    """
    whole, parts = index_text(text)
    return whole.split(), parts.split()


class _PartsText(dict[str, str]):
    """identifier -> ``identifier_parts`` joined by spaces, plus a trailing space; "" for an
    identifier without parts (``_``).

    A plain dict read by ``dict.__getitem__`` from ``map``: no Python call per identifier
    found again, and about half the cost of an ``lru_cache`` lookup, which also reorders
    its list on every hit. Emptied when full rather than evicting one entry at a time.
    """

    def __missing__(self, identifier: str) -> str:
        if len(self) >= _PARTS_TEXT_ENTRIES:
            self.clear()
        parts = _PART.findall(identifier)
        text = self[identifier] = " ".join(parts).lower() + " " if parts else ""
        return text


_PARTS_TEXT_ENTRIES = 65_536
_PARTS_TEXT = _PartsText()


def index_text(text: str) -> tuple[str, str]:
    """``index_terms`` joined by spaces: one regex pass for the identifiers, parts per
    identifier from a cache.

    A part never spans two identifiers, so the parts of each identifier in turn are the parts
    of the whole text; most identifiers recur (``self``, ``return``), so looking their parts
    up costs about half of a second regex pass over the text, on the indexing hot path.
    """
    found = _IDENT.findall(text)
    # Each cached entry ends with a space (or is "" for an identifier without parts), so one
    # join without a separator gives the parts text plus one trailing space.
    return " ".join(found).lower(), "".join(map(_PARTS_TEXT.__getitem__, found))[:-1]


def looks_like_identifier(token: str) -> bool:
    """True for tokens written the way code names things (snake_case, camelCase, dotted)."""
    if "_" in token or "." in token.strip("."):
        return True
    return any(c.isupper() for c in token[1:]) and any(c.islower() for c in token)


@dataclass(frozen=True, slots=True)
class AnalyzedQuery:
    """A query cut into terms: whole identifiers, parts, and quoted phrases (as part lists)."""

    whole: tuple[str, ...]  # lower-cased identifiers worth matching whole
    parts: tuple[str, ...]  # lower-cased parts, stopwords removed, de-duplicated, in order
    phrases: tuple[tuple[str, ...], ...]  # each quoted phrase as its parts
    identifiers: tuple[str, ...]  # tokens that look like code names, as written


def analyze_query(text: str) -> AnalyzedQuery:
    """Cut free text (a question, a symbol, a stack trace) into search terms.

    Stopwords are dropped unless the query has nothing else; an identifier that is itself a
    stopword ("get", "set" are not stopwords, "is" is) is kept when written like code.
    """
    phrases = tuple(
        p for p in (tuple(index_terms(m)[1]) for m in _QUOTED.findall(text)) if len(p) > 0
    )
    raw = identifiers(text)
    whole: list[str] = []
    parts: list[str] = []
    code_like: list[str] = []
    seen_whole: set[str] = set()
    seen_parts: set[str] = set()
    for token in raw:
        lower = token.lower()
        code = looks_like_identifier(token)
        if code:
            code_like.append(token)
        if lower in STOPWORDS and not code:
            continue
        if lower not in seen_whole:
            seen_whole.add(lower)
            whole.append(lower)
        for part in identifier_parts(token):
            if part not in seen_parts and (part not in STOPWORDS or code):
                seen_parts.add(part)
                parts.append(part)
    if not whole and not parts and raw:
        # Only stopwords: search them anyway rather than answer nothing.
        whole = list(dict.fromkeys(t.lower() for t in raw))
        parts = list(dict.fromkeys(p for t in raw for p in identifier_parts(t)))
    return AnalyzedQuery(tuple(whole), tuple(parts), phrases, tuple(code_like))
