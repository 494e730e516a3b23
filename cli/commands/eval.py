"""``engine eval``: batch evaluation with per-signal ablation, JSON output and baselines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from cli.invocation import Invocation, errors_reported, json_option, plugins, signal_list
from cli.output import dumps
from cli.progress import Progress
from engine.errors import UsageError
from engine.index.home import Home, validate_slug
from engine.signal import OpenOptions, SignalPlugin

if TYPE_CHECKING:  # the searcher and eval/ are imported when the command runs
    from engine.index.opening import OpenIndex
    from engine.search.searcher import Searcher
    from eval.dataset import SymbolLines


class Searchers:
    """Opens each repository a dataset names once, with every ready signal."""

    def __init__(self, home: Home, plugins: dict[str, SignalPlugin], repo: str | None) -> None:
        self.home = home
        self.plugins = plugins
        self.repo = repo
        self.opened: dict[str, OpenIndex] = {}

    def __call__(self, name: str | None) -> Searcher:
        slug = self.repo or name
        if not slug:
            raise UsageError("the dataset's queries name no repo — pass --repo SLUG")
        if slug not in self.opened:
            from engine.index.opening import open_index

            self.opened[slug] = open_index(
                self.home, validate_slug(slug), self.plugins, OpenOptions(home=self.home.root)
            )
        return self.opened[slug].searcher

    def lines_of(self, name: str | None) -> SymbolLines:
        """Resolves (path, qualified name) to the lines of that definition in the index."""
        self(name)
        store = self.opened[self.repo or name or ""].store

        def lines(path: str, symbol: str) -> tuple[int, int] | None:
            spans = [
                (c.start_line, c.end_line)
                for c in store.chunks_in_file(path)
                if c.qualified_name == symbol
            ]
            if not spans:
                return None
            return min(s for s, _ in spans), max(e for _, e in spans)

        return lines

    def signal_names(self, first_repo: str | None) -> list[str]:
        return list(self(first_repo).signals)

    def close(self) -> None:
        for opened in self.opened.values():
            opened.close()


def run_eval(
    home: Home,
    plugins: dict[str, SignalPlugin],
    dataset: Path,
    *,
    repo: str | None,
    limit: int,
    signals: list[str] | None,
    ablation: bool,
    out: Path | None,
    baseline: Path | None,
    as_json: bool,
) -> None:
    from eval.dataset import load_dataset, resolve_symbols
    from eval.report import ablation_table, category_table, latency_table, negatives_line
    from eval.runner import run_ablation, run_config, summary_json

    queries = load_dataset(dataset)
    searchers = Searchers(home, plugins, repo)
    base: dict[str, Any] | None = None
    if baseline is not None:
        try:
            saved = orjson.loads(baseline.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise UsageError(f"cannot read baseline {baseline}: {exc}") from None
        # A run saved before rows had names is keyed by its signals, as its rows were.
        base = {r.get("name") or "+".join(r["signals"]): r for r in saved.get("runs", [])}
    progress = Progress()
    try:
        queries = [resolve_symbols(q, searchers.lines_of(q.repo)) for q in queries]
        names = signals or searchers.signal_names(queries[0].repo)
        if ablation and len(names) > 1:
            runs = run_ablation(searchers, queries, names, limit=limit, progress=progress)
        else:
            runs = [run_config(searchers, queries, names, limit=limit, progress=progress)]
    finally:
        progress.finish()
        searchers.close()
    data = {
        "dataset": str(dataset),
        "queries": len(queries),
        "limit": limit,
        "runs": [summary_json(r) for r in runs],
    }
    if out is not None:
        out.write_text(dumps(data))
    if as_json:
        click.echo(dumps(data))
        return
    full = next(r for r in runs if r.label == "+".join(names))
    click.secho(f"{dataset} — {len(queries)} queries, top {limit}", bold=True)
    click.echo(ablation_table(runs, base))
    click.echo()
    click.secho(f"by category ({full.label})", bold=True)
    click.echo(category_table(full))
    click.echo()
    click.secho(f"latency ({full.label})", bold=True)
    click.echo(latency_table(full))
    click.echo()
    click.echo(negatives_line(full))
    if out is not None:
        click.echo(f"written to {out}")


def run_benchmark_eval(
    home: Home,
    plugins: dict[str, SignalPlugin],
    folder: Path,
    *,
    repos: list[str] | None,
    checkouts: Path,
    negatives: Path | None,
    ablation: bool,
    out: Path | None,
    baseline: Path | None,
    as_json: bool,
    rankings: tuple[str, ...] = (),
) -> None:
    """``engine eval --benchmark``: a benchmark folder (semble-dev) run and scored by its
    own protocol, with the ablation, per repository, language and category; each of
    ``rankings`` (eval/variants.py) adds a row."""
    from eval.benchmark_run import evaluate_benchmark, report_text
    from eval.variants import parse_variant

    variants = [parse_variant(spec) for spec in rankings]  # bad settings fail before any work

    base: dict[str, Any] | None = None
    if baseline is not None:
        try:
            base = orjson.loads(baseline.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise UsageError(f"cannot read baseline {baseline}: {exc}") from None
    progress = Progress()
    try:
        data = evaluate_benchmark(
            home,
            plugins,
            folder,
            repos=repos,
            checkouts=checkouts,
            negatives=negatives,
            ablation=ablation,
            variants=variants,
            progress=progress,
        )
    finally:
        progress.finish()
    if out is not None:
        out.write_text(dumps(data))
    if as_json:
        click.echo(dumps(data))
        return
    click.echo(report_text(data, base))
    if out is not None:
        click.echo(f"written to {out}")


@click.command(name="eval")
@click.argument("dataset", type=click.Path(path_type=Path), required=False)
@click.option(
    "--benchmark",
    type=click.Path(path_type=Path, file_okay=False),
    help="A benchmark folder (repos.json + annotations/, e.g. semble-dev) instead of DATASET.",
)
@click.option("--repos", "bench_repos", help="With --benchmark: only these, e.g. click,cobra.")
@click.option(
    "--checkouts",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path(".bench-repos"),
    show_default=True,
    help="With --benchmark: where the pinned checkouts are extracted.",
)
@click.option(
    "--negatives",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With --benchmark: unanswerable queries (JSONL) whose lowConfidence flag is measured.",
)
@click.option(
    "--ranking",
    "rankings",
    multiple=True,
    metavar="SPEC",
    help="With --benchmark: one more row, ranked with these settings, e.g. "
    "file_weight=0.3,question.k=40 (repeatable; eval/variants.py).",
)
@click.option("--repo", "slug", help="Search this repository for every query.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 100))
@click.option("--signals", "signal_names", help="Only this subset, e.g. lexical,vector.")
@click.option("--no-ablation", is_flag=True, help="Run only the full configuration.")
@click.option("--out", type=click.Path(path_type=Path), help="Write the run as JSON here.")
@click.option("--baseline", type=click.Path(path_type=Path), help="A saved --out to compare.")
@json_option
def eval_(
    dataset: Path | None,
    benchmark: Path | None,
    bench_repos: str | None,
    checkouts: Path,
    negatives: Path | None,
    rankings: tuple[str, ...],
    slug: str | None,
    limit: int,
    signal_names: str | None,
    no_ablation: bool,
    out: Path | None,
    baseline: Path | None,
    as_json: bool,
) -> None:
    """Measure retrieval quality on a labeled DATASET (JSONL), or a --benchmark folder, per
    signal and fused."""
    run = Invocation(as_json)
    with errors_reported(as_json):
        if (dataset is None) == (benchmark is None):
            raise UsageError(
                "give a DATASET (a JSONL file) or --benchmark FOLDER, e.g. engine eval "
                "--benchmark ../shared/benchmarks/semble-dev"
            )
        if benchmark is not None:
            run_benchmark_eval(
                run.home,
                plugins(),
                benchmark,
                repos=[r.strip() for r in (bench_repos or "").split(",") if r.strip()] or None,
                checkouts=checkouts,
                negatives=negatives,
                ablation=not no_ablation,
                out=out,
                baseline=baseline,
                as_json=as_json,
                rankings=rankings,
            )
            return
        assert dataset is not None
        run_eval(
            run.home,
            plugins(),
            dataset,
            repo=validate_slug(slug) if slug else None,
            limit=limit,
            signals=signal_list(signal_names),
            ablation=not no_ablation,
            out=out,
            baseline=baseline,
            as_json=as_json,
        )
