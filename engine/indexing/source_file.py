"""Reading one source file: its bytes once, their hash, and the decoded text (or why not).

The text is returned exactly as decoded: line endings are left alone (the chunker handles
CRLF) and only a byte-order mark is removed, so line numbers match the file on disk.
Nothing here raises for a bad file: every problem comes back as a ``NotRead`` reason.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from engine.indexing.walk import Skipped, SkipReason

SNIFF_BYTES = 8192  # a NUL byte in this many leading bytes marks a file as binary
# Minified content: a file of at least MINIFIED_MIN_CHARS whose lines average at least
# MINIFIED_MEAN_LINE_CHARS, or whose longest line has at least MINIFIED_LONG_LINE_CHARS and
# makes up at least MINIFIED_LONG_LINE_SHARE of the file. Hand-written code and prose never
# average 1,000 characters a line; bundles and embedded blobs do.
MINIFIED_MIN_CHARS = 5_000
MINIFIED_MEAN_LINE_CHARS = 1_000
MINIFIED_LONG_LINE_CHARS = 5_000
MINIFIED_LONG_LINE_SHARE = 0.5
# Bytes that are not valid UTF-8 are either text in a legacy encoding (Latin-1, KOI8-R,
# Shift-JIS: kept, with U+FFFD for the non-ASCII letters and the flag set) or a binary format
# without NUL bytes. Only the latter is full of control characters: more than this share of
# them makes the file "undecodable".
UNDECODABLE_CONTROL_SHARE = 0.02
# C0 controls and DEL, except tab, line feed, vertical tab, form feed, carriage return and
# escape (ANSI colours in logs).
_CONTROL_CHARS = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")

# O_NOFOLLOW and O_NONBLOCK exist on POSIX only; elsewhere plain reading is the best we have.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
)
# A folder on the way to the file: opened relative to its parent's descriptor, links refused.
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_DIR_FD_WORKS = os.open in os.supports_dir_fd

# Longest first: the UTF-32 LE mark starts with the UTF-16 LE mark.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True, slots=True)
class SourceText:
    """A decoded file. ``size_bytes`` and ``mtime_ns`` describe the bytes actually read."""

    text: str  # decoded, BOM removed, line endings untouched
    content_hash: str  # hash_bytes() of the raw bytes on disk
    encoding: str  # "utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"
    had_decode_errors: bool  # some bytes were invalid and became U+FFFD
    size_bytes: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class NotRead:
    """Why a file yielded no text: a walk skip reason plus the detail a user needs."""

    reason: SkipReason
    detail: str = ""

    def as_skipped(self, path: str) -> Skipped:
        """The same outcome in the walk's report form, for the repository-relative ``path``."""
        return Skipped(path, self.reason, self.detail)


def hash_bytes(data: bytes) -> str:
    """The content hash used across the index: 128-bit BLAKE2b of the raw bytes, as hex."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_source(
    abs_path: Path, *, max_file_bytes: int, beneath: Path | None = None
) -> SourceText | NotRead:
    """Read, hash and decode one file; a ``NotRead`` reason instead of any exception.

    The path may have changed since the walk: a link now in its place is not followed
    (it could point out of the repository), and a FIFO there cannot block the read. With
    ``beneath`` (the repository root), no folder between it and the file is followed either:
    each is opened relative to its parent's descriptor without following links, so swapping
    a folder for a link to elsewhere between the walk and the read cannot smuggle an outside
    file in under the folder's name.
    """
    try:
        fd = _open_file(abs_path, beneath)
    except FileNotFoundError:
        return NotRead("vanished", "deleted before it could be read")
    except _Outside:
        return NotRead("symlink-outside", "not inside the repository")
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            return NotRead("symlink", "it or a folder on its path was replaced since the walk")
        return NotRead("unreadable", err.strerror or type(err).__name__)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return NotRead("not-regular", "not a regular file")
        if st.st_size > max_file_bytes:
            return NotRead("too-large", f"{st.st_size} bytes > {max_file_bytes}")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            # One byte more than allowed, to notice a file that grew since fstat.
            data = handle.read(max_file_bytes + 1)
    except OSError as err:
        return NotRead("unreadable", err.strerror or type(err).__name__)
    finally:
        os.close(fd)
    if len(data) > max_file_bytes:
        return NotRead("too-large", f"more than {max_file_bytes} bytes")
    return decode_source(data, mtime_ns=st.st_mtime_ns)


class _Outside(Exception):
    """The path to read does not lie under the folder it must be read beneath."""


def _open_file(abs_path: Path, beneath: Path | None) -> int:
    """A descriptor for reading ``abs_path``, no link followed below ``beneath``."""
    if beneath is None or not _DIR_FD_WORKS:
        return os.open(abs_path, _OPEN_FLAGS)
    try:
        parts = abs_path.relative_to(beneath).parts
    except ValueError:
        raise _Outside from None
    if not parts or ".." in parts:
        raise _Outside
    dir_fd = os.open(beneath, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = inner
        return os.open(parts[-1], _OPEN_FLAGS, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def decode_source(data: bytes, *, mtime_ns: int = 0) -> SourceText | NotRead:
    """Hash and decode bytes already in memory (e.g. a blob from git) like ``read_source``."""
    encoding = _bom_encoding(data)
    if encoding is None and b"\0" in data[:SNIFF_BYTES]:
        return NotRead("binary", "NUL byte in the first 8 KiB")

    had_errors = False
    if encoding is None:
        encoding = "utf-8"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", errors="replace")
            had_errors = True
    else:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            text = data.decode(encoding, errors="replace")
            had_errors = True
        if encoding != "utf-8-sig":  # utf-8-sig drops its mark; the -le/-be codecs keep it
            text = text.removeprefix("\ufeff")

    if had_errors and len(_CONTROL_CHARS.findall(text)) > UNDECODABLE_CONTROL_SHARE * len(text):
        return NotRead("undecodable", f"not valid {encoding}, and full of control characters")
    if _looks_minified(text):
        return NotRead("minified", "very long lines")
    return SourceText(text, hash_bytes(data), encoding, had_errors, len(data), mtime_ns)


def _bom_encoding(data: bytes) -> str | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return None


def _looks_minified(text: str) -> bool:
    total = len(text)
    if total < MINIFIED_MIN_CHARS:
        return False
    lines = text.split("\n")
    if total / len(lines) >= MINIFIED_MEAN_LINE_CHARS:
        return True
    longest = max(map(len, lines))
    return longest >= MINIFIED_LONG_LINE_CHARS and longest >= MINIFIED_LONG_LINE_SHARE * total
