"""Test-wide fixtures: the signal registry with a deterministic fake embedder.

Engine and CLI tests exercise every registered signal, but the real embedding model (an
ONNX export of MiniLM) is slow to prepare and belongs to the vector signal's own slow
tests; here the vector signal embeds with the hashing fake instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from engine.signal import IndexOptions, OpenOptions, Signal, SignalBuilder, SignalPlugin
from engine.types import Hit, Query
from signals import registry
from signals.vector.embedder import HashingEmbedder

_real_plugins = registry.plugins


class _NoMismatchWarning:
    def __init__(self, inner: Signal) -> None:
        self.inner = inner
        self.name = inner.name
        self.warning = ""
        self.tier = getattr(inner, "tier", "")

    def search(self, query: Query, limit: int) -> list[Hit]:
        return self.inner.search(query, limit)


def fake_plugins() -> dict[str, SignalPlugin]:
    from tests.fakes import fake_tiered_builder

    def vector_builder(options: IndexOptions) -> SignalBuilder:
        return fake_tiered_builder(options, full=HashingEmbedder(64))

    plugins = _real_plugins()
    vector = plugins["vector"]

    def vector_open(directory: Path, meta: Mapping[str, Any], options: OpenOptions) -> Signal:
        # The fake model is never the configured one; that mismatch is tested on its own.
        return _NoMismatchWarning(vector.open(directory, meta, options))

    plugins["vector"] = dataclasses.replace(vector, make_builder=vector_builder, open=vector_open)
    return plugins


@pytest.fixture(autouse=True)
def fake_embedder_registry(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("real_model"):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry, "plugins", fake_plugins)
        yield


def install_fake_registry() -> None:
    """For subprocesses started by tests (e.g. ``engine serve``): use the fake embedder."""
    registry.plugins = fake_plugins
