"""Fakes for the vector signal's tests: an in-memory chunk source, chunks, build jobs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.signal import BuildJob, BuildReport, IndexOptions
from engine.types import Chunk, ChunkKind
from signals.vector.builder import ModelLoader, VectorBuilder
from signals.vector.embedder import HashingEmbedder
from signals.vector.loader import HASHING, LoadedModel, model_meta
from signals.vector.meta import EmbedSettings


class MemoryChunkSource:
    """``ChunkSource`` over a fixed list of chunks."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self._chunks = {c.id: c for c in chunks}

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]:
        return {i: self._chunks[i] for i in ids if i in self._chunks}

    def iter_chunks(self) -> Iterator[Chunk]:
        return iter([self._chunks[i] for i in sorted(self._chunks)])

    def chunk_count(self) -> int:
        return len(self._chunks)


def make_chunk(
    chunk_id: int,
    path: str,
    name: str,
    text: str,
    *,
    kind: ChunkKind = "function",
    language: str = "python",
    docstring: str = "",
    signature: str = "",
) -> Chunk:
    lines = text.count("\n") + 1
    return Chunk(
        id=chunk_id,
        path=path,
        language=language,
        kind=kind,
        name=name,
        qualified_name=name,
        parent="",
        start_line=1,
        end_line=lines,
        text=text,
        signature=signature,
        docstring=docstring,
    )


def fake_loader(embedder: HashingEmbedder) -> ModelLoader:
    def load(options: IndexOptions, embed: EmbedSettings) -> LoadedModel:
        # Records the settings it was asked for, as the real loader does.
        del options
        meta = model_meta(
            None,
            backend=HASHING,
            model_id=embedder.model_id,
            dim=embedder.dim,
            max_seq_length=0,
            precision=embed.precision,
            document_tokens=embed.document_tokens,
        )
        return LoadedModel(embedder, meta)

    return load


class Generations:
    """Runs successive BuildJobs the way the index writer does: a new folder each time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        self.previous_dir: Path | None = None
        self.previous_meta: dict[str, Any] = {}

    def build(
        self,
        builder: VectorBuilder,
        source: MemoryChunkSource,
        added: Sequence[Chunk],
        *,
        removed_ids: Sequence[int] = (),
        removed_paths: Sequence[str] = (),
    ) -> tuple[Path, BuildReport]:
        self.count += 1
        directory = self.root / f"gen-{self.count}" / "vector"
        directory.mkdir(parents=True)
        job = BuildJob(
            repo_root=self.root / "repo",
            directory=directory,
            previous_dir=self.previous_dir,
            previous_meta=self.previous_meta,
            added=added,
            removed_ids=removed_ids,
            removed_paths=removed_paths,
            definitions=(),
            changed_paths=sorted({c.path for c in added}),
            source=source,
        )
        report = builder.build(job)
        if report.ready:
            self.previous_dir, self.previous_meta = directory, report.meta
        return directory, report


CHUNKS = [
    make_chunk(
        1,
        "net/http.py",
        "parse_request_body",
        "def parse_request_body(req):\n    return json.loads(req.body)",
    ),
    make_chunk(
        2,
        "db/conn.py",
        "connect_database",
        "def connect_database(url):\n    return sqlite3.connect(url)",
    ),
    make_chunk(
        3,
        "ui/render.py",
        "render_template",
        "def render_template(name, context):\n    return env.get(name).render(context)",
    ),
]


def fake_model_folder(root: Path, name: str, weights: bytes) -> Path:
    """A folder that passes for a sentence-transformers model as far as identity goes."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "config.json").write_text('{"hidden_size": 32}', encoding="utf-8")
    return folder
