"""Walking a repository: which files are worth indexing, and why every other path was skipped.

Decisions, in the order they are applied to each directory entry:

1. A directory whose name is in ``SKIPPED_DIR_NAMES`` (VCS metadata, dependencies, build
   output, caches) is skipped as ``ignored-dir`` at any depth and never descended; so is a
   directory holding a ``CACHEDIR.TAG`` file (an index home inside the repository has one).
2. A file whose name says it is a lockfile, a minified bundle, a source map or a known binary
   format is skipped by name. These built-in rules are absolute: ignore files cannot
   re-include such files.
3. Ignore files, with ``.gitignore`` syntax and semantics (``pathspec.GitIgnoreSpec``), by
   precedence: the project ignore file at the root (``.engineignore``; like ripgrep's
   ``.ignore`` it can re-include a gitignored path with ``!``), then every ``.gitignore``
   from the entry's own folder up to the root (deeper files win; patterns are relative to
   the folder holding the ``.gitignore``), then ``.git/info/exclude``. Within one file the
   last matching pattern wins. An ignored directory is never descended, so, as in git, a
   file below it cannot be re-included. ``.gitignore`` files are honoured whether or not
   the root is a git repository; the user's global git excludes and ``.gitignore`` files
   above the root are not, so an index does not depend on who built it.
4. Symlinks are never followed. A link whose target resolves outside the root is
   ``symlink-outside``; a dangling link or a loop is ``symlink-broken``; any other link is
   ``symlink`` (its target, being inside the root, is indexed under its own path).
5. FIFOs, sockets and devices are ``not-regular``; files larger than ``max_file_bytes`` are
   ``too-large``; files the process may not read are ``unreadable``.

A skipped directory is reported once, under its own path, never file by file. Per-path
problems are data in ``WalkResult.skipped``, never exceptions.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from engine.errors import UsageError

# The file the Cache Directory Tagging convention puts in a cache folder (engine.index.home
# writes one into every index home); spelled out here so the walk imports nothing of index/.
CACHEDIR_TAG = "CACHEDIR.TAG"

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

SkipReason = Literal[
    "ignored-dir",  # a dependency, build, cache or VCS folder (SKIPPED_DIR_NAMES)
    "gitignored",  # matched by a .gitignore or .git/info/exclude
    "engineignored",  # matched by the project ignore file (.engineignore)
    "lockfile",  # a package manager's lockfile (LOCKFILE_NAMES)
    "minified",  # a minified bundle, by name (walk) or by line lengths (read)
    "sourcemap",  # *.map
    "binary",  # a known binary extension (walk) or a NUL byte in the first 8 KiB (read)
    "too-large",  # more than max_file_bytes
    "symlink",  # a link whose target is inside the root; the target is indexed itself
    "symlink-outside",  # a link whose target resolves outside the root
    "symlink-broken",  # a dangling link or a link loop
    "not-regular",  # a FIFO, socket or device file
    "undecodable-name",  # a file name that is not valid UTF-8
    "undecodable",  # content that is mostly not text in any encoding we read
    "unreadable",  # permission denied or another OS error
    "vanished",  # deleted between listing and reading
]

SKIPPED_DIR_NAMES: frozenset[str] = frozenset(
    {
        # version control metadata
        ".git", ".hg", ".svn", ".bzr", "_darcs", ".jj",
        # dependencies fetched or vendored from elsewhere (Go's vendor/ holds copies of
        # other modules; PHP's and Ruby's hold installed packages)
        "node_modules", "bower_components", "jspm_packages", "vendor", ".bundle",
        ".venv", "venv", ".virtualenv", "site-packages", ".eggs", ".pnpm-store", ".yarn",
        # build output
        "dist", "build", "target", "_build", ".next", ".nuxt", ".svelte-kit",
        ".output", ".gradle", ".terraform", ".serverless", "bazel-out", "bazel-bin",
        "bazel-testlogs", "cmake-build-debug", "cmake-build-release",
        # caches of tools
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
        ".hypothesis", ".cache", ".parcel-cache", ".turbo", ".angular", ".dart_tool",
        ".ipynb_checkpoints", "htmlcov", ".nyc_output",
        # editor and IDE state
        ".idea", ".vscode", ".vs",
    }
)  # fmt: skip

LOCKFILE_NAMES: frozenset[str] = frozenset(
    {
        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
        "bun.lock", "bun.lockb", "deno.lock", "Cargo.lock", "poetry.lock", "Pipfile.lock",
        "pdm.lock", "uv.lock", "pixi.lock", "conda-lock.yml", "go.sum", "go.work.sum",
        "composer.lock", "Gemfile.lock", "mix.lock", "pubspec.lock", "Podfile.lock",
        "Package.resolved", "flake.lock", "packages.lock.json", "paket.lock",
        "gradle.lockfile", "conan.lock", "cabal.project.freeze", "stack.yaml.lock",
        "Manifest.toml", "renv.lock", "shard.lock",
    }
)  # fmt: skip

# Compared against the lower-cased name.
MINIFIED_SUFFIXES: tuple[str, ...] = (
    ".min.js", ".min.mjs", ".min.cjs", ".min.css", ".bundle.js", ".bundle.mjs", "-min.js",
)  # fmt: skip
SOURCEMAP_SUFFIX = ".map"
MAX_FILE_BYTES = 2_000_000  # larger files are skipped as too-large (indexing, status, watch)

# Lower-case, without the dot. Text formats (svg, json, csv) are left to the reader's sniffing.
BINARY_EXTENSIONS: frozenset[str] = frozenset(
    {
        # images
        "png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "webp", "tif", "tiff", "psd",
        "heic", "avif", "xcf", "cur",
        # audio and video
        "mp3", "mp4", "m4a", "m4v", "wav", "ogg", "oga", "flac", "aac", "avi", "mov", "mkv",
        "webm", "wmv", "flv", "mid", "midi",
        # archives and packages
        "zip", "tar", "gz", "tgz", "bz2", "xz", "txz", "7z", "rar", "zst", "lz4", "lzma",
        "jar", "war", "ear", "aar", "whl", "egg", "apk", "ipa", "deb", "rpm", "dmg", "iso",
        "msi", "cab", "nupkg", "gem", "crate",
        # fonts
        "ttf", "otf", "woff", "woff2", "eot", "pfb",
        # compiled code and objects
        "pyc", "pyo", "pyd", "so", "dylib", "dll", "exe", "o", "obj", "a", "lib", "ko",
        "class", "dex", "wasm", "bin", "elc", "beam", "pdb", "ilk", "exp", "rlib",
        "rmeta", "node", "hi", "cmo", "cmi", "cmx",
        # documents
        "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf",
        "epub",
        # data and model files
        "sqlite", "sqlite3", "db", "mdb", "parquet", "feather", "arrow", "avro", "orc",
        "npy", "npz", "pkl", "pickle", "joblib", "h5", "hdf5", "onnx", "pt", "pth",
        "safetensors", "ckpt", "tflite", "pb", "mat", "sav",
        # other
        "swp", "swo", "ds_store", "blend", "fbx", "glb", "3ds", "jks", "keystore", "p12",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class WalkedFile:
    """A file worth reading. ``path`` is repository-relative with ``/``."""

    path: str
    abs_path: Path
    size_bytes: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path left out of the index, and why. A skipped directory appears once, as itself."""

    path: str  # repository-relative with "/"; undecodable bytes shown as \\xNN escapes
    reason: SkipReason
    detail: str = ""  # the OS error or target, when that helps the user fix it


@dataclass(frozen=True, slots=True)
class BadIgnoreLine:
    """A line of an ignore file that is not a valid pattern; like git, the walk skips it."""

    path: str  # the ignore file, repository-relative with "/" (or its absolute path)
    line_number: int  # 1-based
    line: str
    reason: str

    def describe(self) -> str:
        return (
            f"{self.path}:{self.line_number}: ignore pattern {self.line!r} is not valid "
            f"({self.reason}); skipped, as git skips it"
        )


@dataclass(frozen=True, slots=True)
class WalkResult:
    files: list[WalkedFile]  # sorted by path
    skipped: list[Skipped] = field(default_factory=list)  # sorted by path
    root: str = ""  # the folder walked, with every link in it resolved
    bad_ignore_lines: list[BadIgnoreLine] = field(default_factory=list)  # in reading order

    def skip_counts(self) -> dict[SkipReason, int]:
        """How many paths were skipped for each reason, most frequent first."""
        return dict(Counter(s.reason for s in self.skipped).most_common())


@dataclass(frozen=True, slots=True)
class _IgnoreLayer:
    base: str  # repository-relative folder of the ignore file, "" or ending in "/"
    spec: GitIgnoreSpec
    reason: SkipReason


def walk(
    root: Path,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
    ignore_file_name: str = ".engineignore",
    skip_dir_names: frozenset[str] = SKIPPED_DIR_NAMES,
) -> WalkResult:
    """List the files under ``root`` worth indexing, and every path skipped with its reason.

    Raises UsageError when ``root`` is not a readable directory; every problem below the
    root is recorded in ``WalkResult.skipped`` instead.
    """
    try:
        real_root = Path(os.path.realpath(root))
        if not real_root.is_dir():
            raise UsageError(f"not a directory: {root}; give the repository's root folder")
    except OSError as err:
        raise UsageError(f"cannot open {root}: {err.strerror}") from err
    root_str = str(real_root)
    root_prefix = root_str.rstrip(os.sep) + os.sep

    bad_lines: list[BadIgnoreLine] = []
    head = _load_layers(real_root / ignore_file_name, "", "engineignored", bad_lines, real_root)
    tail = _load_layers(_git_exclude_file(real_root), "", "gitignored", bad_lines, real_root)

    files: list[WalkedFile] = []
    skipped: list[Skipped] = []
    # Iterative, so a very deep tree cannot hit the recursion limit. Each item: the folder's
    # absolute path, its repository-relative prefix ("" or ending in "/"), and the
    # .gitignore layers that apply to it, deepest first.
    stack: list[tuple[str, str, tuple[_IgnoreLayer, ...]]] = [(root_str, "", ())]
    while stack:
        dir_abs, prefix, gitignores = stack.pop()
        try:
            with os.scandir(dir_abs) as it:
                entries = list(it)
        except OSError as err:
            # The root itself must be listable; below it, a closed folder is one entry.
            if not prefix:
                raise UsageError(f"cannot list {root}: {err.strerror}") from err
            skipped.append(Skipped(prefix.rstrip("/"), _os_reason(err), _detail(err)))
            continue

        if prefix and any(e.name == CACHEDIR_TAG for e in entries):
            # A tagged cache folder, such as an index home inside the repository.
            skipped.append(Skipped(prefix.rstrip("/"), "ignored-dir", CACHEDIR_TAG))
            continue
        for entry in entries:
            if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
                gitignores = (
                    *_load_layers(Path(entry.path), prefix, "gitignored", bad_lines, real_root),
                    *gitignores,
                )
                break
        layers = (*head, *gitignores, *tail)

        for entry in entries:
            name = entry.name
            if not _is_utf8(name):
                shown = _shown(prefix + name)
                skipped.append(Skipped(shown, "undecodable-name"))
                continue
            rel = prefix + name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as err:
                skipped.append(Skipped(rel, _os_reason(err), _detail(err)))
                continue

            if is_dir:
                if name in skip_dir_names:
                    skipped.append(Skipped(rel, "ignored-dir"))
                    continue
                reason = _ignored_by(rel, layers, is_dir=True)
                if reason is not None:
                    skipped.append(Skipped(rel, reason))
                    continue
                stack.append((entry.path, rel + "/", gitignores))
                continue

            outcome = _name_reason(name) or _ignored_by(rel, layers, is_dir=False)
            if outcome is not None:
                skipped.append(Skipped(rel, outcome))
                continue
            walked = _examine_file(entry, rel, root_prefix, max_file_bytes)
            if isinstance(walked, Skipped):
                skipped.append(walked)
            else:
                files.append(walked)

    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    return WalkResult(files, skipped, root_str, bad_lines)


def _examine_file(
    entry: os.DirEntry[str], rel: str, root_prefix: str, max_file_bytes: int
) -> WalkedFile | Skipped:
    """Classify a non-directory entry by what it is on disk: link, special file, size."""
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as err:
        return Skipped(rel, _os_reason(err), _detail(err))
    if stat.S_ISLNK(st.st_mode):
        return _classify_symlink(entry.path, rel, root_prefix)
    if not stat.S_ISREG(st.st_mode):
        return Skipped(rel, "not-regular")
    if st.st_size > max_file_bytes:
        return Skipped(rel, "too-large", f"{st.st_size} bytes > {max_file_bytes}")
    # access() rather than a trial open: one cheap syscall, and the reader catches races.
    if not os.access(entry.path, os.R_OK):
        return Skipped(rel, "unreadable", "permission denied")
    return WalkedFile(rel, Path(entry.path), st.st_size, st.st_mtime_ns)


def _classify_symlink(link_abs: str, rel: str, root_prefix: str) -> Skipped:
    # realpath (non-strict) never raises on loops or dangling links; it returns a path.
    target = os.path.realpath(link_abs)
    if not (target + os.sep).startswith(root_prefix):
        return Skipped(rel, "symlink-outside", target)
    if not Path(target).exists():
        return Skipped(rel, "symlink-broken", target)
    return Skipped(rel, "symlink", target[len(root_prefix) :].replace(os.sep, "/"))


def _name_reason(name: str) -> SkipReason | None:
    """The built-in rules that need nothing but the file name."""
    if name in LOCKFILE_NAMES:
        return "lockfile"
    lower = name.lower()
    if lower.endswith(SOURCEMAP_SUFFIX):
        return "sourcemap"
    if lower.endswith(MINIFIED_SUFFIXES):
        return "minified"
    dot = name.rfind(".")
    if dot >= 0 and lower[dot + 1 :] in BINARY_EXTENSIONS:
        return "binary"
    return None


def _ignored_by(rel: str, layers: tuple[_IgnoreLayer, ...], *, is_dir: bool) -> SkipReason | None:
    """The reason of the highest-precedence ignore layer with a matching pattern, if any.

    A matching negation (``!pattern``) in a layer decides "keep" for that path, overriding
    every layer of lower precedence, as a deeper .gitignore does in git.
    """
    for layer in layers:
        sub = rel[len(layer.base) :]
        # gitignore patterns ending in "/" match only directories; pathspec spots a
        # directory by its trailing slash.
        result = layer.spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            return layer.reason if result.include else None
    return None


def _load_layers(
    path: Path, base: str, reason: SkipReason, bad_lines: list[BadIgnoreLine], root: Path
) -> tuple[_IgnoreLayer, ...]:
    """The ignore file at ``path`` as a layer; nothing when it is absent, empty or unreadable.

    An unreadable ignore file is not an error: the walk goes on without its patterns. A line
    that is not a valid pattern (``!``, a trailing ``\\``, ``[z-a]``) is left out, as git
    leaves it out, and noted in ``bad_lines``; the file's other lines still apply.
    """
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ()
    # Deferred: pathspec costs ~30 ms to import, and only a walk needs it.
    from pathspec import GitIgnoreSpec

    lines = text.splitlines()
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:  # pathspec raises its own errors and re.error; find the culprits
        good: list[str] = []
        for number, line in enumerate(lines, 1):
            try:
                GitIgnoreSpec.from_lines([line])
            except Exception as exc:
                bad_lines.append(
                    BadIgnoreLine(_shown_path(path, root), number, line, str(exc) or "invalid")
                )
            else:
                good.append(line)
        spec = GitIgnoreSpec.from_lines(good)
    return (_IgnoreLayer(base, spec, reason),) if len(spec) else ()


def _shown_path(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _git_exclude_file(root: Path) -> Path:
    """Where the repository's ``info/exclude`` lives, also for worktrees (``.git`` file)."""
    dot_git = root / ".git"
    if dot_git.is_file():
        try:
            first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0]
        except (OSError, IndexError):
            return dot_git / "info" / "exclude"  # does not exist: no layer
        git_dir = root / first.removeprefix("gitdir:").strip()
        common = git_dir / "commondir"
        if common.is_file():
            with contextlib.suppress(OSError):
                git_dir = git_dir / common.read_text(encoding="utf-8").strip()
        return git_dir / "info" / "exclude"
    return dot_git / "info" / "exclude"


def _is_utf8(name: str) -> bool:
    # os.scandir decodes undecodable bytes as lone surrogates, which cannot be encoded.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(rel: str) -> str:
    return os.fsencode(rel).decode("utf-8", errors="backslashreplace")


def _os_reason(err: OSError) -> SkipReason:
    return "vanished" if isinstance(err, FileNotFoundError) else "unreadable"


def _detail(err: OSError) -> str:
    return err.strerror or type(err).__name__
