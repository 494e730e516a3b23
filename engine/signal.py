"""The contract between the engine and its signals (lexical, vector, symbol, ...).

The engine never imports ``signals/``: ``cli`` builds signals from the registry and hands
them over through these protocols. A signal owns one folder inside each index generation
(``<generation>/<signal name>/``); what it keeps there is its own business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from engine.types import Chunk, ChunkDraft, Definition, Hit, Query

EmbedPrecision = Literal["fp32", "mixed", "int8"]
"""How the vector signal embeds documents: the model's own weights, int8 where each layer's
feed-forward block widens, or int8 throughout."""

ScipIndexerChoice = Literal["auto", "none"]
"""Whether indexing runs the installed real SCIP indexers ("auto") or not ("none")."""

EmbedderProvider = Literal["local", "openai", "voyage"]
"""Who embeds the vector signal's texts: the bundled (or ``--model``) model on this machine,
an OpenAI-compatible ``/embeddings`` endpoint, or Voyage's API. Only "local" keeps the code
on this machine."""

VectorTier = Literal["fast", "full"]
"""Which vectors an index keeps: "fast" only a static model's (distilled from the bundled
MiniLM, thousands of chunks per second), "full" MiniLM's, with the static ones answering
until they are done."""

ProgressFn = Callable[[str, int, int], None]
"""progress(stage, done, total): called by long-running builders; total 0 means unknown."""

ChunkAnalyzer = Callable[[Sequence[ChunkDraft]], Sequence[Any]]
"""analyze(one file's chunks) -> one picklable result per chunk, in order.

Per-chunk work that depends on nothing but the chunk (the lexical signal's tokenisation). It
runs in the chunking worker processes, on every core, so it must be a module-level function;
its results reach the builder as ``BuildJob.analyses``."""


def no_progress(stage: str, done: int, total: int) -> None:
    del stage, done, total


class Signal(Protocol):
    """A searchable signal: ranked chunk ids (or chunkless locations) for a query."""

    @property
    def name(self) -> str: ...

    @property
    def warning(self) -> str:
        """Why this signal's answers may be degraded (e.g. model mismatch); "" when fine."""
        ...

    def search(self, query: Query, limit: int) -> list[Hit]:
        """Best first, at most ``limit`` hits; an empty list when nothing matches."""
        ...


class ChunkSource(Protocol):
    """Read access to the chunks of the generation being built."""

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]: ...

    def iter_chunks(self) -> Iterable[Chunk]: ...

    def chunk_count(self) -> int: ...


@dataclass(frozen=True, slots=True)
class BuildJob:
    """One incremental update of one signal, from the previous generation to a new one.

    ``previous_dir`` is None for a first build (or after the signal's data was lost); then
    ``added`` holds every chunk. Otherwise the builder starts from ``previous_dir``, removes
    ``removed_ids`` (and everything under ``removed_paths``) and adds ``added``; it must never
    write into ``previous_dir``, which readers may still be using.
    """

    repo_root: Path
    directory: Path  # the signal's folder in the new generation (created, empty)
    previous_dir: Path | None
    previous_meta: Mapping[str, Any]  # what the builder returned last time ({} on first build)
    added: Sequence[Chunk]
    removed_ids: Sequence[int]
    removed_paths: Sequence[str]
    definitions: Sequence[Definition]  # every definition in the repository after the update
    changed_paths: Sequence[str]  # files added or modified in this update
    source: ChunkSource
    progress: ProgressFn = no_progress
    # What the plugin's ``analyze`` gave, by chunk id, for chunks chunked in this update (not
    # necessarily all of ``added``): the builder analyses any other chunk itself.
    analyses: Mapping[int, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What a builder did. ``meta`` is stored in the manifest and handed to ``open``."""

    ready: bool
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # "path: reason" lines for the report
    message: str = ""  # one line for the index summary
    # False: a first tier that a slow build will replace (``TieredBuilder``); the signal is
    # published ready but not synced, so the slow phase, or the next run after an
    # interrupt, still builds it.
    complete: bool = True
    # What the user must hear about this build even when it succeeded (code sent to a remote
    # embedder, a re-embedding forced by a dimension change): printed on stderr and in --json.
    warnings: list[str] = field(default_factory=list)


class SignalBuilder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def slow(self) -> bool:
        """A slow builder (embedding) runs after the fast ones have been published."""
        ...

    def build(self, job: BuildJob) -> BuildReport: ...


class ChunkStream(Protocol):
    """A first build of one signal, fed the chunks while the files are still being chunked.

    ``add`` takes each batch of chunks as the store gives them ids, in id order; ``finish``
    completes the build; ``abort`` stops it after a failure or an interrupt (the indexer then
    removes the signal's folder, and the generation with it).
    """

    def add(self, chunks: Sequence[Chunk], analyses: Sequence[Any]) -> None:
        """``analyses[i]`` is what the plugin's ``analyze`` gave for ``chunks[i]``, None when
        it gave nothing (the stream then analyses that chunk itself)."""
        ...

    def finish(self) -> BuildReport: ...

    def abort(self) -> None: ...


@runtime_checkable
class StreamingBuilder(Protocol):
    """A builder that can also build from empty as the chunks arrive (``ChunkStream``), so
    that its work overlaps the chunking instead of following it. The indexer streams only
    a build from empty (a first index, or ``--full``); every update still goes through
    ``build``, and the result must be the same either way."""

    def start_stream(self, directory: Path, progress: ProgressFn) -> ChunkStream:
        """``directory`` is the signal's folder in the new generation (created, empty)."""
        ...


@runtime_checkable
class ConfiguredBuilder(Protocol):
    """A builder whose output depends on choices the user can change (e.g. the embedding
    model): with no file changed, the indexer still updates when one says they changed."""

    def settings_changed(self, previous_meta: Mapping[str, Any]) -> bool: ...


@dataclass(frozen=True, slots=True)
class EmbedderChoice:
    """The embedder the user named at ``engine index`` time (``--embedder`` and its options).

    None fields take the provider's defaults. The key itself is never part of it: only the
    name of the environment variable that holds it."""

    provider: EmbedderProvider
    url: str | None = None  # the API's base URL, e.g. http://127.0.0.1:11434/v1
    model: str | None = None
    key_env: str | None = None  # name of the environment variable holding the API key
    dim: int | None = None  # ask the endpoint for vectors of this size, when it can shorten


@runtime_checkable
class TieredBuilder(Protocol):
    """A slow builder that can publish a quick first tier in the fast phase (the vector
    signal's static vectors), so that it answers seconds after chunking; its ``build`` then
    runs in the slow phase, unless the first tier said it is ``complete``."""

    def build_first_tier(self, job: BuildJob) -> BuildReport | None:
        """None: no first tier is needed (the previous full index is carried forward)."""
        ...


@runtime_checkable
class TieredSignal(Protocol):
    """A signal that can answer from more than one tier says which one did."""

    @property
    def tier(self) -> str: ...


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """What the user chose at ``engine index`` time that signals care about."""

    home: Path  # $ENGINE_HOME, for caches shared between repositories (embeddings, models)
    model: str | None = None  # a local sentence-transformers folder; None = the bundled model
    scip_file: Path | None = None  # an index.scip given by the user
    scip_indexer: ScipIndexerChoice = "none"
    scip_timeout_s: float = 300.0
    # How the vector signal embeds documents; None keeps what the index recorded (else the
    # signal's measured default).
    embed_precision: EmbedPrecision | None = None
    document_tokens: int | None = None  # word pieces read per document
    vectors: VectorTier | None = None  # None keeps what the index recorded, else "full"
    # Who embeds the vector signal's texts; None keeps what the index recorded (else local).
    embedder: EmbedderChoice | None = None


@dataclass(frozen=True, slots=True)
class OpenOptions:
    """What the caller chose at query time that signals care about."""

    home: Path
    model: str | None = None  # the configured model; a mismatch with the index is a warning
    # The process answers one query and exits (`engine query`): signals skip set-up that
    # only pays off over many queries. Servers and evaluation runs keep the default.
    one_shot: bool = False
    # Every query arrives with its vectors (``Query.vectors``, made by a cluster's router):
    # the vector signal opens without its embedding model, saving its memory and load time,
    # and a query without a vector for the index's model is refused, never embedded here.
    query_vectors: bool = False


class SignalOpener(Protocol):
    """Opens a signal's folder of a published generation for searching."""

    def __call__(
        self, directory: Path, meta: Mapping[str, Any], options: OpenOptions
    ) -> Signal: ...


SignalCheck = Callable[[Path, Mapping[str, Any]], None]
"""check(directory, meta): raises IndexCorrupt, IndexIncompatible or SignalUnavailable, saying
what is wrong, when a published signal folder could not open; returns None when it could.

Cheap, because ``engine status`` and every ``engine reindex`` run it: the files are there
and their headers read, as the signal's own open path finds them (a FAISS index is not
loaded, no model is). Damage deeper in a file is left to ``open`` and the search."""


@dataclass(frozen=True, slots=True)
class SignalPlugin:
    """A registry entry: how to build a signal's index and how to open it for search, and
    optionally per-chunk work to do in the chunking worker processes (``ChunkAnalyzer``).

    The callables must import their heavy libraries lazily, inside the call.
    """

    name: str
    make_builder: Callable[[IndexOptions], SignalBuilder]
    open: SignalOpener
    analyze: ChunkAnalyzer | None = None
    # Rejects what the user chose for this signal (a --model folder that is not a model)
    # before anything is written: raises UsageError with the fix. A signal that merely cannot
    # run (its library missing) is not an error here; its builder reports it.
    check_options: Callable[[IndexOptions], None] | None = None
    # Whether a published folder of this signal is whole (``SignalCheck``): status reports a
    # signal that fails it as damaged, and reindex rebuilds it. None: only ``open`` can tell.
    check: SignalCheck | None = None
