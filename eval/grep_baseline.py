"""The grep-then-read baseline: what an agent pays that greps the query's words and reads
whole files until it reaches a relevant one.

The rule, exactly (a model of ``rg -i -F -c -e word1 -e word2 … | sort`` then the Read tool):

1. **Words.** The query's runs of letters, digits and underscores (``[A-Za-z0-9_]+``),
   lowercased, at least 3 characters long, not in ``STOPWORDS`` (the words an agent leaves out
   of a grep: "how", "the", "where"…), each once, in query order. A query with no such word
   greps nothing and reads nothing.
2. **Files.** Every regular file under the scanned folder (the benchmark_root checkout), as
   ripgrep walks by default: hidden files and folders (a name starting with ".") are skipped,
   and so are binary files (a NUL byte anywhere). No .gitignore rules are applied: the checkout
   is ``git archive`` output, which holds only tracked files. Text is decoded as UTF-8, an
   undecodable byte replaced.
3. **Ranking.** A line matches when it contains any word, case-insensitively, as a substring.
   Files with at least one matching line are ranked by their number of matching lines, most
   first; ties by path, so the order is deterministic.
4. **Reading.** Files are read whole, in that order, each costing the tokens of its full
   text; the grep listing itself is not counted (which favours the baseline). The cost to the
   first hit is the sum up to and including the first file that holds a target. At most
   ``max_files`` files are read; when none of them holds a target, the query is a miss.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.search.budget import TokenCounter

WORD = re.compile(r"[A-Za-z0-9_]+")
MIN_WORD_CHARS = 3
DEFAULT_MAX_FILES = 10  # the same depth as the search answer's 10 results

# Question words, articles, prepositions and auxiliaries of English: an agent grepping for a
# question's subject does not grep for these.
STOPWORDS = frozenset(
    """
    about above after all also and any are around based been before being between both but
    can could does doing done each either for from get gets got has have having here how into
    its just like made make makes many more most much not off once only other our out over
    same should some such than that the their them then there these they this those through
    under until used uses using via was way ways were what when where whether which while who
    whom whose why will with within without would you your
    """.split()
)


def keywords(query: str) -> list[str]:
    """The words the baseline greps for (rule 1)."""
    words = [w.lower() for w in WORD.findall(query)]
    kept = [w for w in words if len(w) >= MIN_WORD_CHARS and w not in STOPWORDS]
    return list(dict.fromkeys(kept))


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # relative to the scanned folder, "/"-separated
    text: str
    lowered: str
    line_starts: tuple[int, ...]  # 0-based offset of each line's first character


def _walk(root: Path) -> Iterable[Path]:
    """Regular files under ``root``, hidden names skipped (rule 2), in path order."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            if not name.startswith(".") and path.is_file() and not path.is_symlink():
                yield path


def _read(path: Path, root: Path) -> SourceFile | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    text = data.decode("utf-8", errors="replace")
    lowered = text.lower()
    starts = [0, *(m.end() for m in re.finditer("\n", lowered))]
    return SourceFile(path.relative_to(root).as_posix(), text, lowered, tuple(starts))


class GrepCorpus:
    """One folder's text files, read once, grepped for many queries."""

    def __init__(self, files: Sequence[SourceFile], count: TokenCounter) -> None:
        self.files = list(files)
        self.count = count
        self._by_path = {f.path: f for f in self.files}
        self._tokens: dict[str, int] = {}

    @classmethod
    def scan(cls, root: Path, count: TokenCounter) -> GrepCorpus:
        read = (_read(p, root) for p in _walk(root))
        return cls([f for f in read if f is not None], count)

    def ranked(self, words: Sequence[str]) -> list[tuple[str, int]]:
        """(path, matching lines) of every file with a match, best first (rule 3)."""
        if not words:
            return []
        pattern = re.compile("|".join(re.escape(w) for w in words))
        counts: list[tuple[str, int]] = []
        for f in self.files:
            lines = {
                bisect.bisect_right(f.line_starts, m.start()) for m in pattern.finditer(f.lowered)
            }
            if lines:
                counts.append((f.path, len(lines)))
        counts.sort(key=lambda item: (-item[1], item[0]))
        return counts

    def tokens(self, path: str) -> int:
        """What reading the whole file costs, in ``count``'s tokens (each file counted once)."""
        if path not in self._tokens:
            self._tokens[path] = self.count(self._by_path[path].text)
        return self._tokens[path]


@dataclass(frozen=True, slots=True)
class GrepCost:
    tokens: int  # read up to and including the first relevant file, or everything read
    files_read: int
    first_hit: int | None  # 1-based position of the first relevant file read; None: a miss
    words: tuple[str, ...]


def grep_then_read(
    corpus: GrepCorpus,
    query: str,
    is_relevant: Callable[[str], bool],
    *,
    max_files: int = DEFAULT_MAX_FILES,
) -> GrepCost:
    """Rule 4: read ranked files until ``is_relevant(path)`` (a path relative to the
    scanned folder) says one holds a target."""
    words = keywords(query)
    used = 0
    ranked = corpus.ranked(words)[:max_files]
    for position, (path, _) in enumerate(ranked, 1):
        used += corpus.tokens(path)
        if is_relevant(path):
            return GrepCost(used, position, position, tuple(words))
    return GrepCost(used, len(ranked), None, tuple(words))
