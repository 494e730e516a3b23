"""Materializes an evaluation repository at its pinned commit, from the cheapest source that works.

Sources, tried in order for each repository named in ``eval/repos.json``:

1. the destination itself, when it is already a checkout at the pinned commit (nothing to do);
2. a local bare snapshot under ``/work/.mirror/<owner>+<name>/`` (no network needed);
3. ``git clone <url>`` when the network allows.

A clone is written to a temporary sibling of the destination and renamed into place, so a
failed or interrupted run never leaves a half-populated ``.eval-repos/<name>``.

Usage: ``python -m eval.materialize NAME [--dest DIR]`` or ``python -m eval.materialize --all``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engine.errors import EngineError

REPOS_JSON = Path(__file__).resolve().parent / "repos.json"
DEFAULT_ROOT = Path(".eval-repos")
MIRROR_ROOT = Path("/work/.mirror")
# A network clone of these repositories takes seconds; a stalled one should not hang forever.
CLONE_TIMEOUT_S = 600.0
# Bare snapshots sit a level or two below the mirror folder (e.g. ``owner+name/repo``).
_MIRROR_SEARCH_DEPTH = 3


# Where a checkout came from, in the order the sources are tried.
Source = Literal["existing", "mirror", "network"]


class MaterializeError(EngineError):
    """A repository could not be brought to its pinned commit; the message says what to do."""


@dataclass(frozen=True)
class RepoSpec:
    """One entry of ``eval/repos.json``."""

    name: str
    url: str
    commit: str
    language: str
    dataset: str

    @property
    def owner_and_name(self) -> tuple[str, str]:
        """``("pallets", "jinja")`` for ``https://github.com/pallets/jinja``."""
        parts = self.url.rstrip("/").removesuffix(".git").split("/")
        return parts[-2], parts[-1]


def load_repos(path: Path = REPOS_JSON) -> dict[str, RepoSpec]:
    """Read the manifest of evaluation repositories, keyed by short name."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise MaterializeError(f"{path}: expected a JSON object keyed by repository name")
    specs: dict[str, RepoSpec] = {}
    for name, entry in raw.items():
        try:
            specs[name] = RepoSpec(
                name=name,
                url=str(entry["url"]),
                commit=str(entry["commit"]),
                language=str(entry["language"]),
                dataset=str(entry["dataset"]),
            )
        except (KeyError, TypeError) as exc:
            raise MaterializeError(f"{path}: entry {name!r} lacks a field: {exc}") from exc
    return specs


def _git(
    args: Sequence[str], *, timeout_s: float | None = None
) -> subprocess.CompletedProcess[str]:
    # Never let git ask for credentials on a terminal: a private or missing repo must fail fast.
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        ["git", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=timeout_s,
    )


def _head_commit(checkout: Path) -> str | None:
    if not (checkout / ".git").exists():
        return None
    result = _git(["-C", str(checkout), "rev-parse", "HEAD"])
    return result.stdout.strip() if result.returncode == 0 else None


def _has_commit(git_dir: Path, commit: str) -> bool:
    result = _git(["--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"])
    return result.returncode == 0


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def find_mirror(spec: RepoSpec, mirror_root: Path = MIRROR_ROOT) -> Path | None:
    """The git directory of a local snapshot of ``spec`` that holds its commit, if any."""
    owner, name = spec.owner_and_name
    base = mirror_root / f"{owner}+{name}"
    if not base.is_dir():
        return None
    frontier = [base]
    for _ in range(_MIRROR_SEARCH_DEPTH):
        next_frontier: list[Path] = []
        for folder in frontier:
            for candidate in (folder, folder / ".git"):
                if _is_git_dir(candidate) and _has_commit(candidate, spec.commit):
                    return candidate
            next_frontier.extend(sorted(p for p in folder.iterdir() if p.is_dir()))
        frontier = next_frontier
    return None


def _clone_and_checkout(source: str, spec: RepoSpec, dest: Path, timeout_s: float | None) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{spec.name}.", dir=dest.parent))
    try:
        target = staging / "checkout"
        cloned = _git(
            ["clone", "--quiet", "--no-checkout", source, str(target)], timeout_s=timeout_s
        )
        if cloned.returncode != 0:
            raise MaterializeError(f"git clone {source} failed: {cloned.stderr.strip()}")
        checked_out = _git(["-C", str(target), "checkout", "--quiet", "--detach", spec.commit])
        if checked_out.returncode != 0:
            raise MaterializeError(
                f"{source} has no commit {spec.commit}: {checked_out.stderr.strip()}"
            )
        target.rename(dest)
    except subprocess.TimeoutExpired as exc:
        raise MaterializeError(
            f"git clone {source} took longer than {timeout_s} s; check the network or use a "
            f"local snapshot under {MIRROR_ROOT}"
        ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def materialize(
    spec: RepoSpec,
    dest: Path,
    *,
    mirror_root: Path = MIRROR_ROOT,
    allow_network: bool = True,
) -> Source:
    """Bring ``dest`` to ``spec.commit`` and return which source provided it."""
    head = _head_commit(dest)
    if head == spec.commit:
        return "existing"
    if dest.exists() and any(dest.iterdir()):
        found = f"a checkout at {head}" if head else "a folder that is not a git checkout"
        raise MaterializeError(f"{dest} holds {found}, not {spec.commit}; remove it and run again")
    if dest.exists():
        dest.rmdir()

    mirror = find_mirror(spec, mirror_root)
    if mirror is not None:
        _clone_and_checkout(str(mirror), spec, dest, timeout_s=None)
        return "mirror"

    if not allow_network:
        raise MaterializeError(
            f"no local snapshot of {spec.name} at {spec.commit} under {mirror_root} "
            "and network cloning is disabled"
        )
    try:
        _clone_and_checkout(spec.url, spec, dest, timeout_s=CLONE_TIMEOUT_S)
    except MaterializeError as exc:
        raise MaterializeError(
            f"cannot materialize {spec.name}: no local snapshot holding {spec.commit} under "
            f"{mirror_root}, and cloning {spec.url} failed ({exc}). Fetch a snapshot of the "
            "repository or allow network access to github.com."
        ) from exc
    return "network"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m eval.materialize",
        description="Check out evaluation repositories at the commits pinned in eval/repos.json.",
    )
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help="repository name(s) to materialize"
    )
    parser.add_argument("--all", action="store_true", help="materialize every repository")
    parser.add_argument(
        "--dest",
        type=Path,
        default=None,
        help="checkout folder (single NAME only); default .eval-repos/NAME",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=DEFAULT_ROOT,
        help="parent folder of checkouts (default .eval-repos)",
    )
    parser.add_argument("--no-network", action="store_true", help="never clone from the network")
    args = parser.parse_args(argv)
    if args.all == bool(args.names):
        parser.error("name one or more repositories, or pass --all")
    if args.dest is not None and (args.all or len(args.names) != 1):
        parser.error("--dest needs exactly one NAME")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    args = _parse_args(argv)
    try:
        specs = load_repos()
    except (OSError, ValueError, MaterializeError) as exc:
        print(f"error: cannot read {REPOS_JSON}: {exc}", file=sys.stderr)
        return 2
    names: list[str] = sorted(specs) if args.all else list(args.names)
    unknown = [n for n in names if n not in specs]
    if unknown:
        print(
            f"error: unknown repository {', '.join(unknown)}; known: {', '.join(sorted(specs))}",
            file=sys.stderr,
        )
        return 2
    failed = 0
    for name in names:
        dest = args.dest if args.dest is not None else args.root / name
        try:
            source = materialize(specs[name], dest, allow_network=not args.no_network)
        except MaterializeError as exc:
            print(f"error: {name}: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"{name}: {dest} at {specs[name].commit[:12]} ({source})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
