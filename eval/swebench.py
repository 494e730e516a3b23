"""The swebench-dev runner (``../shared/benchmarks/swebench-dev``): a whole issue report as the
query, the file and function its fix changed as the answer.

Per repository one work tree, cloned from the bare snapshot under ``/work/.mirror/<owner>+
<name>/`` into ``<checkouts>/<name>/``; its instances in ``created_at`` order. Per instance:
``git checkout -f <base_commit>`` and ``git clean -fdx``, then index (the first time) or
reindex (later: the incremental-update workload the README asks to time), then every query
variant goes through ``Searcher.search`` as the CLI sends it, with ``LIMIT`` results.

Scores, as the README defines them:
- file Acc@k: a gold file is among the first k *distinct files* of the ranking (k = 1, 5, 10);
- function hit@10: one of the first 10 results overlaps a gold function's lines, over the
  instances that have gold functions (24 of the 95 change only module-level code).

Variants re-query the same index (no re-embedding of the corpus): ``as-is`` is the issue text
unchanged; ``code`` keeps only its code-like lines and identifiers (``code_query``). Ranking
variants (``--rankings``, named in ``RANKINGS``) replay each text variant's signal runs through
another ranking stage or route (``Searcher.rank_runs``), so one reindex scores them all; they
are reported as ``<text variant>+<ranking variant>``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from engine.errors import EngineError, UsageError
from engine.index.home import Home
from engine.search.ranking.options import DEFAULT_RANKING, RankingOptions
from engine.search.routing import ROUTES, QueryKind, Route
from engine.signal import IndexOptions, OpenOptions, SignalPlugin
from engine.types import Result
from eval import replay
from eval.benchmark import MIRROR_ROOT, BenchmarkError
from eval.dataset import Target
from eval.metrics import Ranked, mean
from eval.protocol import file_rank

LIMIT = 50  # the README's "generous limit": file ranks are read over the whole list
TOP_K = (1, 5, 10)
FUNCTION_CUTOFF = 10
DEFAULT_CHECKOUTS = Path(".bench-repos/swebench")
GIT_TIMEOUT_S = 600.0


@dataclass(frozen=True, slots=True)
class Instance:
    id: str
    repo: str  # "owner/name"
    base_commit: str
    created_at: str  # ISO 8601, UTC; sorts as text
    query: str
    gold_files: tuple[str, ...]  # repository-root paths
    gold_functions: tuple[Target, ...]  # lines 1-based, inclusive, at the base commit

    @property
    def name(self) -> str:
        return self.repo.rsplit("/", 1)[-1]


def load_instances(
    path: Path, repos: Sequence[str] | None = None, max_instances: int | None = None
) -> list[Instance]:
    """The instances of ``path`` (a jsonl), grouped by repository in order of first
    appearance and in ``created_at`` order within one; ``repos`` (short names or
    ``owner/name``) keeps only those, ``max_instances`` the first N of each."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc} — give the swebench-dev folder") from None
    out: list[Instance] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = orjson.loads(line)
            out.append(
                Instance(
                    id=str(raw["id"]),
                    repo=str(raw["repo"]),
                    base_commit=str(raw["base_commit"]),
                    created_at=str(raw["created_at"]),
                    query=str(raw["query"]),
                    gold_files=tuple(str(p) for p in raw["gold_files"]),
                    gold_functions=tuple(
                        Target(str(f["path"]), int(f["startLine"]), int(f["endLine"]))
                        for f in raw.get("gold_functions") or ()
                    ),
                )
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"{path} line {n} is not an instance: {exc}") from None
    if repos:
        known = {i.repo for i in out} | {i.name for i in out}
        unknown = [r for r in repos if r not in known]
        if unknown:
            names = ", ".join(sorted({i.name for i in out}))
            raise UsageError(f"not in {path}: {', '.join(unknown)} — choose from {names}")
        out = [i for i in out if i.repo in repos or i.name in repos]
    order = {repo: n for n, repo in reversed(list(enumerate(i.repo for i in out)))}
    out.sort(key=lambda i: (order[i.repo], i.created_at, i.id))
    if max_instances is not None:
        taken: dict[str, int] = {}
        kept = []
        for instance in out:
            taken[instance.repo] = taken.get(instance.repo, 0) + 1
            if taken[instance.repo] <= max_instances:
                kept.append(instance)
        out = kept
    return out


# --- scoring ---------------------------------------------------------------------------------


def gold_file_rank(ranked: Sequence[Ranked], instance: Instance) -> int | None:
    """The 1-based distinct-file rank of the first gold file, or None when none is listed."""
    return file_rank(ranked, set(instance.gold_files))


def function_hit(ranked: Sequence[Ranked], instance: Instance) -> bool | None:
    """Whether one of the first 10 results overlaps a gold function; None without any."""
    if not instance.gold_functions:
        return None
    return any(
        target.overlaps(r.path, r.start_line, r.end_line)
        for r in ranked[:FUNCTION_CUTOFF]
        for target in instance.gold_functions
    )


def accuracy(ranks: Iterable[int | None], k: int) -> float:
    """The share of ``ranks`` that are at most ``k`` (a missing rank counts as a miss)."""
    values = [rank is not None and rank <= k for rank in ranks]
    return mean([1.0 if v else 0.0 for v in values]) if values else 0.0


# --- query reduction -------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
_TRACE = re.compile(
    r'^\s*(Traceback \(most recent call last\)|File "[^"]+", line \d+'
    r"|[A-Za-z_][\w.]*(Error|Exception|Warning)\b)"
)
_PROMPT = re.compile(r"^\s*(>>>|\.\.\.\s|\$ |In \[\d+\]:)")
_INDENTED = re.compile(r"^(    |\t)\s*\S")
# "numpy: 1.18.1", "machine: x86_64": the environment report issue templates ask for.
_VERSION_LINE = re.compile(r"^\s*[\w.() -]+\s*[:=]\s*\S*\d\S*\s*$")
_WORD = re.compile(r"[A-Za-z_]\w{2,}")  # a code line without one is data (array output, rules)
# Identifiers in prose, each written in a way English is not: `quoted`, dotted.names (a part
# of 3+ characters, so "e.g." is not one), calls(, snake_case, CamelCase inside, file paths.
_IDENTIFIERS = re.compile(
    r"`([^`\n]+)`"
    r"|(\b[\w./-]+\.(?:py|pyx|pyi|cfg|toml|ini|json|ya?ml|txt|rst|c|h)\b)"
    r"|(\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?=\W|$))"
    r"|(\b[A-Za-z_]\w*(?=\())"
    r"|(\b_*[a-z][a-z0-9]*_\w+)"
    r"|(\b(?:[A-Za-z][a-z0-9]+[A-Z]|[A-Z]{2,}[a-z])\w*)"
)


def _identifier(match: re.Match[str]) -> str | None:
    text = next(g for g in match.groups() if g is not None).strip()
    if match.group(3) is not None and max(len(p) for p in text.split(".")) < 3:
        return None
    return text or None


def code_query(text: str) -> str:
    """The code-like part of an issue report: fenced, indented, prompt and traceback lines
    (those with a word in them; not version-report lines), then the identifiers its prose
    writes like code, once each in order of first use. The text unchanged when it has none
    of either."""
    code: list[str] = []
    names: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if _VERSION_LINE.match(line):
            continue
        if fenced or _TRACE.match(line) or _PROMPT.match(line) or _INDENTED.match(line):
            if _WORD.search(line):
                code.append(line.strip())
            continue
        for match in _IDENTIFIERS.finditer(line):
            name = _identifier(match)
            if name and name not in names:
                names.append(name)
    kept = list(dict.fromkeys(code))
    if names:
        kept.append(" ".join(names))
    return "\n".join(kept) if kept else text


VARIANTS: dict[str, Callable[[str], str]] = {"as-is": lambda text: text, "code": code_query}


# --- ranking variants ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankingVariant:
    """A ranking stage and routes to replay a query's signal runs through."""

    ranking: RankingOptions = DEFAULT_RANKING
    routes: Mapping[QueryKind, Route] = field(default_factory=lambda: ROUTES)


def _long_route(
    k: int | None = None, vector: float | None = None, symbol: float | None = None
) -> Mapping[QueryKind, Route]:
    long = ROUTES["long"]
    weights = dict(long.weights)
    if vector is not None:
        weights["vector"] = vector
    if symbol is not None:
        weights["symbol"] = symbol
    routed = Route(k if k is not None else long.k, weights, long.max_per_file)
    return {**ROUTES, "long": routed}


# The ablations of the long route measured for eval/RESULTS.md (``--rankings a,b``).
RANKINGS: dict[str, RankingVariant] = {
    # The engine before session 13 (k 10, 3 per file) and before session 14 (k 20, 5 per
    # file; every chunk of a class boosted as its definition, no mentioned definitions).
    "before": RankingVariant(
        replace(
            DEFAULT_RANKING,
            max_per_file=3,
            definition_heads=False,
            mention_files=0,
            mention_weight=0.0,
        ),
        _long_route(k=10),
    ),
    "session-13": RankingVariant(
        replace(DEFAULT_RANKING, definition_heads=False, mention_files=0, mention_weight=0.0)
    ),
    "per-file-1": RankingVariant(replace(DEFAULT_RANKING, max_per_file=1)),
    "per-file-3": RankingVariant(replace(DEFAULT_RANKING, max_per_file=3)),
    "per-file-5": RankingVariant(replace(DEFAULT_RANKING, max_per_file=5)),
    "per-file-8": RankingVariant(replace(DEFAULT_RANKING, max_per_file=8)),
    "scope-all": RankingVariant(replace(DEFAULT_RANKING, file_scope="all")),
    "no-file-evidence": RankingVariant(DEFAULT_RANKING.without("file_evidence")),
    "no-path-evidence": RankingVariant(DEFAULT_RANKING.without("path_evidence")),
    "no-definition-heads": RankingVariant(DEFAULT_RANKING.without("definition_heads")),
    "k30": RankingVariant(routes=_long_route(k=30)),
    "k60": RankingVariant(routes=_long_route(k=60)),
    "vector-1": RankingVariant(routes=_long_route(vector=1.0)),
    "k10": RankingVariant(routes=_long_route(k=10)),
    "symbol-0.25": RankingVariant(routes=_long_route(symbol=0.25)),
    "symbol-0.5": RankingVariant(routes=_long_route(symbol=0.5)),
    "symbol-1": RankingVariant(routes=_long_route(symbol=1.0)),
    "no-mentions": RankingVariant(replace(DEFAULT_RANKING, mention_files=0, mention_weight=0.0)),
    "no-mention-lookup": RankingVariant(replace(DEFAULT_RANKING, mention_files=0)),
    "mentions-1": RankingVariant(replace(DEFAULT_RANKING, mention_files=1)),
    "mentions-5": RankingVariant(replace(DEFAULT_RANKING, mention_files=5)),
    "mentions-10": RankingVariant(replace(DEFAULT_RANKING, mention_files=10)),
    "mention-share-0.25": RankingVariant(replace(DEFAULT_RANKING, mention_share=0.25)),
    "mention-share-1": RankingVariant(replace(DEFAULT_RANKING, mention_share=1.0)),
    "mention-share-1.5": RankingVariant(replace(DEFAULT_RANKING, mention_share=1.5)),
    "mention-weight-0.25": RankingVariant(replace(DEFAULT_RANKING, mention_weight=0.25)),
    "mention-weight-0.5": RankingVariant(replace(DEFAULT_RANKING, mention_weight=0.5)),
    "mention-weight-0": RankingVariant(replace(DEFAULT_RANKING, mention_weight=0.0)),
    "mention-weight-1": RankingVariant(replace(DEFAULT_RANKING, mention_weight=1.0)),
    "mention-weight-3": RankingVariant(replace(DEFAULT_RANKING, mention_weight=3.0)),
    "mention-weight-4": RankingVariant(replace(DEFAULT_RANKING, mention_weight=4.0)),
    "mention-weight-8": RankingVariant(replace(DEFAULT_RANKING, mention_weight=8.0)),
    "candidates-100": RankingVariant(replace(DEFAULT_RANKING, candidates=100)),
    "candidates-200": RankingVariant(replace(DEFAULT_RANKING, candidates=200)),
}


def rankings_named(names: str) -> dict[str, RankingVariant]:
    """The ranking variants of a comma-separated list of ``RANKINGS`` names."""
    chosen = [n for n in names.split(",") if n]
    unknown = [n for n in chosen if n not in RANKINGS]
    if unknown:
        raise UsageError(
            f"unknown ranking variant {', '.join(unknown)} — choose from {', '.join(RANKINGS)}"
        )
    return {n: RANKINGS[n] for n in chosen}


# --- work trees ------------------------------------------------------------------------------


def _git(args: Sequence[str], where: str) -> None:
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, timeout=GIT_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise BenchmarkError(f"{where}: git {args[0]} took over {GIT_TIMEOUT_S:.0f}s") from None
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip()
        raise BenchmarkError(f"{where}: git {' '.join(args[:3])} failed: {detail}")


def work_tree(repo: str, checkouts: Path, mirror_root: Path = MIRROR_ROOT) -> Path:
    """``<checkouts>/<name>``, a clone of the bare snapshot of ``repo`` ("owner/name"), made
    on first use (in a temporary sibling, so an interrupted clone leaves no half tree)."""
    owner, name = repo.split("/", 1)
    dest = checkouts / name
    if (dest / ".git").is_dir():
        return dest
    folder = mirror_root / f"{owner}+{name}"
    git_dir = next((c for c in (folder / "repo", folder) if (c / "HEAD").is_file()), None)
    if git_dir is None:
        raise BenchmarkError(
            f"no snapshot of {repo} under {mirror_root} — fetch github:{repo} first"
        )
    tmp = checkouts / f".{name}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    checkouts.mkdir(parents=True, exist_ok=True)
    _git(["clone", "--quiet", "--no-checkout", str(git_dir), str(tmp)], repo)
    tmp.rename(dest)
    return dest


def check_out(tree: Path, commit: str) -> None:
    """Put ``tree`` at ``commit`` exactly: tracked files forced, everything else removed."""
    _git(["-C", str(tree), "checkout", "--quiet", "--force", "--detach", commit], str(tree))
    _git(["-C", str(tree), "clean", "--quiet", "-fdx"], str(tree))


# --- the run ---------------------------------------------------------------------------------


@dataclass
class VariantResult:
    query_chars: int
    file_rank: int | None  # distinct-file rank of the gold file, None when not in LIMIT
    function_hit: bool | None  # None: the instance has no gold function
    top: list[str]  # the first 10 results as "path:start-end"


@dataclass
class InstanceResult:
    id: str
    repo: str
    index_seconds: float  # the index (first instance) or reindex before this instance
    full_index: bool
    files_changed: int  # added + changed + removed by that (re)index
    variants: dict[str, VariantResult] = field(default_factory=dict)
    # Why the instance was not run ("" when it was): its base commit could not be checked out
    # from the snapshot (a snapshot can lack a blob), which says nothing of the engine.
    skipped: str = ""
    # A replay only: files the ranking stage read that the pass had not saved whole (they
    # read as empty; a stack frame's trailing paths mostly name no file at all).
    replay_misses: int = 0


def _label(ranked: Sequence[Ranked]) -> list[str]:
    return [f"{r.path}:{r.start_line}-{r.end_line}" for r in ranked]


def _scored(results: Sequence[Result], text: str, instance: Instance) -> VariantResult:
    ranked = [Ranked(r.path, r.start_line, r.end_line) for r in results]
    return VariantResult(
        len(text),
        gold_file_rank(ranked, instance),
        function_hit(ranked, instance),
        _label(ranked[:10]),
    )


def run_swebench(
    home: Home,
    plugins: Mapping[str, SignalPlugin],
    instances: Sequence[Instance],
    checkouts: Path,
    *,
    variants: Mapping[str, Callable[[str], str]] = VARIANTS,
    rankings: Mapping[str, RankingVariant] | None = None,
    mirror_root: Path = MIRROR_ROOT,
    on_result: Callable[[InstanceResult], None] = lambda _: None,
    save_runs: Path | None = None,
) -> list[InstanceResult]:
    """``save_runs``: a folder to save each instance's signal runs in, for ``replay_swebench``
    (eval/replay.py)."""
    from engine.index.opening import open_index
    from engine.indexing.indexer import Indexer
    from engine.search.searcher import clean_query, depth_for
    from engine.types import Filters, Query

    # One indexer for the run: it keeps its builders, so the model loads once.
    indexer = Indexer(home, dict(plugins), IndexOptions(home=home.root))
    results: list[InstanceResult] = []
    for instance in instances:
        tree = work_tree(instance.repo, checkouts, mirror_root)
        try:
            check_out(tree, instance.base_commit)
        except BenchmarkError as exc:
            # One unreadable commit must not end a run of hours: the instance is reported as
            # skipped, with the reason, and left out of the scores. The next checkout is forced,
            # so a half-done one leaves nothing behind.
            skipped = InstanceResult(instance.id, instance.repo, 0.0, False, 0, skipped=str(exc))
            results.append(skipped)
            on_result(skipped)
            continue
        registered = any(entry.slug == instance.name for entry in home.list())
        started = time.perf_counter()
        if registered:
            report = indexer.reindex(instance.name)
        else:
            report = indexer.index(instance.name, tree)
        result = InstanceResult(
            instance.id,
            instance.repo,
            time.perf_counter() - started,
            report.full_rebuild,
            report.files_added + report.files_changed + report.files_removed,
        )
        opened = open_index(home, instance.name, plugins, OpenOptions(home=home.root))
        saved: list[replay.SavedQuery] = []
        try:
            for name, reduce in variants.items():
                text = reduce(instance.query)
                response = opened.searcher.search(text, limit=LIMIT)
                result.variants[name] = _scored(response.results, text, instance)
                query = Query(clean_query(text), Filters())
                # Signal runs by depth: the search's own are reused, others asked once each.
                runs = {depth_for(LIMIT, opened.searcher.ranking): list(response.runs)}
                for label, variant in (rankings or {}).items():
                    depth = depth_for(LIMIT, variant.ranking)
                    if depth not in runs:
                        runs[depth] = opened.searcher.run_signals(query, depth, None)
                    replayed = opened.searcher.rank_runs(
                        query, runs[depth], LIMIT, variant.ranking, variant.routes
                    )
                    result.variants[f"{name}+{label}"] = _scored(replayed, text, instance)
                if save_runs is not None:
                    deep = opened.searcher.run_signals(query, replay.SAVE_DEPTH, None)
                    saved.append(replay.SavedQuery(name, query.text, deep))
            if save_runs is not None:
                data = replay.snapshot(
                    opened.store,
                    saved,
                    id=instance.id,
                    repo=instance.repo,
                    indexSeconds=result.index_seconds,
                    fullIndex=result.full_index,
                    filesChanged=result.files_changed,
                )
                save_runs.mkdir(parents=True, exist_ok=True)
                replay.save(save_runs / f"{instance.id}.json.gz", data)
        finally:
            opened.close()
        results.append(result)
        on_result(result)
    return results


def replay_swebench(
    instances: Sequence[Instance],
    runs_dir: Path,
    *,
    rankings: Mapping[str, RankingVariant] | None = None,
    on_result: Callable[[InstanceResult], None] = lambda _: None,
) -> list[InstanceResult]:
    """Score saved runs (``run_swebench(save_runs=...)``) through the default ranking and each
    of ``rankings``, without an index: what a pass would have measured with that ranking
    stage, for a ranking change that reads nothing the pass did not save."""
    from engine.search.searcher import Searcher, depth_for
    from engine.types import Filters, Query

    results: list[InstanceResult] = []
    for instance in instances:
        path = runs_dir / f"{instance.id}.json.gz"
        if not path.is_file():
            continue  # not reached (or skipped) by the pass that saved the folder
        saved = replay.load(path, strict=False)
        result = InstanceResult(
            instance.id,
            instance.repo,
            float(saved.meta["indexSeconds"]),
            bool(saved.meta["fullIndex"]),
            int(saved.meta["filesChanged"]),
        )
        searcher = Searcher(instance.name, saved.store, {})
        chosen = {"": RankingVariant(), **(rankings or {})}
        for query in saved.queries:
            asked = Query(query.text, Filters())
            for label, variant in chosen.items():
                runs = replay.cut(query.runs, depth_for(LIMIT, variant.ranking))
                ranked = searcher.rank_runs(asked, runs, LIMIT, variant.ranking, variant.routes)
                name = f"{query.variant}+{label}" if label else query.variant
                result.variants[name] = _scored(ranked, query.text, instance)
        if saved.store.missed:
            result.replay_misses = len(saved.store.missed)
        results.append(result)
        on_result(result)
    return results


def summarize(results: Sequence[InstanceResult], variant: str) -> dict[str, Any]:
    """Acc@1/5/10 and function hit@10 of ``variant``, and (re)index seconds, for a group;
    skipped instances are counted apart and scored nowhere."""
    skipped = [r for r in results if r.skipped]
    results = [r for r in results if not r.skipped]
    ranks = [r.variants[variant].file_rank for r in results]
    hits = [h for r in results if (h := r.variants[variant].function_hit) is not None]
    reindex = [r.index_seconds for r in results if not r.full_index]
    return {
        "instances": len(results),
        "skipped": len(skipped),
        **{f"acc{k}": accuracy(ranks, k) for k in TOP_K},
        "functionHit10": mean([1.0 if h else 0.0 for h in hits]) if hits else None,
        "withFunctions": len(hits),
        "indexSeconds": sum(r.index_seconds for r in results if r.full_index),
        "reindexSecondsMean": mean(reindex) if reindex else None,
        "reindexSecondsMax": max(reindex, default=None),
    }


def run_json(results: Sequence[InstanceResult]) -> dict[str, Any]:
    ran = [r for r in results if not r.skipped]
    variants = list(ran[0].variants) if ran else []
    repos = list(dict.fromkeys(r.repo for r in results))
    return {
        "limit": LIMIT,
        "summary": {
            variant: {
                "overall": summarize(results, variant),
                "byRepo": {
                    repo: summarize([r for r in results if r.repo == repo], variant)
                    for repo in repos
                },
            }
            for variant in variants
        },
        "instances": [
            {
                "id": r.id,
                "repo": r.repo,
                "indexSeconds": r.index_seconds,
                "fullIndex": r.full_index,
                "filesChanged": r.files_changed,
                **({"skipped": r.skipped} if r.skipped else {}),
                **({"replayMisses": r.replay_misses} if r.replay_misses else {}),
                "variants": {
                    name: {
                        "queryChars": v.query_chars,
                        "fileRank": v.file_rank,
                        "functionHit": v.function_hit,
                        "top10": v.top,
                    }
                    for name, v in r.variants.items()
                },
            }
            for r in results
        ],
    }


def summary_table(data: Mapping[str, Any]) -> str:
    def cell(value: float | None, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [
        f"{'variant':8} {'repository':18} {'n':>3} {'Acc@1':>6} {'Acc@5':>6} {'Acc@10':>6} "
        f"{'fn@10':>9} {'index s':>8} {'reindex s':>10}"
    ]
    for variant, groups in data["summary"].items():
        rows = [*groups["byRepo"].items(), ("overall", groups["overall"])]
        for repo, s in rows:
            lines.append(
                f"{variant:8} {repo:18} {s['instances']:>3} {s['acc1']:>6.2f} {s['acc5']:>6.2f} "
                f"{s['acc10']:>6.2f} {cell(s['functionHit10']):>5}/{s['withFunctions']:<3} "
                f"{s['indexSeconds']:>8.1f} {cell(s['reindexSecondsMean'], 1):>10}"
            )
    for r in data["instances"]:
        if r.get("skipped"):
            lines.append(f"skipped {r['id']}: {r['skipped']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m eval.swebench BENCHMARK_DIR [--repos flask,seaborn] [--max-instances N]
    [--rankings per-file-5,k30] [--checkouts DIR] [--out FILE] [--save-runs DIR |
    --replay DIR]``, under the evaluation's ``$ENGINE_HOME``. ``--out`` is rewritten after
    every instance, so a run stopped after hours keeps what it measured. ``--save-runs``
    keeps each instance's signal runs; ``--replay`` scores a saved folder's runs through the
    rankings in seconds, with no checkout or index (eval/replay.py)."""
    import argparse
    import sys

    from engine.index.home import engine_home
    from signals.registry import plugins

    parser = argparse.ArgumentParser(prog="python -m eval.swebench")
    parser.add_argument("benchmark", type=Path)
    parser.add_argument("--repos", default="")
    parser.add_argument("--max-instances", type=int)
    parser.add_argument("--checkouts", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--rankings", default="", help=f"of: {', '.join(RANKINGS)}")
    parser.add_argument("--save-runs", type=Path, help="save each instance's signal runs here")
    parser.add_argument("--replay", type=Path, help="score the runs saved in this folder")
    args = parser.parse_args(argv)
    if args.replay is not None and not args.replay.is_dir():
        raise UsageError(f"no saved runs at {args.replay} — give a --save-runs folder")
    rankings = rankings_named(args.rankings)
    only = [r for r in args.repos.split(",") if r] or None
    instances = load_instances(args.benchmark / "swebench-dev.jsonl", only, args.max_instances)

    done: list[InstanceResult] = []

    def report(r: InstanceResult) -> None:
        done.append(r)
        if args.out:
            args.out.write_bytes(orjson.dumps(run_json(done), option=orjson.OPT_INDENT_2))
        if r.skipped:
            print(f"{r.id}: skipped: {r.skipped}", file=sys.stderr, flush=True)
            return
        ranks = {name: v.file_rank for name, v in r.variants.items()}
        hits = {name: v.function_hit for name, v in r.variants.items()}
        kind = "index" if r.full_index else "reindex"
        print(
            f"{r.id}: {kind} {r.index_seconds:.1f}s ({r.files_changed} files) "
            f"file rank {ranks} function hit {hits}",
            file=sys.stderr,
            flush=True,
        )

    if args.replay is not None:
        results = replay_swebench(instances, args.replay, rankings=rankings, on_result=report)
    else:
        results = run_swebench(
            Home(engine_home()),
            plugins(),
            instances,
            args.checkouts.resolve(),
            rankings=rankings,
            on_result=report,
            save_runs=args.save_runs,
        )
    data = run_json(results)
    if args.out:
        args.out.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    print(summary_table(data))
    sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except EngineError as exc:  # a wrong name or folder: the message, not a traceback
        raise SystemExit(f"error: {exc}") from None
