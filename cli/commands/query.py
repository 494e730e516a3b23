"""``engine query``: search one, several or every indexed repository."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from cli.invocation import (
    Invocation,
    cluster_options,
    errors_reported,
    json_option,
    plugins,
    signal_list,
)
from cli.output import dumps, print_response, response_json
from engine.errors import EngineError, UsageError
from engine.index.home import Home, validate_slug
from engine.types import Filters, SearchResponse


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


def _query_target(home: Home, words: tuple[str, ...], all_repos: bool) -> tuple[list[str], str]:
    """(slugs, text) from ``SLUG TEXT``, ``a,b TEXT`` or ``--all TEXT``."""
    if all_repos:
        if len(words) != 1:
            raise UsageError('with --all give only the query text: engine query --all "text"')
        slugs = [e.slug for e in home.list()]
        if not slugs:
            raise UsageError("no repositories indexed — run engine index PATH")
        return slugs, words[0]
    if len(words) != 2:
        raise UsageError('give a repository and the query text: engine query SLUG "text"')
    slugs = [validate_slug(s.strip()) for s in words[0].split(",") if s.strip()]
    if not slugs:
        raise UsageError('name at least one repository, e.g. engine query my-repo "text"')
    return list(dict.fromkeys(slugs)), words[1]


@click.command()
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
    type=click.IntRange(1, 1000),
    help="At most this many results from one file, until fewer files than --limit match "
    "[default: 3, or 5 for a pasted report or stack trace].",
)
@click.option(
    "--budget",
    type=click.IntRange(1, 10_000_000),
    help="Fit the answer into this many tokens: full code, then signatures, then locations.",
)
@click.option("--explain", is_flag=True, help="Show each signal's rank, score and latency.")
@cluster_options("Search through the shards of a Ray cluster (HOST:PORT, auto, or local).")
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
    max_per_file: int | None,
    budget: int | None,
    explain: bool,
    cluster: str | None,
    cluster_store: Path | None,
    deadline_ms: float,
    as_json: bool,
) -> None:
    """Search SLUG (or SLUG1,SLUG2, or --all) for TEXT: a question, a name, an error.

    Usage: engine query SLUG TEXT, engine query repo1,repo2 TEXT, engine query --all TEXT.
    """
    run = Invocation(as_json)
    with one_shot(), errors_reported(as_json):
        from engine.index.opening import open_index
        from engine.indexing.freshness import DiskFiles
        from engine.search.federation import search_all
        from engine.search.ranking.options import RankingOptions
        from engine.signal import OpenOptions

        names = signal_list(signal_names)
        ranking = RankingOptions(
            include_tests=include_tests,
            include_generated=include_generated,
            max_per_file=max_per_file,
        )
        filters = Filters(languages=lang, path_globs=path_glob, kinds=kind)
        if cluster is not None:
            from cli.commands.query_cluster import query_on_cluster, shared_store

            store = shared_store(cluster_store, run.home)
            slugs, text = _query_target(Home(store), words, all_repos)
            response = query_on_cluster(
                cluster,
                store,
                slugs,
                text,
                limit=limit,
                signals=names,
                filters=filters,
                ranking=ranking,
                deadline_ms=deadline_ms,
                explain=explain,
            )
            _print(response, budget, explain, as_json)
            return
        slugs, text = _query_target(run.home, words, all_repos)
        options = OpenOptions(home=run.home.root, one_shot=True)
        opened = []
        damaged: list[str] = []  # with --all, a damaged index is skipped with a warning
        for s in slugs:
            try:
                opened.append(
                    open_index(run.home, s, plugins(), options, only=names, files=DiskFiles.of)
                )
            except EngineError as exc:
                if not all_repos:
                    for o in opened:
                        o.close()
                    raise
                damaged.append(f"{s} was not searched: {exc}")
        if not opened:
            raise EngineError("; ".join(damaged) or "no repository is indexed")
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
            if damaged:
                response = replace(response, warnings=[*response.warnings, *damaged])
        finally:
            for o in opened:
                o.close()
        _print(response, budget, explain, as_json)


def _print(response: SearchResponse, budget: int | None, explain: bool, as_json: bool) -> None:
    packing = None
    if budget is not None:
        from engine.search.budget import pack
        from engine.search.tokens import agent_counter

        count, tokenizer = agent_counter()
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
