"""Spot-check an index against the files on disk: the share of sampled chunks that are stale.

A chunk is stale when its text is no longer exactly its file's lines ``start_line..end_line``
(read and split as the indexer does), or its file is gone or unreadable. Unlike ``engine
status``, which compares sizes and mtimes, this looks at content: it catches edits that kept
a file's size and mtime, and it does not count a touched but unchanged file.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine.types import Chunk

STALE_THRESHOLD = 0.05  # above this share, a reindex is worth suggesting
MAX_EXAMPLES = 10


class ChunkIterable(Protocol):
    def iter_chunks(self) -> Iterable[Chunk]: ...


@dataclass(frozen=True, slots=True)
class StaleChunk:
    path: str
    start_line: int  # 1-based inclusive, as indexed
    end_line: int
    reason: str  # "changed", "file gone" or a read problem


@dataclass
class VerifyReport:
    sampled: int
    stale: int
    files: int  # distinct files the sample touched
    threshold: float = STALE_THRESHOLD
    examples: list[StaleChunk] = field(default_factory=list)
    root: Path = Path()  # the repository compared

    def fix(self, repo: str) -> str:
        """The command that repairs every stale chunk, or "" when none was found.

        A rebuild, not ``reindex``: what verify finds is what an update cannot see (an edit
        that kept the file's size and mtime, a store row changed behind the index's back).
        """
        from engine.index.opening import rebuild_command

        return rebuild_command(self.root, repo) if self.stale else ""

    @property
    def stale_share(self) -> float:
        return self.stale / self.sampled if self.sampled else 0.0

    @property
    def reindex_suggested(self) -> bool:
        return self.stale_share > self.threshold

    def as_json(self, repo: str) -> dict[str, Any]:
        return {
            "repo": repo,
            "sampled": self.sampled,
            "stale": self.stale,
            "staleShare": round(self.stale_share, 4),
            "files": self.files,
            "threshold": self.threshold,
            "reindexSuggested": self.reindex_suggested,
            "fix": self.fix(repo),
            "examples": [
                {
                    "filePath": s.path,
                    "startLine": s.start_line,
                    "endLine": s.end_line,
                    "reason": s.reason,
                }
                for s in self.examples
            ],
        }


def _file_lines(root: Path, path: str) -> list[str] | str:
    """The file's lines as the chunker numbers them, or why they cannot be read."""
    from engine.chunking.chunker import split_lines
    from engine.indexing.source_file import NotRead, read_source
    from engine.indexing.walk import MAX_FILE_BYTES

    source = read_source(root / path, max_file_bytes=MAX_FILE_BYTES, beneath=root)
    if isinstance(source, NotRead):
        return "file gone" if source.reason == "vanished" else source.reason
    return split_lines(source.text)


def verify_chunks(
    root: Path,
    store: ChunkIterable,
    sample: int,
    *,
    seed: int | None = None,
    threshold: float = STALE_THRESHOLD,
) -> VerifyReport:
    """Compare up to ``sample`` randomly chosen chunks with ``root``'s files."""
    chunks = list(store.iter_chunks())
    picked = chunks if len(chunks) <= sample else random.Random(seed).sample(chunks, sample)
    by_path: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in picked:
        by_path[chunk.path].append(chunk)
    report = VerifyReport(
        sampled=len(picked), stale=0, files=len(by_path), threshold=threshold, root=root
    )
    for path in sorted(by_path):
        lines = _file_lines(root, path)
        for chunk in sorted(by_path[path], key=lambda c: c.start_line):
            if isinstance(lines, str):
                reason = lines
            elif "\n".join(lines[chunk.start_line - 1 : chunk.end_line]) != chunk.text:
                reason = "changed"
            else:
                continue
            report.stale += 1
            if len(report.examples) < MAX_EXAMPLES:
                report.examples.append(StaleChunk(path, chunk.start_line, chunk.end_line, reason))
    return report
