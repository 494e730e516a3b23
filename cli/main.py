"""The ``engine`` command line: the composition root that wires signals into the engine.

Only this package prints and chooses exit codes (cli/invocation.py maps the engine's errors).
Each command is one module of cli/commands; heavy libraries are imported by the signals when
a command needs them, never when the CLI starts.
"""

from __future__ import annotations

import click

from cli.commands.context import context
from cli.commands.eval import eval_
from cli.commands.index import index
from cli.commands.lookup import defs, refs
from cli.commands.query import query
from cli.commands.reindex import reindex
from cli.commands.remove import remove
from cli.commands.repos import repos
from cli.commands.serve import serve
from cli.commands.status import status
from cli.commands.verify import verify
from cli.commands.watch import watch
from cli.invocation import CommandLine


@click.group(cls=CommandLine, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="engine")
def main() -> None:
    """Local-first code search: lexical, vector and symbol signals, fused."""


for command in (
    index,
    reindex,
    status,
    repos,
    remove,
    query,
    serve,
    eval_,
    defs,
    refs,
    context,
    verify,
    watch,
):
    main.add_command(command)
