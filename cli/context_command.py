"""``engine context`` and ``engine verify``, and the symbol-table adapter the context needs.

``SymbolResolver`` implements engine/context's ``DefinitionResolver`` over the symbol
signal's table (signals/symbol), which the engine may not import. ``context_for`` is what an
agent tool calls with an index it already holds open.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cli.output import dumps, printable
from engine.errors import EngineError
from engine.index.home import Home, engine_home, validate_slug

if TYPE_CHECKING:
    from engine.context.expansion import DefinitionSite, ReferenceSite
    from engine.index.opening import OpenIndex
    from signals.symbol.table import SymbolTable

EXIT_ERROR = 1


class SymbolResolver:
    """Definitions and references from one generation's symbol table.

    Without a table (the symbol signal is off) every lookup answers nothing and ``warning``
    says why, so the context still has its primary blocks.
    """

    def __init__(self, opened: OpenIndex) -> None:
        from engine.types import SYMBOL
        from signals.symbol.table import SymbolTable

        self._opened = opened
        self._table: SymbolTable | None = None
        self.warning = ""
        try:
            self._table = SymbolTable.open(opened.generation / SYMBOL)
        except EngineError as exc:
            self.warning = f"no definitions added: {exc}"

    def close(self) -> None:
        if self._table is not None:
            self._table.close()

    def definitions_named(self, names: Collection[str]) -> Mapping[str, Sequence[DefinitionSite]]:
        from engine.context.expansion import DefinitionSite
        from signals.symbol.table import TREE_SITTER

        if self._table is None or not names:
            return {}
        wanted = set(names)
        ids = [i for i, *_ in self._table.exact(sorted({n.lower() for n in wanted}))]
        found: dict[str, list[DefinitionSite]] = {}
        for record in self._table.records(ids).values():
            if record.name not in wanted:
                continue  # the table matches names case-insensitively; code does not
            found.setdefault(record.name, []).append(
                DefinitionSite(
                    key=record.symbol,
                    name=record.name,
                    symbol=record.readable,
                    kind=record.kind,
                    path=record.path,
                    start_line=record.start_line,
                    end_line=record.end_line,
                    chunk_id=record.chunk_id,
                    indexed=record.source != TREE_SITTER,
                )
            )
        return found

    def references(self, site: DefinitionSite) -> Sequence[ReferenceSite]:
        from engine.context.expansion import ReferenceSite
        from signals.symbol.lookup import find_references

        if self._table is None:
            return []
        store = self._opened.store
        if site.indexed:
            records = self._table.references([site.key])
            chunks = store.chunks(sorted({r.chunk_id for r in records if r.chunk_id is not None}))
            found: list[ReferenceSite] = []
            for r in records:
                chunk = chunks.get(r.chunk_id) if r.chunk_id is not None else None
                found.append(
                    ReferenceSite(
                        r.path,
                        r.line,
                        chunk.start_line if chunk else r.line,
                        chunk.end_line if chunk else r.line,
                        chunk.qualified_name if chunk else "",
                        exact=True,
                    )
                )
            return found
        # No index records this definition's uses: lookup matches its name in every chunk.
        return [
            ReferenceSite(
                loc.path, loc.line, loc.start_line, loc.end_line, loc.enclosing, loc.exact
            )
            for loc in find_references(self._opened.generation, store, site.symbol, limit=500)
            if loc.role == "reference"
        ]


def context_for(
    opened: OpenIndex,
    query: str,
    budget_tokens: int,
    expansion_share: float | None = None,
    include_tests: bool = False,
    limit: int | None = None,
) -> dict[str, Any]:
    """The context JSON object for an open index (the agent tool's entry point)."""
    from engine.context.assembly import DEFAULT_EXPANSION_SHARE, assemble_context

    resolver = SymbolResolver(opened)
    try:
        data = assemble_context(
            opened,
            resolver,
            query,
            budget_tokens,
            DEFAULT_EXPANSION_SHARE if expansion_share is None else expansion_share,
            include_tests,
            limit=limit,
        )
    finally:
        resolver.close()
    if resolver.warning:
        data["warning"] = "; ".join(filter(None, [data.get("warning"), resolver.warning]))
    return data


@contextmanager
def _reported(as_json: bool) -> Iterator[None]:
    """The engine's errors as ``{"error": ...}`` or a red line, and exit code 1."""
    try:
        yield
    except EngineError as exc:
        if as_json:
            click.echo(dumps({"error": str(exc)}))
        else:
            click.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(EXIT_ERROR)


@click.command(name="context")
@click.argument("slug")
@click.argument("text")
@click.option(
    "--budget",
    "budget_tokens",
    required=True,
    type=click.IntRange(1, 10_000_000),
    help="Fit everything into this many tokens.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print Markdown (the default).")
@click.option(
    "--expansion-share",
    type=click.FloatRange(0.0, 1.0, max_open=True),
    help="Share of the budget kept for the definitions the code uses (default 0.2).",
)
@click.option("--tests", "include_tests", is_flag=True, help="List tests that use the code.")
@click.option(
    "--limit",
    type=click.IntRange(1, 100),
    help="Search results considered for the primary blocks (default: by budget, 10 to 50).",
)
def context_command(
    slug: str,
    text: str,
    budget_tokens: int,
    as_json: bool,
    as_markdown: bool,
    expansion_share: float | None,
    include_tests: bool,
    limit: int | None,
) -> None:
    """The code that answers TEXT in SLUG, with the definitions it uses, within a token budget."""
    with _reported(as_json):
        from engine.context.markdown import context_markdown
        from engine.errors import UsageError
        from engine.index.opening import open_index
        from engine.signal import OpenOptions
        from signals import registry

        if as_json and as_markdown:
            raise UsageError("choose one of --json and --markdown")
        home = Home(engine_home())
        options = OpenOptions(home=home.root, one_shot=True)
        opened = open_index(home, validate_slug(slug), registry.plugins(), options)
        try:
            data = context_for(opened, text, budget_tokens, expansion_share, include_tests, limit)
        finally:
            opened.close()
        click.echo(dumps(data) if as_json else context_markdown(data), nl=as_json)


@click.command(name="verify")
@click.argument("slug")
@click.option(
    "--sample",
    default=200,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    help="How many indexed chunks to compare with the files on disk.",
)
@click.option("--seed", type=int, help="Sample the same chunks every time.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def verify_command(slug: str, sample: int, seed: int | None, as_json: bool) -> None:
    """Check a sample of SLUG's indexed chunks against the files on disk."""
    with _reported(as_json):
        from engine.index.opening import load_manifest
        from engine.index.store import STORE_FILE, ChunkStore
        from engine.index.verify import verify_chunks

        entry = Home(engine_home()).get(validate_slug(slug))
        generation, _ = load_manifest(entry)
        store = ChunkStore.open_readonly(generation / STORE_FILE)
        try:
            report = verify_chunks(Path(entry.root), store, sample, seed=seed)
        finally:
            store.close()
        data = report.as_json(slug)
        if as_json:
            click.echo(dumps(data))
            return
        click.echo(
            f"{slug}: {report.stale} of {report.sampled} sampled chunks are stale "
            f"({report.stale_share:.1%}) across {report.files} files"
        )
        for item in report.examples:
            click.echo(f"  {printable(item.path)}:{item.start_line}-{item.end_line}  {item.reason}")
        if report.reindex_suggested:
            click.secho(
                f"  more than {report.threshold:.0%} stale — run engine reindex {slug}",
                fg="yellow",
            )
