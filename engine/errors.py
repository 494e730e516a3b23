"""The engine's exception tree. Every error a user or agent can fix says how.

EngineError
├── UsageError           bad input from the caller (slug, path, query options)
├── RepoNotFound         no index registered under that slug
├── IndexIncompatible    index written by another format version: rebuild it
├── IndexCorrupt         an index file is unreadable: rebuild it
├── IndexBusy            another writer holds the repository's lock
├── SignalUnavailable    a signal cannot run (missing model, missing files)
└── BuildAborted         a signal's build failed in a way that must not publish it as off
                         (a remote embedder that keeps failing): the update stops, and the
                         last complete index stays in use
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


class BuildAborted(EngineError):
    pass
