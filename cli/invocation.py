"""One command invocation: its output mode, its index home, and the one mapping of the
engine's errors to ``{"error": ...}`` or a red line and exit code 1.

Every command reports failures through ``errors_reported``; only this module picks the exit
code for them. ``CommandLine``, the root group, sends click's own usage errors under
``--json`` and a stdout that refuses writes through the same mapping.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click

from cli.output import dumps
from engine.errors import EngineError, UsageError
from engine.index.home import Home, engine_home
from engine.signal import SignalPlugin

EXIT_ERROR = 1
INTERRUPTED = "interrupted — the previous index is intact; run the command again to finish"


class Invocation:
    """What every command needs: whether to print JSON, and the index home."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    @functools.cached_property
    def home(self) -> Home:
        # On first use, inside ``errors_reported``: a bad $ENGINE_HOME is a UsageError.
        return Home(engine_home())


def fail(message: str, as_json: bool) -> NoReturn:
    if as_json:
        click.echo(dumps({"error": message}))
    else:
        click.secho(f"error: {message}", fg="red", err=True)
    sys.exit(EXIT_ERROR)


@contextmanager
def errors_reported(as_json: bool, *, interrupted: str | None = INTERRUPTED) -> Iterator[None]:
    """Turn the engine's errors (things a user can fix) into a message and exit code 1.

    ``interrupted=None`` lets Ctrl-C through, for a command that handles it itself.
    """
    try:
        yield
    except EngineError as exc:
        fail(str(exc), as_json)
    except KeyboardInterrupt:
        if interrupted is None:
            raise
        fail(interrupted, as_json)


class CommandLine(click.Group):
    """The root command: click's usage errors (``--limit 0``) become ``{"error": ...}`` and exit
    code 1 under ``--json``, as the engine's errors do; a stdout that refuses writes (a full
    disk, ``> /dev/full``, a closed pipe) is one line on stderr and exit code 1."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Noted before parsing: a usage error is raised while parsing, before the command has
        # its own --json flag to go by.
        words = args[: args.index("--")] if "--" in args else args
        ctx.meta[_AS_JSON] = "--json" in words
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            if not ctx.meta.get(_AS_JSON):
                raise  # click shows the usage text and exits with 2
            where = exc.ctx if isinstance(exc, click.UsageError) else None
            hint = f" (see {where.command_path} --help)" if where is not None else ""
            fail(f"{exc.format_message()}{hint}", as_json=True)
        except OSError as exc:
            if exc.errno not in _REFUSED_WRITES or not _raised_by_echo(exc):
                raise
            _silence_stdout()
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            click.echo(f"error: cannot write the output: {reason}", err=True)
            sys.exit(EXIT_ERROR)


_AS_JSON = "engine.as_json"
_REFUSED_WRITES = {errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EBADF}


def _raised_by_echo(exc: OSError) -> bool:
    """Whether ``exc`` is the output refusing a write: every line the CLI prints goes through
    ``click.echo``; the engine's own refused writes arrive as an ``EngineError``."""
    return any(
        frame.f_code is click.echo.__code__ for frame, _ in traceback.walk_tb(exc.__traceback__)
    )


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null, so the interpreter's last flush of what stdout holds cannot
    print a second error (``Exception ignored ...``) and change the exit code to 120."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (CliRunner's capture): nothing to flush at exit
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")(func)


# engine.cluster.search_router.DEFAULT_DEADLINE_MS, spelled here so that the CLI's start
# never imports engine.cluster (the local path loads nothing of it).
DEFAULT_DEADLINE_MS = 500.0


def cluster_options(cluster_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--cluster ADDRESS``, ``--cluster-store`` and ``--deadline-ms``: the options of a
    command that can search through a Ray cluster (``cluster_help`` says what it sends)."""

    def apply(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(
            (
                click.option("--cluster", "cluster", metavar="ADDRESS", help=cluster_help),
                click.option(
                    "--cluster-store",
                    type=click.Path(file_okay=False, path_type=Path),
                    help="With --cluster: the shared index folder the shards copy from "
                    "(default $ENGINE_HOME).",
                ),
                click.option(
                    "--deadline-ms",
                    default=DEFAULT_DEADLINE_MS,
                    show_default=True,
                    type=click.FloatRange(1, 600_000),
                    help="With --cluster: answer with the shards that answered by then.",
                ),
            )
        ):
            func = option(func)
        return func

    return apply


def plugins() -> dict[str, SignalPlugin]:
    """The registered signals (imported when a command runs, not when the CLI starts)."""
    from signals.registry import plugins as registered

    return registered()


def signal_list(value: str | None) -> list[str] | None:
    """``--signals lexical,vector`` as names; None when not given."""
    if not value:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise UsageError("--signals needs at least one name, e.g. --signals lexical,vector")
    return names
