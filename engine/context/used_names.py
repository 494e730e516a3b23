"""The names a chunk of code uses, and how: bare, on ``self``/``this``, or on another value.

Comments and string literals are removed first (per language family, by regular
expression): a word in a docstring or an error message is not a use. What stands before a
name tells what it can refer to, which is all a name-only resolution has to go on:

- ``bare``: ``shout(x)``, ``Greeter``: a function, type or module-level name (or, in languages
  with an implicit ``this``, a method of the same class);
- ``self``: ``self.greet()``, ``this.parse()``: a member of the enclosing class;
- ``other``: ``bucket.load()``, ``fmt.Println``: a member of some other value, or a name
  qualified by its module or package.
"""

from __future__ import annotations

import re
from typing import Literal

from engine.languages import SYNTAX_LANGUAGES

Receiver = Literal["bare", "self", "other"]

_HASH_COMMENT_LANGUAGES = frozenset({"python", "ruby", "bash"})
# Languages where '...' is a string of any length, not a one-character literal (and where a
# Rust lifetime such as 'a would otherwise swallow code up to the next quote).
_SINGLE_QUOTE_STRINGS = frozenset(
    {"python", "ruby", "bash", "javascript", "typescript", "tsx", "php", "lua"}
)
_SELF_WORDS = frozenset({"self", "this", "cls", "Self", "super", "base"})

_DOUBLE = r'"(?:\\.|[^"\\\n])*"'
_SINGLE_ANY = r"'(?:\\.|[^'\\\n])*'"
_SINGLE_CHAR = r"'(?:\\.|[^'\\\n])'"
_TRIPLE = r'"""[\s\S]*?"""|' + r"'''[\s\S]*?'''"
_BACKTICK = r"`(?:\\.|[^`\\])*`"
_BLOCK_COMMENT = r"/\*[\s\S]*?\*/"
_LINE_COMMENT = r"//[^\n]*"
_HASKELL_COMMENT = r"\{-[\s\S]*?-\}|--[^\n]*"
_ZIG_MULTILINE_STRING = r"\\\\[^\n]*"  # each line of one starts with \\
_HASH_COMMENT = r"#[^\n]*"

_NOISE: dict[str, re.Pattern[str]] = {}
_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|->|::|\S")
_MEMBER_OPERATORS = frozenset({".", "->", "::"})


def _noise(language: str) -> re.Pattern[str]:
    """Comments and string literals of ``language``, as one pattern."""
    found = _NOISE.get(language)
    if found is None:
        parts = [_TRIPLE] if language == "python" else []
        parts.append(_DOUBLE)
        parts.append(_SINGLE_ANY if language in _SINGLE_QUOTE_STRINGS else _SINGLE_CHAR)
        if language in _HASH_COMMENT_LANGUAGES:
            parts.append(_HASH_COMMENT)
        elif language == "haskell":
            parts.append(_HASKELL_COMMENT)
        else:
            parts += [_BLOCK_COMMENT, _LINE_COMMENT, _BACKTICK]
        if language == "php":
            parts.append(_HASH_COMMENT)
        if language == "zig":
            parts.append(_ZIG_MULTILINE_STRING)
        found = _NOISE[language] = re.compile("|".join(parts))
    return found


def is_code(language: str) -> bool:
    """True for languages whose names resolve to definitions (not prose, config or data)."""
    return language in SYNTAX_LANGUAGES


def _is_name(token: str) -> bool:
    return token[0].isalpha() or token[0] in "_$"


def code_uses(text: str, language: str) -> dict[str, set[Receiver]]:
    """Each name used in ``text`` (outside comments and strings) and how it is reached."""
    tokens = _TOKEN.findall(_noise(language).sub(" ", text))
    uses: dict[str, set[Receiver]] = {}
    for i, token in enumerate(tokens):
        if not _is_name(token):
            continue
        receiver: Receiver = "bare"
        if i >= 2 and tokens[i - 1] in _MEMBER_OPERATORS:
            before = tokens[i - 2]
            if before in _SELF_WORDS or (before == ")" and tokens[i - 4 : i - 2] == ["super", "("]):
                receiver = "self"
            else:
                receiver = "other"
        uses.setdefault(token, set()).add(receiver)
    return uses
