"""``engine context``: the code that answers a question plus the definitions it uses."""

from __future__ import annotations

import click

from cli.invocation import errors_reported
from cli.output import dumps, printable_code
from engine.index.home import Home, engine_home, validate_slug


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
def context(
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
    with errors_reported(as_json, interrupted=None):
        from engine.context.assembly import context_for
        from engine.context.markdown import context_markdown
        from engine.errors import UsageError
        from engine.index.opening import open_index
        from engine.indexing.freshness import DiskFiles
        from engine.search.tokens import agent_counter
        from engine.signal import OpenOptions
        from signals import registry
        from signals.symbol.resolver import SymbolResolver

        if as_json and as_markdown:
            raise UsageError("choose one of --json and --markdown")
        home = Home(engine_home())
        options = OpenOptions(home=home.root, one_shot=True)
        opened = open_index(
            home, validate_slug(slug), registry.plugins(), options, files=DiskFiles.of
        )
        try:
            data = context_for(
                opened,
                SymbolResolver,
                text,
                budget_tokens,
                counter=agent_counter(),
                expansion_share=expansion_share,
                include_tests=include_tests,
                limit=limit,
            )
        finally:
            opened.close()
        click.echo(dumps(data) if as_json else printable_code(context_markdown(data)), nl=as_json)
