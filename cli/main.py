"""The ``engine`` command line: the composition root that wires signals into the engine.

Only this package prints and chooses exit codes. Heavy libraries are imported by the signals
when a command needs them, never when the CLI starts.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import click

from cli.output import dumps, print_response, printable, response_json
from cli.progress import Progress
from engine.errors import EngineError, UsageError
from engine.index.home import Home, engine_home, slug_from_folder, validate_slug
from engine.types import Filters

EXIT_ERROR = 1


class Context:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.home = Home(engine_home())

    def fail(self, message: str) -> NoReturn:
        if self.as_json:
            click.echo(dumps({"error": message}))
        else:
            click.secho(f"error: {message}", fg="red", err=True)
        sys.exit(EXIT_ERROR)


@contextmanager
def errors_reported(ctx: Context) -> Iterator[None]:
    """Turn the engine's errors (things a user can fix) into a message and exit code 1."""
    try:
        yield
    except EngineError as exc:
        ctx.fail(str(exc))
    except KeyboardInterrupt:
        ctx.fail("interrupted — the previous index is intact; run the command again to finish")


@contextmanager
def one_shot() -> Iterator[None]:
    """Process settings for a command that answers once and exits, undone afterwards
    (tests run commands in one process).

    No cyclic garbage collection: importing numpy, onnxruntime and faiss creates enough
    objects to set off full collections that find nothing to free; a cold `engine query`
    spent ~10% of its CPU in them (0.83 -> 0.74 CPU-s, median of 8 interleaved runs).

    One OpenBLAS thread, unless the user chose otherwise: numpy starts a pool per core when
    it is imported, whose threads spin for nothing here (a query's BLAS work is a few small
    vector products); ~0.12 CPU-s per cold query, which a loaded machine pays in wall time.
    """
    enabled = gc.isenabled()
    gc.disable()
    blas_default = "OPENBLAS_NUM_THREADS" not in os.environ and "numpy" not in sys.modules
    if blas_default:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        if blas_default:
            # Children (a SCIP indexer, a reindex) get the user's environment back.
            os.environ.pop("OPENBLAS_NUM_THREADS", None)
        if enabled:
            gc.enable()


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")(func)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="engine")
def main() -> None:
    """Local-first code search: lexical, vector and symbol signals, fused."""


def _plugins() -> dict[str, Any]:
    from signals.registry import plugins

    return plugins()


def _index_options(home: Home, **kwargs: Any) -> Any:
    from engine.signal import IndexOptions

    return IndexOptions(home=home.root, **kwargs)


def _print_report(report: Any, as_json: bool) -> None:
    from dataclasses import asdict

    data = asdict(report)
    if as_json:
        click.echo(dumps(data))
        return
    verb = "built" if report.full_rebuild else "updated"
    if report.up_to_date:
        verb = "already up to date"
    click.echo(
        f"{report.repo}: index {verb} ({report.generation}) — {report.files_indexed} files, "
        f"{report.chunks} chunks"
    )
    click.echo(
        f"  files: +{report.files_added} added, ~{report.files_changed} changed, "
        f"-{report.files_removed} removed, {report.files_unchanged} unchanged"
    )
    click.echo(f"  chunks: +{report.chunks_added} added, -{report.chunks_removed} removed")
    if report.skipped:
        reasons = ", ".join(f"{reason} {count}" for reason, count in report.skipped.items())
        click.echo(f"  skipped: {sum(report.skipped.values())} ({reasons})")
    for name, state in report.signals.items():
        ready = "ready" if state.get("ready") else "not ready"
        click.echo(f"  {name}: {ready} {state.get('message', '')}".rstrip())
    stages = ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in report.stage_seconds.items())
    click.echo(f"  time: {stages}")
    for problem in report.problems[:20]:
        click.secho(f"  problem: {printable(problem)}", fg="yellow")
    if len(report.problems) > 20:
        click.secho(f"  … {len(report.problems) - 20} more problems (see --json)", fg="yellow")


@main.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", "slug", help="Repository name (default: the folder name).")
@click.option("--wait", is_flag=True, help="Wait for another indexer of this repo to finish.")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating.")
@click.option(
    "--model",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="A local sentence-transformers model folder (default: the bundled MiniLM).",
)
@click.option(
    "--scip",
    "scip_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="A SCIP index (index.scip) to take symbols from.",
)
@click.option(
    "--scip-indexer",
    type=click.Choice(["auto", "none"]),
    default="none",
    show_default=True,
    help="auto: run the installed real SCIP indexers (scip-python, scip-typescript).",
)
@click.option(
    "--embed-precision",
    type=click.Choice(["fp32", "mixed", "int8"]),
    help="fp32: the model's own weights; mixed: int8 weights where each layer's feed-forward "
    "block widens (faster, same ranking quality); int8: int8 weights throughout (faster "
    "still, lower quality; see eval/RESULTS.md). Default: what the index used, else mixed; "
    "an existing index is re-embedded (the cache keeps what it can).",
)
@click.option(
    "--document-tokens",
    type=click.IntRange(16, 512),
    help="Word pieces of each chunk's text the embedder reads (default: what the index used, "
    "else the measured default); an existing index is re-embedded.",
)
@json_option
def index(
    path: Path,
    slug: str | None,
    wait: bool,
    full: bool,
    model: Path | None,
    scip_file: Path | None,
    scip_indexer: str,
    embed_precision: str | None,
    document_tokens: int | None,
    as_json: bool,
) -> None:
    """Register the repository at PATH and index it (incrementally when already indexed)."""
    ctx = Context(as_json)
    with errors_reported(ctx):
        from engine.indexing.indexer import Indexer

        name = validate_slug(slug) if slug else slug_from_folder(path.resolve())
        progress = Progress()
        options = _index_options(
            ctx.home,
            model=str(model.resolve()) if model else None,
            scip_file=scip_file.resolve() if scip_file else None,
            scip_indexer=scip_indexer,
            embed_precision=embed_precision,
            document_tokens=document_tokens,
        )
        indexer = Indexer(ctx.home, _plugins(), options, progress)
        report = indexer.index(name, path, wait=wait, full=full)
        progress.finish()
        _print_report(report, as_json)


@main.command()
@click.argument("slug")
@click.option("--wait", is_flag=True, help="Wait for another indexer of this repo to finish.")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating.")
@json_option
def reindex(slug: str, wait: bool, full: bool, as_json: bool) -> None:
    """Bring the index of SLUG up to date with its folder (only changed files are redone)."""
    ctx = Context(as_json)
    with errors_reported(ctx):
        from engine.indexing.indexer import Indexer

        progress = Progress()
        indexer = Indexer(ctx.home, _plugins(), _index_options(ctx.home), progress)
        report = indexer.reindex(validate_slug(slug), wait=wait, full=full)
        progress.finish()
        _print_report(report, as_json)


@main.command()
@click.argument("slug", required=False)
@json_option
def status(slug: str | None, as_json: bool) -> None:
    """Show what the index of SLUG (or of every repository) holds and how fresh it is."""
    ctx = Context(as_json)
    with errors_reported(ctx):
        from engine.indexing.status import repo_status

        slugs = [validate_slug(slug)] if slug else [e.slug for e in ctx.home.list()]
        found: list[dict[str, Any]] = []
        for name in slugs:
            try:
                found.append(repo_status(ctx.home, name))
            except EngineError as exc:
                if slug:
                    raise
                found.append({"repo": name, "error": str(exc)})
        if as_json:
            click.echo(dumps(found[0] if slug else found))
            return
        if not found:
            click.echo("no repositories indexed — run engine index PATH")
        for item in found:
            _print_status(item)


def _print_status(item: dict[str, Any]) -> None:
    if "error" in item:
        click.echo(f"{item['repo']}: {item['error']}")
        return
    click.secho(f"{item['repo']}  ({printable(item['root'])})", bold=True)
    click.echo(f"  built {item['builtAt']}  {item['generation']}")
    if item.get("sourceCommit"):
        click.echo(f"  commit {item['sourceCommit']}")
    languages = ", ".join(f"{k} {v}" for k, v in item["languages"].items())
    click.echo(f"  {item['files']} files, {item['chunks']} chunks ({languages})")
    for name, state in item["signals"].items():
        ready = "ready" if state["ready"] else "not ready"
        extra = "" if state.get("synced", True) else " (updating)"
        click.echo(f"  {name}: {ready}{extra} {state.get('message', '')}".rstrip())
    changed = item.get("changedSinceBuild")
    if changed is None:
        click.secho(f"  {item.get('warning')}", fg="yellow")
    elif changed["total"]:
        click.secho(
            f"  {changed['total']} files changed since the build (+{changed['added']} "
            f"~{changed['modified']} -{changed['removed']}) — run engine reindex {item['repo']}",
            fg="yellow",
        )
    else:
        click.echo("  up to date with the working tree")


@main.command()
@json_option
def repos(as_json: bool) -> None:
    """List the indexed repositories."""
    ctx = Context(as_json)
    with errors_reported(ctx):
        entries = ctx.home.list()
        if as_json:
            click.echo(dumps([{"repo": e.slug, "root": str(e.root)} for e in entries]))
            return
        if not entries:
            click.echo("no repositories indexed — run engine index PATH")
        for e in entries:
            click.echo(f"{e.slug}\t{printable(str(e.root))}")


@main.command()
@click.argument("slug")
@json_option
def remove(slug: str, as_json: bool) -> None:
    """Delete the index of SLUG (the repository itself is not touched)."""
    ctx = Context(as_json)
    with errors_reported(ctx):
        from engine.index.generations import writer_lock

        entry = ctx.home.get(validate_slug(slug))
        with writer_lock(entry.directory, wait=False, slug=slug):
            shutil.rmtree(entry.directory)
        if as_json:
            click.echo(dumps({"removed": slug}))
        else:
            click.echo(f"removed the index of {slug}")


def _query_target(ctx: Context, words: tuple[str, ...], all_repos: bool) -> tuple[list[str], str]:
    """(slugs, text) from ``SLUG TEXT``, ``a,b TEXT`` or ``--all TEXT``."""
    if all_repos:
        if len(words) != 1:
            raise UsageError('with --all give only the query text: engine query --all "text"')
        slugs = [e.slug for e in ctx.home.list()]
        if not slugs:
            raise UsageError("no repositories indexed — run engine index PATH")
        return slugs, words[0]
    if len(words) != 2:
        raise UsageError('give a repository and the query text: engine query SLUG "text"')
    slugs = [validate_slug(s.strip()) for s in words[0].split(",") if s.strip()]
    if not slugs:
        raise UsageError('name at least one repository, e.g. engine query my-repo "text"')
    return list(dict.fromkeys(slugs)), words[1]


def _filters(lang: tuple[str, ...], path: tuple[str, ...], kind: tuple[str, ...]) -> Filters:
    return Filters(languages=lang, path_globs=path, kinds=kind)


def _signal_list(value: str | None) -> list[str] | None:
    if not value:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise UsageError("--signals needs at least one name, e.g. --signals lexical,vector")
    return names


@main.command()
@click.argument("words", nargs=-1, required=True)
@click.option("--all", "all_repos", is_flag=True, help="Search every indexed repository.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--signals", "signal_names", help="Comma-separated subset, e.g. lexical,vector.")
@click.option("--lang", multiple=True, help="Only results in this language (repeatable).")
@click.option("--path", "path_glob", multiple=True, help="Only paths matching this glob.")
@click.option("--kind", multiple=True, help="Only chunks of this kind (function, class, …).")
@click.option("--include-tests", is_flag=True, help="Do not rank test files lower.")
@click.option(
    "--include-generated", is_flag=True, help="Do not rank generated or vendored code lower."
)
@click.option(
    "--max-per-file",
    default=3,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="At most this many results from one file.",
)
@click.option(
    "--budget",
    type=click.IntRange(1, 10_000_000),
    help="Fit the answer into this many tokens: full code, then signatures, then locations.",
)
@click.option("--explain", is_flag=True, help="Show each signal's rank, score and latency.")
@json_option
def query(
    words: tuple[str, ...],
    all_repos: bool,
    limit: int,
    signal_names: str | None,
    lang: tuple[str, ...],
    path_glob: tuple[str, ...],
    kind: tuple[str, ...],
    include_tests: bool,
    include_generated: bool,
    max_per_file: int,
    budget: int | None,
    explain: bool,
    as_json: bool,
) -> None:
    """Search SLUG (or SLUG1,SLUG2, or --all) for TEXT: a question, a name, an error.

    Usage: engine query SLUG TEXT, engine query repo1,repo2 TEXT, engine query --all TEXT.
    """
    ctx = Context(as_json)
    with one_shot(), errors_reported(ctx):
        from engine.index.opening import open_index
        from engine.search.federation import search_all
        from engine.search.rerank import RankingOptions
        from engine.signal import OpenOptions

        slugs, text = _query_target(ctx, words, all_repos)
        names = _signal_list(signal_names)
        ranking = RankingOptions(
            include_tests=include_tests,
            include_generated=include_generated,
            max_per_file=max_per_file,
        )
        filters = _filters(lang, path_glob, kind)
        options = OpenOptions(home=ctx.home.root, one_shot=True)
        opened = [open_index(ctx.home, s, _plugins(), options, only=names) for s in slugs]
        try:
            searches = [
                partial(
                    o.searcher.search,
                    text,
                    limit=limit,
                    signals=names,
                    filters=filters,
                    ranking=ranking,
                )
                for o in opened
            ]
            response = searches[0]() if len(searches) == 1 else search_all(searches, limit)
        finally:
            for o in opened:
                o.close()
        packing = None
        if budget is not None:
            from engine.search.budget import default_counter, pack

            count, tokenizer = default_counter()
            packing = (pack(response.results, budget, count), budget, tokenizer)
            response = replace(response, results=packing[0].results)
        if as_json:
            data = response_json(response, explain=explain)
            if packing is not None:
                packed, limit_tokens, tokenizer = packing
                for item, detail in zip(data["results"], packed.details, strict=True):
                    item["detail"] = detail
                data["budget"] = {
                    "tokens": limit_tokens,
                    "used": packed.used_tokens,
                    "dropped": packed.dropped,
                    "tokenizer": tokenizer,
                }
            click.echo(dumps(data))
        else:
            print_response(response, explain=explain)


@main.command()
def serve() -> None:
    """Serve the search tools to coding agents over MCP (JSON-RPC on stdin/stdout).

    Add to an agent's MCP config as: {"command": "engine", "args": ["serve"]}. Logs go to
    stderr; the server stops when stdin closes.
    """
    from cli.serve import serve as serve_stdio

    serve_stdio()


@main.command(name="eval")
@click.argument("dataset", type=click.Path(path_type=Path))
@click.option("--repo", "slug", help="Search this repository for every query.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 100))
@click.option("--signals", "signal_names", help="Only this subset, e.g. lexical,vector.")
@click.option("--no-ablation", is_flag=True, help="Run only the full configuration.")
@click.option("--out", type=click.Path(path_type=Path), help="Write the run as JSON here.")
@click.option("--baseline", type=click.Path(path_type=Path), help="A saved --out to compare.")
@json_option
def eval_(
    dataset: Path,
    slug: str | None,
    limit: int,
    signal_names: str | None,
    no_ablation: bool,
    out: Path | None,
    baseline: Path | None,
    as_json: bool,
) -> None:
    """Measure retrieval quality on a labeled DATASET (JSONL), per signal and fused."""
    ctx = Context(as_json)
    with errors_reported(ctx):
        from cli.eval_command import run_eval

        run_eval(
            ctx.home,
            _plugins(),
            dataset,
            repo=validate_slug(slug) if slug else None,
            limit=limit,
            signals=_signal_list(signal_names),
            ablation=not no_ablation,
            out=out,
            baseline=baseline,
            as_json=as_json,
        )


def _lookup(slug: str, text: str, limit: int, as_json: bool, *, references: bool) -> None:
    ctx = Context(as_json)
    with errors_reported(ctx):
        from cli.lookup_commands import lookup

        data = lookup(ctx.home, _plugins(), slug, text, references=references, limit=limit)
        if as_json:
            click.echo(dumps(data))
            return
        if not data["results"]:
            click.echo("nothing found")
        for item in data["results"]:
            where = click.style(
                f"{printable(item['filePath'])}:{item['line']}", fg="cyan", bold=True
            )
            role = item["role"] if item["exact"] else f"{item['role']} (name match)"
            inside = f" in {printable(item['enclosing'])}" if item["enclosing"] else ""
            name = click.style(printable(item["symbolName"]), fg="green")
            click.echo(f"{where}  {name}  {role}{inside}")
            if item["role"] == "reference" and item["content"]:
                click.echo(f"    {item['content'].strip()}")


@main.command()
@click.argument("slug")
@click.argument("name")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@json_option
def defs(slug: str, name: str, limit: int, as_json: bool) -> None:
    """Find definitions of NAME (a name, a dotted path or a SCIP symbol)."""
    _lookup(slug, name, limit, as_json, references=False)


@main.command()
@click.argument("slug")
@click.argument("symbol")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@json_option
def refs(slug: str, symbol: str, limit: int, as_json: bool) -> None:
    """List the definition and the references of SYMBOL, callers first."""
    _lookup(slug, symbol, limit, as_json, references=True)


from cli.context_command import context_command, verify_command  # noqa: E402
from cli.watch_command import watch  # noqa: E402

main.add_command(context_command)
main.add_command(verify_command)
main.add_command(watch)
