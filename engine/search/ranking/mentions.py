"""Mentioned definitions: the functions and classes a pasted report names, looked up in the
files the ranking already put first.

A report finds its file more often than its function (swebench-dev: the file ranked first for
twice as many issues as the function was shown): the signals rank the whole repository's
chunks against hundreds of incidental words, and the changed function, one of a long file's
hundred chunks, is often in no signal's first 200. Its name is often in the report, though:
called (``M.col_insert(3, V)``), in a frame (``in _print_MatAdd``), or as the class whose
constructor misbehaves (``Intersection({1}, {x})``). So for a long query the first files of
the ranking are read whole and the chunks that define a mentioned name join the candidates.

A chunk's own name matches a mention when
- it is the name, written like code in the report (snake_case, CamelCase, ``__dunder__``,
  called with ``(`` or reached with ``.``): ``col_insert``, ``Poly``;
- a ``_``-suffix of it is (visitor and hook methods: ``_print_Poly``, ``_eval_col_insert``),
  scored lower;
- it is a constructor (``__new__``, ``__init__``) of a class the report calls.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from engine.terms import STOPWORDS

_NAME = re.compile(r"(?<![\w$])([A-Za-z_][\w]*)")
CONSTRUCTORS = frozenset({"__new__", "__init__"})
MIN_CHARS = 3
EXACT = 1.0
SUFFIX = 0.8
CONSTRUCTOR = 0.8
OWNER = 1.25  # the class it is a member of is named too (``Matrix.col_insert``)
# A later mention counts a little less: a report names what it is about first (its title).
MENTION_ORDER_DECAY = 0.99
MAX_ORDER = 50


@dataclass(frozen=True, slots=True)
class Mentions:
    names: Mapping[str, int]  # a name written like code -> its order of first mention
    called: frozenset[str]  # names followed by "(": a class called is being constructed

    def __bool__(self) -> bool:
        return bool(self.names)


NO_MENTIONS = Mentions({}, frozenset())


def _code_like(name: str, before: str, after: str) -> bool:
    """``before``: the text just before the name; ``after``: the character after it."""
    if after == "(" or before.endswith((".", "`")):
        return True
    if "_" in name or any(c.isupper() for c in name[1:]):
        return True
    # A capitalised word names a class (``Permutation``, ``Poly``) unless it opens a
    # sentence or line (``Please``, ``Traceback``, ``Example``).
    opening = before.rstrip(" \t")
    return name[0].isupper() and not (opening == "" or opening.endswith((".", "!", "?", ":", "\n")))


def mentions_of(text: str) -> Mentions:
    """The names ``text`` writes like code, in order of first mention."""
    names: dict[str, int] = {}
    called: set[str] = set()
    for match in _NAME.finditer(text):
        name = match.group(1)
        if len(name.strip("_")) < MIN_CHARS or name.lower() in STOPWORDS:
            continue
        before = text[max(0, match.start() - 80) : match.start()]
        after = text[match.end() : match.end() + 1]
        if after == "(":
            called.add(name)
        if name not in names and _code_like(name, before, after):
            names[name] = len(names)
    return Mentions(names, frozenset(called))


def mention_strength(name: str, qualified_name: str, mentions: Mentions) -> float:
    """How strongly the chunk defining ``name`` (``qualified_name`` within its file) is
    named by the report: EXACT, SUFFIX or CONSTRUCTOR, times OWNER when its class is named
    too, times MENTION_ORDER_DECAY per mention before the one it matched; 0 when it is not
    named."""
    if not name or not mentions:
        return 0.0
    owner = qualified_name.rsplit(".", 2)[-2] if "." in qualified_name else ""
    by_owner = OWNER if owner in mentions.names else 1.0
    if name in mentions.names:
        return EXACT * by_owner * _decay(mentions, name)
    parts = name.split("_")
    for i in range(1, len(parts)):
        suffix = "_".join(parts[i:])
        if len(suffix) >= MIN_CHARS and suffix in mentions.names and any(parts[:i]):
            return SUFFIX * by_owner * _decay(mentions, suffix)
    if name in CONSTRUCTORS and owner and owner in mentions.called:
        return CONSTRUCTOR * _decay(mentions, owner)
    return 0.0


def _decay(mentions: Mentions, name: str) -> float:
    return float(MENTION_ORDER_DECAY ** min(mentions.names.get(name, 0), MAX_ORDER))
