"""How stale an index is: files added, modified or removed on disk since it was built.

Compares size and mtime only (no hashing), so a file that was touched but not changed counts
as modified; ``engine reindex`` then finds its hash unchanged and does no work for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.index.store import FileRecord
from engine.indexing.walk import walk
from engine.languages import detect_language


@dataclass(frozen=True, slots=True)
class Staleness:
    added: int
    modified: int
    removed: int

    @property
    def changed(self) -> int:
        return self.added + self.modified + self.removed


def staleness(
    root: Path,
    indexed: dict[str, FileRecord],
    refused: dict[str, tuple[str, int, int]],
    *,
    max_file_bytes: int,
) -> Staleness:
    walked = walk(root, max_file_bytes=max_file_bytes)
    added = modified = 0
    seen: set[str] = set()
    for f in walked.files:
        record = indexed.get(f.path)
        if record is None:
            before = refused.get(f.path)
            if before is None:
                added += detect_language(f.path) is not None
            elif before[1:] != (f.size_bytes, f.mtime_ns):
                modified += 1  # a refused file changed: it may be indexable now
            continue
        seen.add(f.path)
        if record.size_bytes != f.size_bytes or record.mtime_ns != f.mtime_ns:
            modified += 1
    removed = sum(1 for path in indexed if path not in seen)
    return Staleness(added, modified, removed)
