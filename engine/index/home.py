"""Where indexes live: $ENGINE_HOME, repository slugs, the registry of indexed repositories."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson

from engine.errors import RepoNotFound, UsageError

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
REPO_FILE = "repo.json"


# The Cache Directory Tagging convention (bford.info/cachedir): backup tools skip a folder
# holding this file, and so does the walk, so an index home inside a repository is never
# indexed as part of it.
CACHEDIR_TAG = "CACHEDIR.TAG"  # the same name as engine.indexing.walk.CACHEDIR_TAG
CACHEDIR_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"


def engine_home() -> Path:
    """$ENGINE_HOME, else the user's data directory (XDG on Linux).

    Raises UsageError when $ENGINE_HOME is set but empty, or names something other than a
    folder: silently using another home would hide every index the user built.
    """
    configured = os.environ.get("ENGINE_HOME")
    if configured is not None:
        if not configured.strip():
            raise UsageError(
                "ENGINE_HOME is set but empty — unset it to use the default index home, or "
                "set it to a folder"
            )
        home = Path(configured).expanduser()
        if home.exists() and not home.is_dir():
            raise UsageError(
                f"ENGINE_HOME={configured} is not a folder — set it to a folder (it is "
                "created when missing)"
            )
        return home
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "engine"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "engine"


def slug_from_folder(path: Path) -> str:
    """A default slug from a folder name: lower-cased, odd characters turned into '-'."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", path.name.lower()).strip("-.")
    return slug[:64] or "repo"


def validate_slug(slug: str) -> str:
    if not _SLUG.match(slug) or ".." in slug:
        raise UsageError(
            f"invalid repository name {slug!r}: use 1-64 characters from a-z, 0-9, '.', '_' "
            "and '-', starting with a letter or digit (e.g. --name my-repo)"
        )
    return slug


@dataclass(frozen=True, slots=True)
class RepoEntry:
    slug: str
    root: Path  # absolute path of the indexed working tree
    directory: Path  # the repository's folder under $ENGINE_HOME/repos


class Home:
    """The index home: one folder per repository under ``repos/``, plus shared caches."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def repos_dir(self) -> Path:
        return self.root / "repos"

    def repo_dir(self, slug: str) -> Path:
        return self.repos_dir / validate_slug(slug)

    def register(self, slug: str, root: Path) -> RepoEntry:
        directory = self.repo_dir(slug)
        directory.mkdir(parents=True, exist_ok=True)
        tag = self.root / CACHEDIR_TAG
        if not tag.exists():
            tag.write_text(
                f"{CACHEDIR_SIGNATURE}\n# An engine index home: code search indexes, rebuilt "
                "from the repositories they index.\n",
                encoding="utf-8",
            )
        data = orjson.dumps({"slug": slug, "root": str(root)}, option=orjson.OPT_INDENT_2)
        tmp = directory / f".{REPO_FILE}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        tmp.replace(directory / REPO_FILE)
        return RepoEntry(slug, root, directory)

    def get(self, slug: str) -> RepoEntry:
        directory = self.repo_dir(slug)
        try:
            data = orjson.loads((directory / REPO_FILE).read_bytes())
        except FileNotFoundError:
            raise RepoNotFound(
                f"no index for {slug} — run engine index PATH --name {slug}"
            ) from None
        except orjson.JSONDecodeError as exc:
            raise RepoNotFound(
                f"the registration of {slug} is unreadable ({exc}) — run engine index PATH "
                f"--name {slug} again"
            ) from None
        return RepoEntry(slug, Path(data["root"]), directory)

    def list(self) -> list[RepoEntry]:
        if not self.repos_dir.is_dir():
            return []
        entries = []
        for child in sorted(self.repos_dir.iterdir()):
            if (child / REPO_FILE).is_file():
                try:
                    entries.append(self.get(child.name))
                except (RepoNotFound, UsageError):
                    continue
        return entries
