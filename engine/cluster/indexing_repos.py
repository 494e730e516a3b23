"""The repositories a cluster build indexes: a list file of ``path name`` lines, or a folder
whose subfolders are checkouts.

List file: one repository per line, ``PATH [NAME]``; blank lines and lines starting with
``#`` are skipped; a relative PATH is relative to the list file's folder; NAME defaults to
the folder's name. A PATH is where the workers find the checkout: the coordinator does not
need to see it (a worker that cannot says so, for that repository alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.errors import UsageError
from engine.index.home import slug_from_folder, validate_slug


@dataclass(frozen=True, slots=True)
class RepoSpec:
    slug: str
    root: Path  # absolute, as the workers see it


def read_repo_list(source: Path) -> list[RepoSpec]:
    """The repositories named by ``source`` (a list file or a folder of checkouts), in order."""
    if not source.exists():
        raise UsageError(
            f"{source} does not exist — give a file of 'PATH NAME' lines or a folder of checkouts"
        )
    specs = _from_folder(source) if source.is_dir() else _from_file(source)
    if not specs:
        raise UsageError(f"{source} names no repositories")
    seen: dict[str, Path] = {}
    for spec in specs:
        if spec.slug in seen and seen[spec.slug] != spec.root:
            raise UsageError(
                f"{source}: the name {spec.slug} is given to both {seen[spec.slug]} and "
                f"{spec.root} — give one of them another name"
            )
        seen[spec.slug] = spec.root
    return list({spec.slug: spec for spec in specs}.values())


def _from_folder(folder: Path) -> list[RepoSpec]:
    children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    return [RepoSpec(slug_from_folder(p.resolve()), p.resolve()) for p in children]


def _from_file(path: Path) -> list[RepoSpec]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is unreadable as a repository list ({exc})") from None
    specs = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) > 2:
            raise UsageError(
                f"{path}:{number}: expected 'PATH [NAME]', got {len(fields)} fields "
                f"({line!r}); a path with spaces is not supported"
            )
        root = Path(fields[0]).expanduser()
        if not root.is_absolute():
            root = path.parent.resolve() / root
        try:
            slug = validate_slug(fields[1]) if len(fields) == 2 else slug_from_folder(root)
        except UsageError as exc:
            raise UsageError(f"{path}:{number}: {exc}") from None
        specs.append(RepoSpec(slug, root))
    return specs
