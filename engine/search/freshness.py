"""Whether each answer is still true of the file on disk: moved code relocated, stale code marked.

An index is a snapshot and files change under it; an agent that edits a returned line range
must get the file's current lines or be told it has none. For every distinct file among the
results, a ``FileView`` (engine/indexing/freshness.py's ``DiskFiles``: stat first, hash only
when the stat cannot vouch) says what the file holds now:

- ``unchanged``: its results stand as indexed.
- ``changed``: a result whose exact text is still in the file, as whole lines, gets the
  current line numbers (the occurrence nearest the indexed lines); if they differ, it is
  ``moved``. A result whose text is no longer there is ``stale``.
- ``gone`` (deleted, or no longer readable as the indexer reads it): its results are stale.

A stale result keeps the code and lines the index holds, labelled ``stale``: they say what
matched, not what the file holds (formatters never present them as the file's lines). One
warning per search names the files whose results moved or went stale, and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from engine.types import Freshness, Result

FileState = Literal["unchanged", "changed", "gone"]
MAX_NAMED_FILES = 5  # files a warning names; the count is always complete


@dataclass(frozen=True, slots=True)
class FileNow:
    """What one indexed file holds on disk now."""

    state: FileState
    text: str = ""  # "changed": the file's text, every line ending normalised to "\n"


class FileView(Protocol):
    """What the files of one index hold now; ``path`` is repository-relative."""

    def now(self, path: str) -> FileNow: ...


def relocate(text: str, content: str, near_line: int) -> int | None:
    """The 1-based line where ``content`` starts in ``text`` as whole lines, the occurrence
    nearest ``near_line``; None when it is not there (or ``content`` is empty)."""
    if not content:
        return None
    best: int | None = None
    start = text.find(content)
    line, counted_to = 1, 0
    while start != -1:
        end = start + len(content)
        if (start == 0 or text[start - 1] == "\n") and (end == len(text) or text[end] == "\n"):
            line += text.count("\n", counted_to, start)
            counted_to = start
            if best is None or abs(line - near_line) < abs(best - near_line):
                best = line
            elif line > near_line:
                break  # later occurrences are only further away
        start = text.find(content, start + 1)
    return best


@dataclass(frozen=True, slots=True)
class Placed:
    """Where a region of an indexed file is now: 1-based inclusive lines, and how it fares."""

    freshness: Freshness
    start_line: int
    end_line: int


class FreshnessCheck:
    """Checks the regions of one answer, asking ``files`` about each distinct file once."""

    def __init__(self, files: FileView, repo: str) -> None:
        self._files = files
        self._repo = repo
        self._now: dict[str, FileNow] = {}
        self._moved: set[str] = set()
        self._stale: set[str] = set()

    def place(self, path: str, start_line: int, end_line: int, content: str) -> Placed:
        """Where the indexed lines ``start_line..end_line`` of ``path``, whose text is
        ``content``, are now (module docstring); a stale region keeps its indexed lines."""
        state = self._now.get(path)
        if state is None:
            state = self._now[path] = self._files.now(path)
        if state.state == "unchanged":
            return Placed("current", start_line, end_line)
        line = relocate(state.text, content, start_line) if state.state == "changed" else None
        if line is None:
            self._stale.add(path)
            return Placed("stale", start_line, end_line)
        if line == start_line:
            return Placed("current", start_line, end_line)
        self._moved.add(path)
        return Placed("moved", line, line + end_line - start_line)

    def result(self, result: Result) -> Result:
        placed = self.place(result.path, result.start_line, result.end_line, result.content)
        if placed.freshness == "current":
            return result
        shift = placed.start_line - result.start_line  # 0 for a stale result
        return replace(
            result,
            start_line=placed.start_line,
            end_line=placed.end_line,
            freshness=placed.freshness,
            # The enclosing definition moved with its chunk (0: the chunk is the whole one).
            definition_start_line=result.definition_start_line
            and result.definition_start_line + shift,
            definition_end_line=result.definition_end_line and result.definition_end_line + shift,
        )

    def warnings(self) -> list[str]:
        """One warning naming the files whose regions moved or went stale, or none."""
        changed = sorted(self._moved | self._stale)
        if not changed:
            return []
        named = [f"{path} ({self._why(path)})" for path in changed[:MAX_NAMED_FILES]]
        if len(changed) > MAX_NAMED_FILES:
            named.append(f"and {len(changed) - MAX_NAMED_FILES} more")
        repo = self._repo
        return [
            f"{len(changed)} file(s) changed on disk since {repo} was indexed: "
            f"{', '.join(named)} — moved results give the code's current lines; stale results "
            "show the code and lines as indexed, which the file no longer holds (read the file "
            f"before editing); reindex {repo} to refresh (engine reindex {repo}, or the "
            "reindex tool)"
        ]

    def _why(self, path: str) -> str:
        if self._now[path].state == "gone":
            return "deleted"
        return "stale" if path in self._stale else "moved"


def checked(
    results: Sequence[Result], files: FileView, repo: str
) -> tuple[list[Result], list[str]]:
    """``results`` as true of the files now (module docstring), and the warning if any."""
    check = FreshnessCheck(files, repo)
    out = [check.result(r) for r in results]
    return out, check.warnings()
