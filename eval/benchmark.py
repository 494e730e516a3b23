"""A public benchmark (``../shared/benchmarks/semble-dev``) as the engine runs it: its
repositories at their pinned revisions, their indexes, and its labeled queries.

The benchmark folder holds ``repos.json`` (name, language, git URL, pinned ``revision``,
``benchmark_root``) and ``annotations/<name>.json`` (one ``{query, relevant, secondary,
category}`` per query). A repository is materialized by extracting its ``benchmark_root``
at the pinned revision from a bare snapshot under ``/work/.mirror/<owner>+<name>/`` (what
``fetch github:<owner>/<name>`` brings) into ``<checkouts>/<name>/``, written to a
temporary sibling first so an interrupted run never leaves half a tree. Only the
``benchmark_root`` is indexed, as ``<name>`` under the evaluation's ``$ENGINE_HOME``; later
runs reuse the index, so a ranking change costs no re-embedding.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from engine.errors import EngineError, UsageError
from eval.dataset import Target

MIRROR_ROOT = Path("/work/.mirror")
DEFAULT_CHECKOUTS = Path(".bench-repos")
ARCHIVE_TIMEOUT_S = 600.0


class BenchmarkError(EngineError):
    """A benchmark repository could not be materialized; the message says what to do."""


@dataclass(frozen=True, slots=True)
class BenchRepo:
    name: str
    language: str
    url: str
    revision: str
    root: str  # benchmark_root, relative to the repository root; "." for all of it

    @property
    def owner_and_name(self) -> tuple[str, str]:
        parts = self.url.rstrip("/").removesuffix(".git").split("/")
        return parts[-2], parts[-1]

    def repo_path(self, indexed_path: str) -> str:
        """A path as the index reports it (relative to ``root``) made relative to the repo."""
        return indexed_path if self.root == "." else f"{self.root}/{indexed_path}"


@dataclass(frozen=True, slots=True)
class BenchQuery:
    id: str  # "<repo>-<n>", n counting from 1 in the annotation file's order
    repo: str
    query: str
    category: str
    targets: tuple[Target, ...]  # relevant and secondary (gain 1 each), repo-root paths


def _target(raw: object, where: str) -> Target:
    if isinstance(raw, str):
        return Target(raw)
    if isinstance(raw, dict) and isinstance(raw.get("path"), str):
        start, end = raw.get("start_line"), raw.get("end_line")
        if isinstance(start, int) and isinstance(end, int) and 1 <= start <= end:
            return Target(raw["path"], start, end)
        return Target(raw["path"])
    raise UsageError(f"{where}: a target is a path or {{path, start_line, end_line}}")


def load_benchmark(
    folder: Path, only: Sequence[str] | None = None, *, negatives: Path | None = None
) -> tuple[list[BenchRepo], list[BenchQuery]]:
    """The benchmark's repositories (in ``repos.json`` order, or ``only`` those) and queries,
    then the unanswerable ones in ``negatives`` (JSONL of ``{id, repo, query}``; no targets)
    for those repositories."""
    try:
        raw_repos = orjson.loads((folder / "repos.json").read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise UsageError(
            f"{folder} is not a benchmark folder (cannot read repos.json: {exc})"
        ) from None
    repos = [
        BenchRepo(
            name=str(r["name"]),
            language=str(r["language"]),
            url=str(r["url"]),
            revision=str(r["revision"]),
            root=str(r.get("benchmark_root") or ".").strip("/") or ".",
        )
        for r in raw_repos
    ]
    if only:
        known = {r.name for r in repos}
        unknown = [name for name in only if name not in known]
        if unknown:
            raise UsageError(
                f"not in {folder}: {', '.join(unknown)} — choose from {', '.join(sorted(known))}"
            )
        repos = [r for r in repos if r.name in only]
    queries: list[BenchQuery] = []
    for repo in repos:
        path = folder / "annotations" / f"{repo.name}.json"
        try:
            items = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from None
        parsed = [
            [_target(t, f"{path} item {n}") for t in [*i["relevant"], *i.get("secondary", [])]]
            for n, i in enumerate(items, 1)
        ]
        # Three repositories' annotations (pandoc, xmonad, zls) write paths relative to the
        # benchmark_root, not the repository root: when no target of a repository starts with
        # its root, every target is read as relative to it.
        prefix = repo.root != "." and not any(
            t.path.startswith(f"{repo.root}/") for targets in parsed for t in targets
        )
        for n, (item, targets) in enumerate(zip(items, parsed, strict=True), 1):
            if prefix:
                targets = [replace(t, path=repo.repo_path(t.path)) for t in targets]
            queries.append(
                BenchQuery(
                    id=f"{repo.name}-{n}",
                    repo=repo.name,
                    query=str(item["query"]),
                    category=str(item.get("category", "")),
                    targets=tuple(targets),
                )
            )
    if negatives is not None:
        names = {r.name for r in repos}
        try:
            lines = negatives.read_bytes().splitlines()
            items = [orjson.loads(line) for line in lines if line.strip()]
        except (OSError, orjson.JSONDecodeError) as exc:
            raise UsageError(f"cannot read {negatives}: {exc}") from None
        queries += [
            BenchQuery(str(i["id"]), str(i["repo"]), str(i["query"]), "negative", ())
            for i in items
            if i.get("repo") in names
        ]
    return repos, queries


def _mirror_of(repo: BenchRepo, mirror_root: Path) -> Path:
    owner, name = repo.owner_and_name
    folder = mirror_root / f"{owner}+{name}"
    for candidate in (folder / "repo", folder):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    raise BenchmarkError(
        f"no snapshot of {owner}/{name} under {mirror_root} — fetch github:{owner}/{name} first"
    )


def materialize(repo: BenchRepo, checkouts: Path, mirror_root: Path | None = None) -> Path:
    """The folder to index for ``repo`` (its ``benchmark_root`` at the pinned revision)."""
    dest = checkouts / repo.name
    scope = dest if repo.root == "." else dest / repo.root
    if scope.is_dir():
        return scope
    git_dir = _mirror_of(repo, mirror_root or MIRROR_ROOT)
    tmp = checkouts / f".{repo.name}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    archive = ["git", f"--git-dir={git_dir}", "archive", repo.revision]
    if repo.root != ".":
        archive.append(repo.root)
    try:
        with subprocess.Popen(archive, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as git:
            tar = subprocess.run(
                ["tar", "-x", "-C", str(tmp)],
                stdin=git.stdout,
                capture_output=True,
                timeout=ARCHIVE_TIMEOUT_S,
                check=False,
            )
            git_err = git.stderr.read().decode(errors="replace") if git.stderr else ""
            if git.wait() != 0 or tar.returncode != 0:
                detail = git_err.strip() or tar.stderr.decode(errors="replace").strip()
                raise BenchmarkError(
                    f"cannot extract {repo.name} at {repo.revision[:12]} from {git_dir}: "
                    f"{detail} — fetch the repository again"
                )
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    tmp.rename(dest)
    return scope
