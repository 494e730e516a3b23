"""Words of a query and of a path, cut the same way so they can be compared: identifier parts,
stopwords dropped, Snowball (Porter 2) stems, and a prefix rule for near stems.

Porter stemming alone leaves ``router`` and ``routing`` apart (``router``, ``rout``): two
stems match when they are equal or when the shorter, at least ``MIN_PREFIX`` characters
long, begins the longer.
"""

from __future__ import annotations

from functools import lru_cache

from engine.terms import STOPWORDS, identifier_parts, identifiers

MIN_PREFIX = 4


@lru_cache(maxsize=1)
def _stemmer() -> object:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (digits and short words unchanged)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def stems_match(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= MIN_PREFIX and long.startswith(short)


def content_stems(text: str) -> tuple[str, ...]:
    """The stems of the words of ``text`` that carry meaning, de-duplicated, in order."""
    out: list[str] = []
    for token in identifiers(text):
        for part in identifier_parts(token):
            if part in STOPWORDS or len(part) < 2 or part.isdigit():
                continue
            s = stem(part)
            if s not in out:
                out.append(s)
    return tuple(out)


@lru_cache(maxsize=65_536)
def name_stems(name: str) -> tuple[str, ...]:
    """The stems of one path component or identifier (``bash_completions`` -> bash, complet)."""
    return tuple(stem(p) for p in identifier_parts(name) if not p.isdigit())
