"""The engine's exception tree. Every error a user or agent can fix says how.

EngineError
├── UsageError           bad input from the caller (slug, path, query options)
├── RepoNotFound         no index registered under that slug
├── IndexIncompatible    index written by another format version: rebuild it
├── IndexCorrupt         an index file is unreadable: rebuild it
├── IndexBusy            another writer holds the repository's lock
└── SignalUnavailable    a signal cannot run (missing model, missing files)
"""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the engine raises on purpose. ``str(err)`` is the user message."""


class UsageError(EngineError):
    pass


class RepoNotFound(EngineError):
    pass


class IndexIncompatible(EngineError):
    pass


class IndexCorrupt(EngineError):
    pass


class IndexBusy(EngineError):
    pass


class SignalUnavailable(EngineError):
    pass
