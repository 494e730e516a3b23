"""The agent tools and the registry the server serves (cli/serve/server.py).

One module per group: ``search`` (semanticSearch, assembleContext), ``symbols`` (findSymbol,
findReferences, fileOutline's neighbours by name), ``files`` (readRange, fileOutline),
``related`` (findRelated), ``indexing`` (listRepos, indexStatus, reindex, indexRepository).
``common`` holds what they share (the context, the spec, argument checks), ``answer`` the
token budget and pagination, ``schemas`` each answer's outputSchema.

To add a tool: write its function and description in the module it belongs to, its answer's
model in ``schemas``, and a ``ToolSpec`` below.
"""

from __future__ import annotations

from cli.serve.tools import files, indexing, related, schemas, search, symbols
from cli.serve.tools.common import ToolContext, ToolSpec, repo_names

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "semanticSearch", search.SEMANTIC_SEARCH, search.semantic_search, schemas.SearchAnswer
    ),
    ToolSpec("findSymbol", symbols.FIND_SYMBOL, symbols.find_symbol, schemas.SymbolAnswer),
    ToolSpec(
        "findReferences", symbols.FIND_REFERENCES, symbols.find_references, schemas.SymbolAnswer
    ),
    ToolSpec("findRelated", related.FIND_RELATED, related.find_related, schemas.RelatedAnswer),
    ToolSpec("fileOutline", files.FILE_OUTLINE, files.file_outline, schemas.OutlineAnswer),
    ToolSpec("readRange", files.READ_RANGE, files.read_range, schemas.RangeAnswer),
    ToolSpec(
        "assembleContext", search.ASSEMBLE_CONTEXT, search.assemble_context, schemas.ContextAnswer
    ),
    ToolSpec("indexStatus", indexing.INDEX_STATUS, indexing.index_status, schemas.StatusAnswer),
    ToolSpec("listRepos", indexing.LIST_REPOS, indexing.list_repos, schemas.ReposAnswer),
    ToolSpec(
        "reindex",
        indexing.REINDEX,
        indexing.reindex,
        schemas.JobAnswer,
        read_only=False,
        progress=True,
    ),
    ToolSpec(
        "indexRepository",
        indexing.INDEX_REPOSITORY,
        indexing.index_repository,
        schemas.JobAnswer,
        read_only=False,
        progress=True,
    ),
)

__all__ = ["TOOLS", "ToolContext", "ToolSpec", "repo_names"]
