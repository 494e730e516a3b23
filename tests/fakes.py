"""In-repo fakes of the engine's interfaces, for tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from engine.types import Chunk, Hit, Query


class FakeSignal:
    """A signal that answers from a fixed table: query text -> ranked hits."""

    def __init__(
        self,
        name: str,
        answers: Mapping[str, Sequence[Hit]] | None = None,
        *,
        warning: str = "",
        error: Exception | None = None,
    ) -> None:
        self.name = name
        self.warning = warning
        self.answers = dict(answers or {})
        self.error = error
        self.calls: list[tuple[str, int]] = []

    def search(self, query: Query, limit: int) -> list[Hit]:
        self.calls.append((query.text, limit))
        if self.error is not None:
            raise self.error
        return list(self.answers.get(query.text, []))[:limit]


class FakeChunkSource:
    """A ChunkSource / ChunkReader over an in-memory list of chunks."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self._chunks = {c.id: c for c in chunks}

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]:
        return {i: self._chunks[i] for i in ids if i in self._chunks}

    def iter_chunks(self) -> Iterable[Chunk]:
        return iter(sorted(self._chunks.values(), key=lambda c: c.id))

    def chunk_count(self) -> int:
        return len(self._chunks)


def make_chunk(
    chunk_id: int,
    path: str = "pkg/mod.py",
    text: str = "def f():\n    return 1",
    *,
    name: str = "f",
    kind: str = "function",
    language: str = "python",
    start_line: int = 1,
) -> Chunk:
    lines = text.count("\n") + 1
    return Chunk(
        id=chunk_id,
        path=path,
        language=language,
        kind=kind,  # type: ignore[arg-type]
        name=name,
        qualified_name=name,
        parent="",
        start_line=start_line,
        end_line=start_line + lines - 1,
        text=text,
        signature=text.splitlines()[0] if text else "",
    )
