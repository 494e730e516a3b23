"""What a signal builder's job reads the chunk store through (``BuildJob.source`` and
``.definitions``): the indexer's builds and the cluster coordinator's slow phase share them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import overload

from engine.index.store import ChunkStore
from engine.types import Chunk, Definition


class StoreSource:
    """ChunkSource over the store being built.

    ``every_chunk``, when given, is the store's whole content in id order (an update that
    built the store from empty still holds it): served from memory, not read back from SQLite.
    """

    def __init__(self, store: ChunkStore, every_chunk: Sequence[Chunk] | None = None) -> None:
        self._store = store
        self._every_chunk = every_chunk

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]:
        return self._store.chunks(ids)

    def iter_chunks(self) -> Iterator[Chunk]:
        if self._every_chunk is not None:
            return iter(self._every_chunk)
        return self._store.iter_chunks()

    def chunk_count(self) -> int:
        return self._store.chunk_count()


class StoreDefinitions(Sequence[Definition]):
    """Every definition in the store, read on first use: most builders never look at them,
    and reading tens of thousands costs a noticeable share of a build."""

    def __init__(self, store: ChunkStore) -> None:
        self._store = store
        self._read: list[Definition] | None = None

    def _all(self) -> list[Definition]:
        if self._read is None:
            self._read = self._store.definitions()
        return self._read

    @overload
    def __getitem__(self, index: int) -> Definition: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Definition]: ...

    def __getitem__(self, index: int | slice) -> Definition | Sequence[Definition]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Definition]:
        return iter(self._all())
