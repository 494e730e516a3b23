"""How stale an index is: files added, modified or removed on disk since it was built.

Compares size and mtime, so a file that was touched but not changed counts as modified;
``engine reindex`` then finds its hash unchanged and does no work for it. Size and mtime
prove nothing for a file modified shortly before the index scanned it (git's "racy" entries):
an edit in the same clock tick, or one that kept the size and restored the mtime, looks
unchanged. Such files are hashed (``is_racy``); everything else is trusted by its stat.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.index.store import FileRecord
from engine.indexing.source_file import SourceText, read_source
from engine.indexing.walk import walk
from engine.languages import detect_language

# A file whose recorded mtime is less than this before the scan that recorded it may have
# changed again without its mtime showing it: coarse file-system timestamps (FAT, SMB: 2 s),
# the kernel's tick-granular file clock, and edits that restore an mtime (``touch -r``).
RACY_WINDOW_NS = 3_000_000_000


def is_racy(mtime_ns: int, scanned_at_ns: int) -> bool:
    """True when a stat recorded at ``scanned_at_ns`` cannot vouch for the content.

    ``scanned_at_ns`` is 0 for an index from before the rule: every file is racy once.
    """
    return mtime_ns >= scanned_at_ns - RACY_WINDOW_NS


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
    scanned_at_ns: int | None = None,
) -> Staleness:
    """Compare the tree with the index; with ``scanned_at_ns`` (the manifest's), a racy
    file whose stat matches is hashed and counts as modified when its content changed."""
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
        elif scanned_at_ns is not None and is_racy(record.mtime_ns, scanned_at_ns):
            source = read_source(
                f.abs_path, max_file_bytes=max_file_bytes, beneath=Path(walked.root)
            )
            if not isinstance(source, SourceText) or source.content_hash != record.content_hash:
                modified += 1
    removed = sum(1 for path in indexed if path not in seen)
    return Staleness(added, modified, removed)
