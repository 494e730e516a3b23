"""The shared vocabulary: the data types every stage of indexing and search passes around.

This module imports nothing else from the project. Positions are always relative to the
file (never to a snippet); lines are 1-based and inclusive; paths are repository-relative
and use ``/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# Signal names are plain strings so that a fourth signal needs no edit here; the three that
# ship are named by these constants.
LEXICAL = "lexical"
VECTOR = "vector"
SYMBOL = "symbol"

ChunkKind = Literal[
    "function",
    "method",
    "class",
    "interface",
    "struct",
    "enum",
    "trait",
    "impl",
    "module",  # module-level code between definitions
    "section",  # a markdown heading section
    "window",  # a line window of a file without a grammar
]

# Whether a result is true of its file on disk now (engine/search/freshness.py): "current"
# (as indexed, or the file changed elsewhere), "moved" (the same code, now at the lines given),
# "stale" (the file no longer holds this code: lines and content are as indexed).
Freshness = Literal["current", "moved", "stale"]

DefinitionKind = Literal[
    "function", "method", "class", "interface", "struct", "enum", "trait", "impl", "module"
]


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk as the chunker produces it, before the store gives it an id."""

    path: str
    language: str
    kind: ChunkKind
    name: str  # the definition's own name; "" for module/section/window chunks
    qualified_name: str  # e.g. "Greeter.greet"; "" when there is no definition
    parent: str  # qualified name of the enclosing definition, "" at top level
    start_line: int  # 1-based, inclusive, relative to the file
    end_line: int  # 1-based, inclusive, relative to the file
    text: str  # exactly the file's lines start_line..end_line joined with "\n"
    signature: str = ""  # the definition's header line(s); "" when none
    docstring: str = ""  # the definition's doc comment or docstring; "" when none


@dataclass(frozen=True, slots=True)
class Chunk:
    """A stored chunk. ``id`` is stable for as long as the chunk's file is unchanged."""

    id: int
    path: str
    language: str
    kind: ChunkKind
    name: str
    qualified_name: str
    parent: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    text: str
    signature: str = ""
    docstring: str = ""

    @classmethod
    def from_draft(cls, chunk_id: int, draft: ChunkDraft) -> Chunk:
        return cls(
            chunk_id,
            draft.path,
            draft.language,
            draft.kind,
            draft.name,
            draft.qualified_name,
            draft.parent,
            draft.start_line,
            draft.end_line,
            draft.text,
            draft.signature,
            draft.docstring,
        )


@dataclass(frozen=True, slots=True)
class Definition:
    """A definition found by the chunker, the input of the tree-sitter SCIP emitter."""

    path: str
    language: str
    kind: DefinitionKind
    name: str
    qualified_name: str  # dotted within the file, e.g. "Greeter.greet"
    name_line: int  # 1-based line of the name identifier
    name_start_col: int  # 0-based UTF-8 byte column where the name starts
    name_end_col: int  # 0-based UTF-8 byte column just past the name
    start_line: int  # 1-based inclusive line range of the whole definition
    end_line: int


@dataclass(frozen=True, slots=True)
class FileChunks:
    """What the chunker returns for one file."""

    chunks: list[ChunkDraft]
    definitions: list[Definition]


@dataclass(frozen=True, slots=True)
class Location:
    """A region of a file: repository-relative path, 1-based inclusive lines."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions on which chunks may be returned; empty means no restriction."""

    languages: tuple[str, ...] = ()
    path_globs: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class QueryVector:
    """A query's embedding, computed once by whoever sends the query (a cluster's router).

    ``embedder`` is the model id of the embedder that made it (the vector signal's
    ``model_id`` in the index meta, which differs per tier and precision): a vector is only
    meaningful against an index embedded by that same model. ``data`` is the vector as
    little-endian float32 bytes, ``dim * 4`` of them, L2-normalised; bytes keep the query
    frozen and hashable and cost nothing to pickle.
    """

    embedder: str
    data: bytes

    @property
    def dim(self) -> int:
        return len(self.data) // 4


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    filters: Filters = field(default_factory=Filters)
    # Precomputed embeddings of ``text``, at most one per embedder: the vector signal uses the
    # one its index was embedded with instead of embedding the text itself. () for a local
    # query, which embeds in the signal as always.
    vectors: tuple[QueryVector, ...] = ()

    def vector_for(self, embedder: str) -> QueryVector | None:
        return next((v for v in self.vectors if v.embedder == embedder), None)


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked answer from one signal, before fusion.

    ``chunk_id`` names the stored chunk. A hit with no chunk (a symbol defined in a file that
    has no chunk) sets ``chunk_id`` to None and gives ``location`` instead.
    """

    chunk_id: int | None
    score: float  # the signal's raw score; larger is better; not comparable across signals
    symbol: str = ""  # readable symbol the hit is about, e.g. "toy.greeter.greet"
    location: Location | None = None


@dataclass(frozen=True, slots=True)
class SignalRun:
    """What one signal did for one query: its ranked hits, time taken, or why it failed."""

    signal: str
    hits: list[Hit]
    latency_ms: float
    error: str = ""
    tier: str = ""  # which tier answered, for a signal that has several ("fast", "full")


@dataclass(frozen=True, slots=True)
class Contribution:
    """One signal's part in a fused result, for --explain."""

    signal: str
    rank: int  # 1-based rank within that signal's list
    raw_score: float
    weight: float
    rrf: float  # weight / (k + rank)


@dataclass(frozen=True, slots=True)
class Adjustment:
    """One ranking feature's part in a result's final score, for --explain."""

    feature: str  # a name in engine.search.ranking.rerank.FEATURES, or "prior"
    factor: float  # what it multiplied the score by
    reason: str


@dataclass(frozen=True, slots=True)
class Result:
    """A fused, ranked answer: the unit every formatter prints."""

    repo: str
    path: str
    start_line: int  # 1-based inclusive
    end_line: int  # 1-based inclusive
    symbol_name: str  # the name within the file, e.g. "Greeter.greet"; "" for module code
    content: str
    score: float  # in [0, 1]; comparable across queries of one repository
    sources: tuple[str, ...]  # signal names that ranked it, in a fixed order
    chunk_id: int | None = None
    language: str = ""
    kind: str = ""
    contributions: tuple[Contribution, ...] = ()
    prior: float = 1.0  # the path prior that scaled the fused score (1.0: none)
    prior_reason: str = ""  # "test", "generated-or-vendored", or ""
    duplicates: tuple[str, ...] = ()  # other paths holding identical content
    name: str = ""  # the chunk's own definition name; "" for module, section and window chunks
    adjustments: tuple[Adjustment, ...] = ()  # the ranking stage's factors, in order applied
    freshness: Freshness = "current"
    qualified_name: str = ""  # engine.qualified's full name, e.g. "toy.greeter.Greeter.greet"
    # The whole definition this chunk is part of, when the chunk is smaller (a class's header,
    # a window of a long function): 1-based inclusive file lines; 0 when the chunk is whole.
    definition_start_line: int = 0
    definition_end_line: int = 0
    # A later part of its definition, not its header: fields between a class's methods, a long
    # body's second window. It shares the definition's name and kind but does not define it.
    continued: bool = False

    def contract_json(self) -> dict[str, object]:
        """The fields every answer carries in JSON (``engine query --json``, the agent tool,
        ``engine context``): names and meanings are the public contract (README)."""
        data: dict[str, object] = {
            "repo": self.repo,
            "filePath": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "symbolName": self.symbol_name,
            "content": self.content,
            "score": self.score,
            "sources": list(self.sources),
        }
        if self.qualified_name:
            data["qualifiedName"] = self.qualified_name
        if self.definition_start_line:
            data["definition"] = {
                "startLine": self.definition_start_line,
                "endLine": self.definition_end_line,
            }
        if self.freshness != "current":
            data[self.freshness] = True  # "moved" or "stale": present only when true
        return data


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of a cluster query was answered: the repositories whose shard answered within
    the deadline out of those asked (however shards group them), and the repositories not
    searched (their shard late, dead or loading, or their index not open)."""

    answered: int
    asked: int
    missing: tuple[str, ...] = ()  # repository slugs, in the order they were asked

    @property
    def full(self) -> bool:
        return self.answered == self.asked and not self.missing


@dataclass(frozen=True, slots=True)
class SearchResponse:
    query: str
    results: list[Result]
    runs: list[SignalRun]
    warnings: list[str] = field(default_factory=list)
    low_confidence: bool = False  # nothing matched well (see engine/search/confidence.py)
    query_kind: str = ""  # how the query was routed: identifier, question or long
    # Set by a cluster's router only (engine/cluster/search_router.py); a local answer
    # searched every repository asked, or failed, and leaves it None.
    coverage: Coverage | None = None
