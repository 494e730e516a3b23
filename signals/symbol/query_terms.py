"""What the symbol signal looks for in a query: identifiers, parts, dotted names, stack frames.

Tokenising is engine.terms' (``analyze_query``, ``identifiers``, ``identifier_parts``); this
module only adds what is particular to matching definitions:

- dotted names (``Greeter.greet``, ``http::Client``, ``pkg/mod.fn``), matched against the end
  of a definition's qualified name;
- stack-trace frames, which name a function *and* its file: Python
  (``File "x/y.py", line 3, in parse``), JavaScript (``at parse (src/x.ts:3:7)``) and
  Java-like (``at pkg.Cls.parse(Cls.java:3)``);
- whether the query holds code-like tokens at all: then its plain words ("most recent call
  last") are prose around the code, and an exact match on one of them counts for less.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.terms import analyze_query, identifier_parts, identifiers, looks_like_identifier

MAX_TERMS = 256  # a pasted log can hold thousands of tokens; the first ones say the most
MAX_DOTTED = 16
MAX_FRAMES = 64

# Only from the start of a word: tried at every position of a long word, the greedy name
# would be re-scanned to the word's end each time (a 20k-letter query took 9 s).
_DOTTED = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*(?:(?:\.|::|/|#)[A-Za-z_$][\w$]*)+")
_FRAMES = (
    re.compile(r'File "(?P<path>[^"]+)", line \d+, in (?P<name>[A-Za-z_]\w*)'),
    re.compile(r"at (?:async )?(?P<name>[\w$.<>]+) \((?:file://)?(?P<path>[^()\s]+?):\d+:\d+\)"),
    re.compile(r"at (?P<name>[\w$.]+)\((?P<path>[\w$]+\.\w+):\d+\)"),
)


@dataclass(frozen=True, slots=True)
class Frame:
    name: str  # the function's own name, lower-cased
    path: str  # the file as the trace wrote it: absolute, relative or a bare file name


@dataclass(frozen=True, slots=True)
class QueryTerms:
    whole: tuple[str, ...]  # lower-cased identifiers, stopwords dropped
    parts: tuple[str, ...]  # lower-cased parts, stopwords dropped, de-duplicated
    parts_of: dict[str, tuple[str, ...]]  # whole token -> its parts (camelCase split as written)
    plain: frozenset[str]  # whole tokens written as plain words, in a query that has code
    dotted: tuple[str, ...]  # qualified keys of dotted names (see dotted_key)
    frames: tuple[Frame, ...]


def dotted_key(token: str) -> str:
    """``Greeter.greet`` / ``http::Client`` / ``a/b#c`` -> ``greeter.greet`` / ... (see names)."""
    return token.lower().replace("::", ".").replace("/", ".").replace("#", ".")


def query_terms(text: str) -> QueryTerms:
    analyzed = analyze_query(text)
    parts_of: dict[str, tuple[str, ...]] = {}
    code_like = False
    written: dict[str, bool] = {}
    for token in identifiers(text):
        lower = token.lower()
        parts_of.setdefault(lower, identifier_parts(token))
        code = looks_like_identifier(token)
        code_like = code_like or code
        written[lower] = written.get(lower, False) or code
    plain = frozenset(t for t, code in written.items() if not code) if code_like else frozenset()
    dotted = dict.fromkeys(dotted_key(m.group()) for m in _DOTTED.finditer(text))
    frames: dict[Frame, None] = {}
    for pattern in _FRAMES:
        for match in pattern.finditer(text):
            name = match.group("name").rsplit(".", 1)[-1].lower()
            frames[Frame(name, match.group("path").replace("\\", "/"))] = None
    return QueryTerms(
        analyzed.whole[:MAX_TERMS],
        analyzed.parts[:MAX_TERMS],
        parts_of,
        plain,
        tuple(dotted)[:MAX_DOTTED],
        tuple(frames)[:MAX_FRAMES],
    )
