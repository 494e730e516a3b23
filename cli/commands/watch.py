"""``engine watch``: keep one repository's index current while its files change.

Ctrl-C (or SIGTERM) ends it with exit code 0: an update cut short leaves the previous
generation published.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import click

from cli.invocation import fail
from cli.output import dumps, printable
from engine.errors import EngineError, RepoNotFound
from engine.index.home import Home, engine_home, validate_slug


def _emit(data: dict[str, Any], line: str, as_json: bool) -> None:
    if as_json:
        click.echo(dumps(data).replace("\n", ""))  # one event per line (JSON lines)
    else:
        click.echo(line)


def _resolve(home: Home, repo: str, slug: str | None) -> tuple[str, Path | None]:
    """The slug to watch, and the folder to index first when ``--name`` asks for a new one.

    REPO is validated like every slug argument: an indexed repository's name, or the folder
    of one. Indexing a folder that is not indexed yet takes ``--name``, so that a mistyped
    name or a path like ``../../etc`` never starts indexing whatever folder it points at.
    """
    folder = Path(repo)
    if slug is not None:
        if not folder.is_dir():
            raise RepoNotFound(f"{repo} is not a folder — --name names the index of a folder")
        return validate_slug(slug), folder
    if _is_slug(repo):
        try:
            return home.get(repo).slug, None  # a name wins over a folder of the same name
        except RepoNotFound:
            pass
    if folder.is_dir():
        root = folder.resolve()
        for entry in home.list():
            if entry.root.resolve() == root:
                return entry.slug, None
        raise RepoNotFound(
            f"{repo} is a folder that is not indexed — to index and watch it, give it a "
            f"name: engine watch {repo} --name NAME (or run engine index {repo} first)"
        )
    if folder.exists():
        raise RepoNotFound(f"{repo} is not a folder — give an indexed repository's name or folder")
    home.get(validate_slug(repo))  # raises the "no index for ..." error with its fix
    return repo, None


def _is_slug(text: str) -> bool:
    try:
        validate_slug(text)
    except EngineError:
        return False
    return True


def _updated(slug: str, event: Any, as_json: bool) -> None:
    report = event.report
    if report.up_to_date:
        what = f"already up to date ({report.generation})"
    else:
        what = (
            f"updated {report.generation}: +{report.files_added} ~{report.files_changed} "
            f"-{report.files_removed} files, {report.chunks} chunks"
        )
    _emit(
        {
            "event": "updated",
            "repo": slug,
            "generation": report.generation,
            "upToDate": report.up_to_date,
            "filesAdded": report.files_added,
            "filesChanged": report.files_changed,
            "filesRemoved": report.files_removed,
            "chunks": report.chunks,
            "seconds": round(event.seconds, 3),
            "problems": len(report.problems),
        },
        f"{slug}: {what} in {event.seconds:.2f}s",
        as_json,
    )


@click.command()
@click.argument("repo")
@click.option(
    "--name", "slug", help="Index REPO, a folder, under this name first (required when new)."
)
@click.option(
    "--quiet-period",
    "quiet_s",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0.0, 3600.0),
    help="Seconds without a change before an update starts (one update per burst).",
)
@click.option(
    "--interval",
    "poll_s",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0.05, 3600.0),
    help="Shortest pause between two scans (longer for trees that take long to scan).",
)
@click.option(
    "--max-delay",
    "max_delay_s",
    default=30.0,
    show_default=True,
    type=click.FloatRange(0.0, 86400.0),
    help="Update at the latest this many seconds after a change, even if changes go on.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per event.")
def watch(
    repo: str,
    slug: str | None,
    quiet_s: float,
    poll_s: float,
    max_delay_s: float,
    as_json: bool,
) -> None:
    """Keep the index of REPO current as files change, until Ctrl-C.

    REPO is an indexed repository's name or its folder; a folder not indexed yet needs
    --name, and is indexed first."""
    from engine.indexing.indexer import Indexer
    from engine.indexing.walk import MAX_FILE_BYTES
    from engine.indexing.watch import Watcher, WatchEvent, WatchOptions, indexed_state, tree_state
    from engine.signal import IndexOptions
    from signals.registry import plugins

    home = Home(engine_home())
    # SIGTERM (a supervisor stopping it) ends the watch like Ctrl-C does.
    previous_handler = signal.signal(signal.SIGTERM, signal.default_int_handler)
    updates = 0
    name = repo
    try:
        name, folder = _resolve(home, repo, slug)
        indexer = Indexer(home, plugins(), IndexOptions(home=home.root))
        if folder is not None:
            report = indexer.index(name, folder, wait=True)
            _emit(
                {"event": "indexed", "repo": name, "generation": report.generation},
                f"{name}: indexed {printable(str(folder))} ({report.generation})",
                as_json,
            )
        root = home.get(name).root
        watcher = Watcher(
            lambda: tree_state(root, max_file_bytes=MAX_FILE_BYTES),
            lambda: indexed_state(home, name),
            lambda: indexer.reindex(name, wait=True),
            WatchOptions(quiet_s=quiet_s, poll_s=poll_s, max_delay_s=max_delay_s),
        )

        def on_event(event: WatchEvent) -> None:
            if event.kind == "updated":
                _updated(name, event, as_json)
            elif event.kind == "failed":
                _emit(
                    {"event": "failed", "repo": name, "error": event.error},
                    f"{name}: update failed, will retry: {event.error}",
                    as_json,
                )
            elif event.kind == "waiting":
                _emit(
                    {"event": "changed", "repo": name, "changed": event.changed},
                    f"{name}: {event.changed} files changed, updating once they settle",
                    as_json,
                )

        _emit(
            {"event": "watching", "repo": name, "root": str(root)},
            f"{name}: watching {printable(str(root))} (Ctrl-C to stop)",
            as_json,
        )
        try:
            watcher.run(on_event)
        finally:
            updates = watcher.updates
    except KeyboardInterrupt:
        pass  # the way to stop watching; an update cut short was not published
    except EngineError as exc:  # e.g. the folder went away: a scan cannot list it
        fail(str(exc), as_json)
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
    _emit(
        {"event": "stopped", "repo": name, "updates": updates},
        f"{name}: stopped watching after {updates} updates",
        as_json,
    )
