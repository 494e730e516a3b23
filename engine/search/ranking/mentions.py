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
- it is a constructor (``__new__``, ``__init__``) of a class the report calls;
- it holds the line a stack frame points at (``File "sympy/core/expr.py", line 124``,
  ``expr.py:124: in __eq__``), in any file, whose path ends like the frame's.
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
class FrameLine:
    """A stack frame's file and line, as the trace wrote the path (absolute, relative)."""

    path: str
    line: int


@dataclass(frozen=True, slots=True)
class Mentions:
    names: Mapping[str, int]  # a name written like code -> its order of first mention
    called: frozenset[str]  # names followed by "(": a class called is being constructed
    frames: tuple[FrameLine, ...] = ()  # in the order written, at most MAX_FRAMES

    def __bool__(self) -> bool:
        return bool(self.names or self.frames)

    def frame_lines(self, path: str) -> list[int]:
        """The lines the frames point at in ``path`` (a repository-relative path)."""
        return [f.line for f in self.frames if same_file(f.path, path)]


NO_MENTIONS = Mentions({}, frozenset())
# A frame: Python's `File "p", line N, in f`, pytest's `p:N: in f`, JavaScript's
# `(p:N:C)`, Go's `\tp:N +0x..` and most others' `p:N`, for a path with an extension that
# starts a word (not a URL's `host:port`).
_FRAME = re.compile(
    r'File "(?P<quoted>[^"\n]+)", line (?P<qline>\d+)'
    r"|(?<![\w.\\/@+:-])(?P<path>(?:[A-Za-z]:)?[\w.\\/@+-]*[\w-]\.[A-Za-z]\w{0,5})"
    r":(?P<line>\d+)\b"
)
MAX_FRAMES = 64
FRAME = 1.0  # a chunk holding a frame's line: the strength of an exact name


def same_file(frame_path: str, path: str) -> bool:
    """Whether a trace's path names the repository file ``path``: equal, or one ends with
    the other at a folder boundary."""
    frame_path = frame_path.replace("\\", "/").removeprefix("./")
    if frame_path == path:
        return True
    return frame_path.endswith("/" + path) or path.endswith("/" + frame_path)


def frames_of(text: str) -> tuple[FrameLine, ...]:
    frames: dict[FrameLine, None] = {}
    for match in _FRAME.finditer(text):
        path = match.group("quoted") or match.group("path")
        line = int(match.group("qline") or match.group("line"))
        if line > 0:
            frames[FrameLine(path, line)] = None
        if len(frames) >= MAX_FRAMES:
            break
    return tuple(frames)


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


_OPERATOR = re.compile(r"(?<=[\w)\]])\s*(\*\*|==|!=|[*/+@-])\s*(?=[\w(])")
_OPERATORS = {
    "*": ("__mul__", "__rmul__"),
    "**": ("__pow__", "__rpow__"),
    "/": ("__truediv__", "__rtruediv__"),
    "+": ("__add__", "__radd__"),
    "-": ("__sub__", "__rsub__"),
    "@": ("__matmul__", "__rmatmul__"),
    "==": ("__eq__",),
    "!=": ("__ne__",),
}
_PROMPT_LINE = re.compile(r"^\s*(>>>|In \[\d+\]:)(.*)$", re.MULTILINE)


def mentions_of(text: str) -> Mentions:
    """The names ``text`` writes like code, in order of first mention; an operator between
    operands on a prompt line (``>>> milli*W``) mentions the methods that implement it."""
    found: list[tuple[int, str]] = []
    called: set[str] = set()
    for line in _PROMPT_LINE.finditer(text):
        for op in _OPERATOR.finditer(line.group(2)):
            found.extend((line.start(2) + op.start(1), d) for d in _OPERATORS[op.group(1)])
    for match in _NAME.finditer(text):
        name = match.group(1)
        if len(name.strip("_")) < MIN_CHARS or name.lower() in STOPWORDS:
            continue
        before = text[max(0, match.start() - 80) : match.start()]
        after = text[match.end() : match.end() + 1]
        if after == "(":
            called.add(name)
        if _code_like(name, before, after):
            found.append((match.start(), name))
    names: dict[str, int] = {}
    for _, name in sorted(found):
        names.setdefault(name, len(names))
    return Mentions(names, frozenset(called), frames_of(text))


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
