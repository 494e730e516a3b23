"""In-repo fakes of the engine's interfaces, shared by every test: a signal that answers
from a table, a chunk source over a list, an in-process worker pool, the vector signal's
model loader around the hashing embedder, and a driver that runs successive builds the way
the index writer does."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from engine.indexing.workerpool import Failure, WorkerPool
from engine.search.freshness import FileNow
from engine.signal import BuildJob, BuildReport, IndexOptions, SignalBuilder
from engine.types import Chunk, ChunkKind, Definition, Hit, Query
from signals.vector.builder import ModelLoader, VectorBuilder
from signals.vector.embedder import HashingEmbedder
from signals.vector.loader import HASHING, LoadedModel, model_meta
from signals.vector.meta import EmbedSettings
from signals.vector.tiers import TieredVectorBuilder

T = TypeVar("T")
R = TypeVar("R")


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
    """A ChunkSource / ChunkReader over an in-memory list of chunks, in id order."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self._chunks = {c.id: c for c in chunks}

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]:
        return {i: self._chunks[i] for i in ids if i in self._chunks}

    def chunks_in_file(self, path: str) -> list[Chunk]:
        return sorted(
            (c for c in self._chunks.values() if c.path == path), key=lambda c: c.start_line
        )

    def iter_chunks(self) -> Iterator[Chunk]:
        return iter([self._chunks[i] for i in sorted(self._chunks)])

    def chunk_count(self) -> int:
        return len(self._chunks)


class FakeFiles:
    """A FileView over a table: path -> what the file holds now; unlisted files are unchanged.
    ``asked`` counts the questions, to check each file is asked about once per answer."""

    def __init__(self, files: Mapping[str, FileNow] | None = None) -> None:
        self.files = dict(files or {})
        self.asked: list[str] = []

    def now(self, path: str) -> FileNow:
        self.asked.append(path)
        return self.files.get(path, FileNow("unchanged"))


def make_chunk(
    chunk_id: int,
    path: str = "pkg/mod.py",
    text: str = "def f():\n    return 1",
    *,
    name: str = "f",
    kind: ChunkKind = "function",
    language: str = "python",
    start_line: int = 1,
    docstring: str = "",
    signature: str | None = None,
) -> Chunk:
    """A chunk of ``text`` starting at 1-based ``start_line``; its signature is the text's
    first line unless given."""
    lines = text.count("\n") + 1
    if signature is None:
        signature = text.splitlines()[0] if text else ""
    return Chunk(
        id=chunk_id,
        path=path,
        language=language,
        kind=kind,
        name=name,
        qualified_name=name,
        parent="",
        start_line=start_line,
        end_line=start_line + lines - 1,
        text=text,
        signature=signature,
        docstring=docstring,
    )


class InProcessPool(WorkerPool[T, R]):
    """A WorkerPool that runs every item in this process, for tests that patch a function
    the workers would run (a monkeypatch never reaches a worker process). It isolates
    nothing: a native crash here ends the test run."""

    def run(
        self,
        function: Callable[[T], R],
        items: Sequence[T],
        *,
        workers: int,
        failed: Callable[[T, Failure], R],
    ) -> Iterator[R]:
        for item in items:
            yield function(item)


def fake_loader(embedder: HashingEmbedder) -> ModelLoader:
    """The vector signal's model loader, handing out ``embedder`` instead of a real model."""

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


def fake_tiered_builder(
    options: IndexOptions,
    *,
    full: HashingEmbedder | None = None,
    fast: HashingEmbedder | None = None,
) -> TieredVectorBuilder:
    """The vector signal's builder with a fake per tier: MiniLM's (64 dimensions) and the
    static model's (32, another model id, so the two never share vectors or a cache)."""
    full = full if full is not None else HashingEmbedder(64)
    fast = fast if fast is not None else HashingEmbedder(32, model_id="fake-static-32")
    return TieredVectorBuilder(
        options,
        full=VectorBuilder(options, load_model=fake_loader(full)),
        # The fast tier is always local, as TieredVectorBuilder makes its own: no --embedder.
        fast=VectorBuilder(
            IndexOptions(home=options.home, model=options.model), load_model=fake_loader(fast)
        ),
    )


class Generations:
    """Runs successive BuildJobs of one signal the way the index writer does: a new folder
    each time, starting from the last generation that was ready."""

    def __init__(self, root: Path, signal: str = "vector") -> None:
        self.root = root
        self.signal = signal
        self.count = 0
        self.previous_dir: Path | None = None
        self.previous_meta: dict[str, Any] = {}

    def build(
        self,
        builder: SignalBuilder,
        source: FakeChunkSource,
        added: Sequence[Chunk],
        *,
        removed_ids: Sequence[int] = (),
        removed_paths: Sequence[str] = (),
        definitions: Sequence[Definition] = (),
    ) -> tuple[Path, BuildReport]:
        self.count += 1
        directory = self.root / f"gen-{self.count}" / self.signal
        directory.mkdir(parents=True)
        job = BuildJob(
            repo_root=self.root / "repo",
            directory=directory,
            previous_dir=self.previous_dir,
            previous_meta=self.previous_meta,
            added=added,
            removed_ids=removed_ids,
            removed_paths=removed_paths,
            definitions=definitions,
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
        "def parse_request_body(req):\n    return json.loads(req.body)",
        name="parse_request_body",
        signature="",
    ),
    make_chunk(
        2,
        "db/conn.py",
        "def connect_database(url):\n    return sqlite3.connect(url)",
        name="connect_database",
        signature="",
    ),
    make_chunk(
        3,
        "ui/render.py",
        "def render_template(name, context):\n    return env.get(name).render(context)",
        name="render_template",
        signature="",
    ),
]


def fake_model_folder(root: Path, name: str, weights: bytes) -> Path:
    """A folder that passes for a sentence-transformers model as far as identity goes."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "config.json").write_text('{"hidden_size": 32}', encoding="utf-8")
    return folder
