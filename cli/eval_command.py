"""``engine eval``: batch evaluation with per-signal ablation, JSON output and baselines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import orjson

from cli.output import dumps
from cli.progress import Progress
from engine.errors import UsageError
from engine.index.home import Home, validate_slug
from engine.index.opening import OpenIndex, open_index
from engine.search.searcher import Searcher
from engine.signal import OpenOptions, SignalPlugin
from eval.dataset import SymbolLines, load_dataset, resolve_symbols
from eval.report import ablation_table, category_table, latency_table, negatives_line
from eval.runner import run_ablation, run_config, summary_json


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
    queries = load_dataset(dataset)
    searchers = Searchers(home, plugins, repo)
    base: dict[str, Any] | None = None
    if baseline is not None:
        try:
            saved = orjson.loads(baseline.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise UsageError(f"cannot read baseline {baseline}: {exc}") from None
        base = {"+".join(r["signals"]): r for r in saved.get("runs", [])}
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
    full = runs[-1]
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
