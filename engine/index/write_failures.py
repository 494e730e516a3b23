"""What to tell the user when the system refuses an index write: a full disk, a read-only home.

Writing an index touches many files (SQLite, Tantivy segments, FAISS, the manifest, the
pointer), and any of them can fail for reasons outside the engine. Those failures are
environmental, not bugs, so they become an ``EngineError`` that says what happened, that the
published index is intact (generations are only published whole), and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator

from engine.errors import EngineError

_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# Refused writes that every later write would meet too: the update stops, unpublished.
_REFUSED_WRITE_ERRNOS = _DISK_FULL_ERRNOS | {errno.EROFS, errno.EIO, errno.EFBIG}
_SQLITE_REFUSED = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY})


def is_disk_full(exc: BaseException) -> bool:
    """True for "no space left" from the OS or from SQLite (which reports it on its own)."""
    if isinstance(exc, OSError):
        return exc.errno in _DISK_FULL_ERRNOS
    if isinstance(exc, sqlite3.OperationalError):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
    return False


def is_write_refused(exc: BaseException) -> bool:
    """True when the system refused a write (full disk, read-only or failing device): a
    signal that meets it must not be published as "off", the whole update stops instead."""
    if isinstance(exc, OSError):
        return exc.errno in _REFUSED_WRITE_ERRNOS
    if isinstance(exc, sqlite3.OperationalError):
        # The primary result code is the low byte of an extended one (SQLITE_IOERR_WRITE).
        return (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in _SQLITE_REFUSED
    return False


def failure_message(slug: str, exc: OSError | sqlite3.OperationalError) -> str:
    intact = "searches keep using the last complete index"
    where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
    if is_disk_full(exc):
        return (
            f"indexing {slug} stopped: the disk is full{where} — {intact}; free some space "
            "and run the command again"
        )
    reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
    return f"indexing {slug} failed: {reason}{where} — {intact}; fix that and run the command again"


@contextlib.contextmanager
def write_failures_explained(slug: str) -> Iterator[None]:
    """Re-raise the system's refusals inside the block as an ``EngineError`` with the fix."""
    try:
        yield
    except (OSError, sqlite3.OperationalError) as exc:
        raise EngineError(failure_message(slug, exc)) from exc
