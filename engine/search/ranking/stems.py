"""Words of a query and of a path, cut the same way so they can be compared: identifier parts,
stopwords dropped, Snowball (Porter 2) stems, and a prefix rule for near stems.

Porter stemming alone leaves ``router`` and ``routing`` apart (``router``, ``rout``): two
stems match when they are equal or when the shorter, at least ``MIN_PREFIX`` characters
long, begins the longer.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from functools import lru_cache
from typing import Protocol, cast

from engine.terms import STOPWORDS, identifier_parts, identifiers

MIN_PREFIX = 4

# snowballstemmer's package __init__ imports all 36 of its stemmers, and
# ``from snowballstemmer.english_stemmer import ...`` runs it too: 2.9 MiB of a bare
# process (39 modules), 2.6 MiB of a cluster shard actor's USS, for the one language used
# here. The English stemmer needs only its two siblings (basestemmer, among), so the
# package's folder is imported again under this private name, as a package with no
# __init__ code: the same files, unchanged, three modules (0.1 MiB).
# tests/engine/search/ranking/test_stems.py compares it with snowballstemmer.stemmer.
_ENGLISH_ONLY = "_engine_snowball_english"


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...  # snowballstemmer's name


@lru_cache(maxsize=1)
def _stemmer() -> _Stemmer:
    spec = importlib.util.find_spec("snowballstemmer")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("snowballstemmer is not installed")
    package = types.ModuleType(_ENGLISH_ONLY)
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules.setdefault(_ENGLISH_ONLY, package)
    english = importlib.import_module(f"{_ENGLISH_ONLY}.english_stemmer")
    return cast(_Stemmer, english.EnglishStemmer())


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (digits and short words unchanged)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    return _stemmer().stemWord(word)


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
