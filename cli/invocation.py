"""One command invocation: its output mode, its index home, and the one mapping of the
engine's errors to ``{"error": ...}`` or a red line and exit code 1.

Every command reports failures through ``errors_reported``; only this module picks the exit
code for them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")(func)


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
