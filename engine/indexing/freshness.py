"""How stale an index is: files added, modified or removed on disk since it was built, and
what one indexed file holds now (``DiskFiles``, the check every search answer goes through).

Compares size and mtime, so a file that was touched but not changed counts as modified;
``engine reindex`` then finds its hash unchanged and does no work for it. Size and mtime
prove nothing for a file modified shortly before the index scanned it (git's "racy" entries):
an edit in the same clock tick, or one that kept the size and restored the mtime, looks
unchanged. Such files are hashed (``is_racy``); everything else is trusted by its stat.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from engine.index.home import RepoEntry
from engine.index.manifest import Manifest
from engine.index.store import ChunkStore, FileRecord
from engine.indexing.source_file import SourceText, read_source
from engine.indexing.walk import MAX_FILE_BYTES, walk
from engine.languages import detect_language
from engine.search.freshness import FileNow

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


class DiskFiles:
    """What the files of one published generation hold on disk now (engine.search's
    ``FileView``): a stat per file, and a read and hash only when the stat cannot vouch.

    A file whose size and mtime are those recorded, and whose mtime is safely older than the
    scan that recorded it (``is_racy``), is unchanged without being read: the indexer's own
    rule. Anything else is read as the indexer reads it and compared by content hash. Stateless
    apart from the read-only store, so searches on several threads may share it.
    """

    def __init__(
        self,
        root: Path,
        store: ChunkStore,
        scanned_at_ns: int,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self._root = root.resolve()  # as the walk resolves it, so ``beneath`` matches
        self._store = store
        self._scanned_at_ns = scanned_at_ns
        self._max_file_bytes = max_file_bytes

    @classmethod
    def of(cls, entry: RepoEntry, store: ChunkStore, manifest: Manifest) -> DiskFiles:
        """The view of a generation being opened (``open_index``'s ``files``)."""
        return cls(entry.root, store, manifest.scanned_at_ns)

    def now(self, path: str) -> FileNow:
        record = self._store.file_record(path)
        if record is None:
            # Not a file the store indexed (a location a SCIP index knows): nothing to check.
            return FileNow("unchanged")
        file = self._root / path
        try:
            st = file.lstat()
        except OSError:  # deleted, or a folder on its path went away
            return FileNow("gone")
        if not stat.S_ISREG(st.st_mode):
            return FileNow("gone")  # a link or a folder in its place: the indexer reads nothing
        if (st.st_size, st.st_mtime_ns) == (record.size_bytes, record.mtime_ns) and not is_racy(
            record.mtime_ns, self._scanned_at_ns
        ):
            return FileNow("unchanged")
        source = read_source(file, max_file_bytes=self._max_file_bytes, beneath=self._root)
        if not isinstance(source, SourceText):
            return FileNow("gone")
        if source.content_hash == record.content_hash:
            return FileNow("unchanged")
        # Line endings as the chunker numbers lines: "\r\n", "\r" and "\n" each end one.
        text = source.text
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return FileNow("changed", text)
