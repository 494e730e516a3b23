"""The shape of each tool's successful answer: its ``outputSchema``.

Clients validate ``structuredContent`` against these (the official SDK client does), so each
model lists the fields an answer always has as required and the rest as optional. Every
model allows extra fields: a newer server may add one without breaking an older client.
Names are the JSON contract's camelCase names (cli/output.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class Paged(Out):
    tokens: int = Field(description="Tokens of this answer (cl100k_base).")
    budget: int = Field(description="The token budget it was fitted into.")
    nextCursor: str | None = Field(
        None, description="Pass as cursor to get the rest; absent when nothing is left."
    )


class Lines(Out):
    repo: str
    filePath: str = Field(description="Repository-relative, '/'-separated.")
    startLine: int = Field(description="1-based, inclusive.")
    endLine: int = Field(description="1-based, inclusive.")


class SearchResult(Lines):
    symbolName: str
    score: float
    sources: list[str]
    content: str | None = Field(None, description="Exactly lines startLine..endLine.")
    detail: Literal["full", "excerpt", "signature", "location"] | None = Field(
        None,
        description="Absent or 'full': content is the whole range; 'excerpt': the chunk's "
        "best-matching lines (chunk gives its whole range).",
    )
    chunk: dict[str, int] | None = Field(None, description="The whole chunk: startLine, endLine.")
    header: str | None = None
    alsoIn: list[str] | None = None
    stale: bool | None = Field(None, description="The file changed since it was indexed.")


class Coverage(Out):
    answered: int = Field(description="Repositories searched within the deadline.")
    asked: int
    missing: list[str] = Field(description="Repositories whose shard did not answer.")


class SearchAnswer(Paged):
    query: str
    results: list[SearchResult]
    total: int
    repos: list[str] | None = None
    warning: str | None = None
    lowConfidence: bool | None = None
    coverage: Coverage | None = Field(
        None, description="Only from a server started with --cluster."
    )


class SymbolResult(Lines):
    symbolName: str
    role: Literal["definition", "reference"]
    line: int
    kind: str
    content: str | None = None
    detail: Literal["full", "signature", "location"] | None = None


class SymbolAnswer(Paged):
    query: str
    results: list[SymbolResult]
    total: int
    suggestions: list[str] | None = Field(
        None, description="Names that do exist, when none matched."
    )
    warning: str | None = None


class ContextAnswer(Out):
    query: str
    repo: str
    budget: int
    tokens: int
    primary: list[dict[str, Any]]
    expanded: list[dict[str, Any]]
    dropped: list[dict[str, Any]]


class OutlineEntry(Lines):
    name: str
    symbolName: str
    kind: str
    line: int = Field(description="The line of the name.")


class OutlineAnswer(Paged):
    repo: str
    filePath: str
    definitions: list[OutlineEntry]
    total: int


class RangeAnswer(Lines):
    content: str
    totalLines: int
    language: str | None = None
    truncated: bool | None = None


class RelatedResult(Lines):
    relation: Literal["similar", "uses", "usedBy"] = Field(
        description="similar: code like it (embeddings); uses: a definition it uses; usedBy: "
        "a place that uses it."
    )
    symbolName: str
    kind: str | None = None
    content: str | None = None
    score: float | None = None
    detail: Literal["full", "signature", "location"] | None = None


class RelatedAnswer(Paged):
    repo: str
    filePath: str
    line: int
    anchor: dict[str, Any] | None = Field(None, description="The chunk at that line.")
    results: list[RelatedResult]
    total: int


class StatusAnswer(Out):
    repo: str
    root: str


class RepoEntry(Out):
    repo: str
    root: str


class ReposAnswer(Out):
    repos: list[RepoEntry]
    total: int


class JobAnswer(Out):
    """A reindex or an indexRepository run: its summary, or {"status": "running"}."""
