"""The manifest of an index generation, read and written here and nowhere else.

``manifest.json`` in each generation folder says what the generation holds (files, chunks,
languages, skip reasons), what it was built from (the root, the git commit, when the tree was
scanned) and the state of every signal. Readers get a ``Manifest``, never the JSON: parsing
checks the type of every field a reader relies on and raises ``IndexCorrupt`` naming the first
wrong one, so no reader meets a string where it expects a table.

The JSON is the index format (``FORMAT_VERSION``), so ``Manifest.to_json`` gives back exactly
what ``parse_manifest`` read from a manifest this engine wrote. A field an older build of the
same format did not write takes its default; the git snapshot fields stay None when absent
(absent means "no snapshot was taken", which an empty list would deny) and are left out again.
A signal's ``meta`` is the signal's own business: the engine stores it and hands it back to the
signal's ``open`` and builder untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from engine.errors import IndexCorrupt, IndexIncompatible
from engine.index.generations import FORMAT_VERSION, MANIFEST, write_json_atomic


@dataclass(frozen=True, slots=True)
class SignalState:
    """One signal's entry in the manifest."""

    ready: bool  # the signal's folder can answer queries
    # In step with the generation's store; False for a slow signal carried forward from the
    # previous generation while it is rebuilt (it still answers, slightly stale).
    synced: bool
    message: str = ""  # one line for the index summary ("updating", "failed: ...")
    meta: Mapping[str, Any] = field(default_factory=dict)  # the signal's own, given to open
    seconds: float | None = None  # build time in this generation; None when not built in it

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ready": self.ready,
            "synced": self.synced,
            "message": self.message,
            "meta": dict(self.meta),
        }
        if self.seconds is not None:
            data["seconds"] = self.seconds
        return data


NOT_BUILT = SignalState(ready=False, synced=False)
"""The state of a signal the manifest does not name."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """What one generation holds and how it was built; ``Manifest()`` is "no index"."""

    format_version: int = FORMAT_VERSION
    chunker_version: int = 0  # 0: unknown, which no chunker matches
    repo: str = ""  # the slug
    root: str = ""  # the repository folder, absolute
    built_at: str = ""  # ISO 8601 in UTC, to the second; "" when unknown
    source_commit: str = ""  # the git commit of the work tree; "" outside git
    files: int = 0  # files indexed
    chunks: int = 0
    languages: Mapping[str, int] = field(default_factory=dict)  # files per language
    skipped: Mapping[str, int] = field(default_factory=dict)  # files per skip reason
    problems: tuple[str, ...] = ()  # "path: reason", the first MAX_PROBLEMS of the run
    # Wall clock (time.time_ns) before the walk stat'ed any file; 0 for an index from before
    # the racy-file rule (every file is racy once).
    scanned_at_ns: int = 0
    # What identified the chunk store's bytes when the generation was published
    # (engine/index/health.py's ``store_stamp``); "" for an index from before the stamp.
    store_stamp: str = ""
    # The git snapshot taken before any file was read; None when none was (outside git).
    source_dirty: tuple[str, ...] | None = None  # paths not clean at that moment
    source_checked_ns: int | None = None  # wall clock (time.time_ns) when git was asked
    signals: Mapping[str, SignalState] = field(default_factory=dict)  # by signal name

    def signal(self, name: str) -> SignalState:
        return self.signals.get(name, NOT_BUILT)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format_version": self.format_version,
            "chunker_version": self.chunker_version,
            "repo": self.repo,
            "root": self.root,
            "built_at": self.built_at,
            "source_commit": self.source_commit,
            "files": self.files,
            "chunks": self.chunks,
            "languages": dict(self.languages),
            "skipped": dict(self.skipped),
            "problems": list(self.problems),
            "scanned_at_ns": self.scanned_at_ns,
            "store_stamp": self.store_stamp,
            "signals": {name: state.to_json() for name, state in self.signals.items()},
        }
        if self.source_dirty is not None:
            data["source_dirty"] = list(self.source_dirty)
        if self.source_checked_ns is not None:
            data["source_checked_ns"] = self.source_checked_ns
        return data


def read_manifest(generation: Path) -> Manifest:
    """The manifest of ``generation``; IndexCorrupt when it is unreadable or damaged,
    IndexIncompatible when another format version wrote it."""
    try:
        data = orjson.loads((generation / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise IndexCorrupt(f"manifest of {generation} is unreadable ({reason})") from None
    try:
        return parse_manifest(data)
    except _Damaged as exc:
        raise IndexCorrupt(f"manifest of {generation} is damaged: {exc}") from None


def write_manifest(generation: Path, manifest: Manifest) -> None:
    write_json_atomic(generation / MANIFEST, manifest.to_json())


class _Damaged(Exception):
    """A field of the wrong type; ``read_manifest`` names the file."""


def parse_manifest(data: object) -> Manifest:
    """``data`` (the decoded JSON) as a Manifest; raises IndexIncompatible for another format
    version and ``_Damaged`` (caught by ``read_manifest``) for a field of the wrong type."""
    if not isinstance(data, dict):
        raise _Damaged(f"it is {_kind(data)}, not an object")
    version = data.get("format_version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise IndexIncompatible(
            f"index format {version} is not the format this engine reads ({FORMAT_VERSION})"
        )
    dirty = data.get("source_dirty")
    checked_ns = data.get("source_checked_ns")
    return Manifest(
        format_version=FORMAT_VERSION,
        chunker_version=_int(data, "chunker_version"),
        repo=_str(data, "repo"),
        root=_str(data, "root"),
        built_at=_str(data, "built_at"),
        source_commit=_str(data, "source_commit"),
        files=_int(data, "files"),
        chunks=_int(data, "chunks"),
        languages=_counts(data, "languages"),
        skipped=_counts(data, "skipped"),
        problems=_strings(data, "problems"),
        scanned_at_ns=_int(data, "scanned_at_ns"),
        store_stamp=_str(data, "store_stamp"),
        source_dirty=None if dirty is None else _strings(data, "source_dirty"),
        source_checked_ns=None if checked_ns is None else _int(data, "source_checked_ns"),
        signals={
            name: _signal_state(name, state) for name, state in _table(data, "signals").items()
        },
    )


def _signal_state(name: str, data: object) -> SignalState:
    where = f"signals.{name}"
    if not isinstance(data, dict):
        raise _Damaged(f"{where} is {_kind(data)}, not an object")
    ready = data.get("ready", False)
    if not isinstance(ready, bool):
        raise _Damaged(f"{where}.ready is {_kind(ready)}, not true or false")
    synced = data.get("synced", ready)  # written since slow signals were carried forward
    if not isinstance(synced, bool):
        raise _Damaged(f"{where}.synced is {_kind(synced)}, not true or false")
    seconds = data.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float)):
        raise _Damaged(f"{where}.seconds is {_kind(seconds)}, not a number")
    return SignalState(
        ready=ready,
        synced=synced,
        message=_str(data, "message", where),
        meta=_table(data, "meta", where),
        seconds=None if seconds is None else float(seconds),
    )


def _dotted(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _kind(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), "a number")


def _str(data: dict[str, Any], key: str, where: str = "") -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Damaged(f"{_dotted(where, key)} is {_kind(value)}, not a string")
    return value


def _int(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Damaged(f"{key} is {_kind(value)}, not a whole number")
    return value


def _table(data: dict[str, Any], key: str, where: str = "") -> dict[str, Any]:
    if key not in data:
        return {}
    value = data[key]
    if not isinstance(value, dict):
        raise _Damaged(f"{_dotted(where, key)} is {_kind(value)}, not an object")
    return value


def _counts(data: dict[str, Any], key: str) -> dict[str, int]:
    table = _table(data, key)
    for label, count in table.items():
        if isinstance(count, bool) or not isinstance(count, int):
            raise _Damaged(f"{key}.{label} is {_kind(count)}, not a whole number")
    return table


def _strings(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Damaged(f"{key} is {_kind(value)}, not a list of strings")
    return tuple(value)
