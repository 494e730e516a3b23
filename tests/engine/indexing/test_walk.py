"""Tests for engine.indexing.walk: ignore semantics, built-in skips, symlinks, odd names, errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.errors import UsageError
from engine.indexing.walk import SKIPPED_DIR_NAMES, Skipped, WalkResult, walk


def permissions_enforced(tmp_path: Path) -> bool:
    """Whether chmod 000 stops this process from reading (not so for root with CAP_DAC_*)."""
    probe = tmp_path / "probe"
    probe.write_bytes(b"")
    probe.chmod(0)
    try:
        probe.read_bytes()
    except PermissionError:
        return True
    finally:
        probe.chmod(0o644)
        probe.unlink()
    return False


def write(root: Path, rel: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def paths(result: WalkResult) -> list[str]:
    return [f.path for f in result.files]


def reasons(result: WalkResult) -> dict[str, str]:
    return {s.path: s.reason for s in result.skipped}


def test_files_are_sorted_relative_with_slashes_and_carry_stat(tmp_path: Path) -> None:
    write(tmp_path, "b.py", "print(1)\n")
    write(tmp_path, "a/z.py")
    write(tmp_path, "a/b/c.py", "")
    result = walk(tmp_path)
    assert paths(result) == ["a/b/c.py", "a/z.py", "b.py"]
    b = result.files[2]
    assert b.size_bytes == len("print(1)\n")
    assert b.abs_path == (tmp_path / "b.py").resolve()
    assert b.mtime_ns == (tmp_path / "b.py").stat().st_mtime_ns
    assert result.files[0].size_bytes == 0  # empty files are walked; the reader decides
    assert result.skipped == []


def test_root_gitignore_patterns_and_negation(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\n!keep.log\n/only_root.txt\nsecret/\n")
    write(tmp_path, "debug.log")
    write(tmp_path, "keep.log")
    write(tmp_path, "deep/trace.log")
    write(tmp_path, "only_root.txt")
    write(tmp_path, "deep/only_root.txt")
    write(tmp_path, "secret/a.py")
    write(tmp_path, "secret/b.py")
    result = walk(tmp_path)
    assert paths(result) == [".gitignore", "deep/only_root.txt", "keep.log"]
    assert reasons(result) == {
        "debug.log": "gitignored",
        "deep/trace.log": "gitignored",
        "only_root.txt": "gitignored",
        "secret": "gitignored",  # the directory once, not its two files
    }


def test_nested_gitignore_is_relative_to_its_folder_and_overrides_parent(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\ngen.py\n")
    write(tmp_path, "sub/.gitignore", "!keep.log\n/local.py\n")
    write(tmp_path, "sub/keep.log")
    write(tmp_path, "sub/other.log")
    write(tmp_path, "sub/local.py")
    write(tmp_path, "sub/deeper/local.py")  # "/local.py" is anchored to sub/
    write(tmp_path, "local.py")  # sub's patterns do not reach its parent
    write(tmp_path, "sub/gen.py")  # the root's unanchored pattern applies at any depth
    write(tmp_path, "sibling/keep.log")  # sub's negation does not reach a sibling
    result = walk(tmp_path)
    assert paths(result) == [
        ".gitignore",
        "local.py",
        "sub/.gitignore",
        "sub/deeper/local.py",
        "sub/keep.log",
    ]
    assert reasons(result) == {
        "sibling/keep.log": "gitignored",
        "sub/gen.py": "gitignored",
        "sub/local.py": "gitignored",
        "sub/other.log": "gitignored",
    }


def test_file_inside_ignored_directory_cannot_be_reincluded(tmp_path: Path) -> None:
    # As in git: "It is not possible to re-include a file if a parent directory is excluded."
    write(tmp_path, ".gitignore", "gen/\n!gen/x.py\nlib/*\n!lib/keep.py\n")
    write(tmp_path, "gen/x.py")
    write(tmp_path, "lib/keep.py")
    write(tmp_path, "lib/drop.py")
    result = walk(tmp_path)
    assert paths(result) == [".gitignore", "lib/keep.py"]
    assert reasons(result) == {"gen": "gitignored", "lib/drop.py": "gitignored"}


def test_directory_only_pattern_does_not_match_a_file(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "cache/\n")
    write(tmp_path, "cache")  # a file named like the directory pattern
    write(tmp_path, "pkg/cache/x.py")
    result = walk(tmp_path)
    assert paths(result) == [".gitignore", "cache"]
    assert reasons(result) == {"pkg/cache": "gitignored"}


def test_gitignore_with_crlf_line_endings(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", b"*.tmp\r\n# comment\r\n")
    write(tmp_path, "a.tmp")
    assert reasons(walk(tmp_path)) == {"a.tmp": "gitignored"}


def test_git_info_exclude_has_lowest_precedence(tmp_path: Path) -> None:
    write(tmp_path, ".git/info/exclude", "*.gen\nscratch/\n")
    write(tmp_path, "sub/.gitignore", "!wanted.gen\n")
    write(tmp_path, "a.gen")
    write(tmp_path, "sub/wanted.gen")
    write(tmp_path, "scratch/notes.txt")
    result = walk(tmp_path)
    assert paths(result) == ["sub/.gitignore", "sub/wanted.gen"]
    assert reasons(result) == {
        ".git": "ignored-dir",
        "a.gen": "gitignored",
        "scratch": "gitignored",
    }


def test_git_info_exclude_of_a_worktree_gitfile(tmp_path: Path) -> None:
    common = tmp_path / "main.git"
    write(common, "info/exclude", "*.wt\n")
    write(common, "worktrees/w/commondir", "../..\n")
    repo = tmp_path / "w"
    write(repo, ".git", f"gitdir: {common / 'worktrees' / 'w'}\n")
    write(repo, "a.wt")
    write(repo, "a.py")
    result = walk(repo)
    assert paths(result) == [".git", "a.py"]  # a .git *file* is just a file
    assert reasons(result) == {"a.wt": "gitignored"}


def test_engineignore_wins_over_gitignore(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\n")
    write(tmp_path, ".engineignore", "docs/\n!important.log\nfixtures/*.json\n")
    write(tmp_path, "docs/guide.md")
    write(tmp_path, "important.log")
    write(tmp_path, "noise.log")
    write(tmp_path, "fixtures/big.json")
    write(tmp_path, "fixtures/keep.py")
    result = walk(tmp_path)
    assert paths(result) == [".engineignore", ".gitignore", "fixtures/keep.py", "important.log"]
    assert reasons(result) == {
        "docs": "engineignored",
        "fixtures/big.json": "engineignored",
        "noise.log": "gitignored",
    }


def test_ignore_file_name_is_configurable(tmp_path: Path) -> None:
    write(tmp_path, ".myignore", "*.py\n")
    write(tmp_path, ".engineignore", "*.txt\n")
    write(tmp_path, "a.py")
    write(tmp_path, "a.txt")
    result = walk(tmp_path, ignore_file_name=".myignore")
    assert paths(result) == [".engineignore", ".myignore", "a.txt"]
    assert reasons(result) == {"a.py": "engineignored"}


def test_dependency_build_and_vcs_folders_are_skipped_once_at_any_depth(tmp_path: Path) -> None:
    for rel in [
        "node_modules/left-pad/index.js",
        "node_modules/x/y/z.js",
        ".git/HEAD",
        "pkg/__pycache__/m.cpython-311.pyc",
        "go/vendor/github.com/x/x.go",
        ".venv/lib/site.py",
        "build/out.js",
        "target/debug/app.rs",
    ]:
        write(tmp_path, rel)
    write(tmp_path, "pkg/m.py")
    result = walk(tmp_path)
    assert paths(result) == ["pkg/m.py"]
    assert reasons(result) == {
        ".git": "ignored-dir",
        ".venv": "ignored-dir",
        "build": "ignored-dir",
        "go/vendor": "ignored-dir",
        "node_modules": "ignored-dir",
        "pkg/__pycache__": "ignored-dir",
        "target": "ignored-dir",
    }
    assert result.skip_counts() == {"ignored-dir": 7}


def test_skip_dir_names_can_be_overridden(tmp_path: Path) -> None:
    write(tmp_path, "build/tool.py")
    write(tmp_path, "node_modules/a.js")
    result = walk(tmp_path, skip_dir_names=SKIPPED_DIR_NAMES - {"build"})
    assert paths(result) == ["build/tool.py"]


def test_name_based_skips(tmp_path: Path) -> None:
    for rel in [
        "package-lock.json",
        "web/yarn.lock",
        "Cargo.lock",
        "go.sum",
        "uv.lock",
        "app.min.js",
        "style.MIN.CSS",
        "vendor.bundle.js",
        "app.js.map",
        "logo.PNG",
        "lib.so",
        "mod.pyc",
        "font.woff2",
        "doc.pdf",
        "arch.tar.gz",
    ]:
        write(tmp_path, rel)
    write(tmp_path, "app.js")
    write(tmp_path, "package.json")
    result = walk(tmp_path)
    assert paths(result) == ["app.js", "package.json"]
    assert result.skip_counts() == {"binary": 6, "lockfile": 5, "minified": 3, "sourcemap": 1}
    assert reasons(result)["web/yarn.lock"] == "lockfile"
    assert reasons(result)["style.MIN.CSS"] == "minified"


def test_too_large_uses_the_cap_inclusively(tmp_path: Path) -> None:
    write(tmp_path, "exact.py", "a" * 100)
    write(tmp_path, "over.py", "a" * 101)
    result = walk(tmp_path, max_file_bytes=100)
    assert paths(result) == ["exact.py"]
    assert result.skipped == [Skipped("over.py", "too-large", "101 bytes > 100")]


def test_ten_megabyte_file_is_too_large_by_default(tmp_path: Path) -> None:
    write(tmp_path, "bundle.js", "a" * 10_000_000)
    assert reasons(walk(tmp_path)) == {"bundle.js": "too-large"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_not_regular_and_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")  # opening it would block the walk forever
    assert reasons(walk(tmp_path)) == {"pipe": "not-regular"}


def test_symlink_to_file_inside_root_is_skipped_and_target_indexed(tmp_path: Path) -> None:
    write(tmp_path, "real/a.py")
    (tmp_path / "alias.py").symlink_to(tmp_path / "real" / "a.py")
    (tmp_path / "rel_alias.py").symlink_to(Path("real") / "a.py")
    result = walk(tmp_path)
    assert paths(result) == ["real/a.py"]
    assert result.skipped == [
        Skipped("alias.py", "symlink", "real/a.py"),
        Skipped("rel_alias.py", "symlink", "real/a.py"),
    ]


def test_symlinked_directory_is_not_descended(tmp_path: Path) -> None:
    write(tmp_path, "real/a.py")
    (tmp_path / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "self").symlink_to(".", target_is_directory=True)
    result = walk(tmp_path)
    assert paths(result) == ["real/a.py"]
    assert reasons(result) == {"linked": "symlink", "self": "symlink"}


def test_symlinks_out_of_the_root_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.py")
    root = tmp_path / "repo"
    write(root, "a.py")
    (root / "escape.py").symlink_to(outside / "secret.py")
    (root / "escape_dir").symlink_to(outside, target_is_directory=True)
    (root / "up").symlink_to("..", target_is_directory=True)
    (root / "etc_passwd").symlink_to("/etc/passwd")
    result = walk(root)
    assert paths(result) == ["a.py"]
    assert reasons(result) == {
        "escape.py": "symlink-outside",
        "escape_dir": "symlink-outside",
        "etc_passwd": "symlink-outside",
        "up": "symlink-outside",
    }


def test_prefix_sibling_is_outside(tmp_path: Path) -> None:
    # /x/repo2 starts with the string "/x/repo" but is not inside it.
    write(tmp_path, "repo2/b.py")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "b.py").symlink_to(tmp_path / "repo2" / "b.py")
    assert reasons(walk(tmp_path / "repo")) == {"b.py": "symlink-outside"}


def test_dangling_and_looping_symlinks_do_not_crash(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "me").symlink_to(tmp_path / "me")
    result = walk(tmp_path)
    assert paths(result) == ["a.py"]
    assert reasons(result) == {
        "dangling.py": "symlink-broken",
        "loop1": "symlink-broken",
        "loop2": "symlink-broken",
        "me": "symlink-broken",
    }


def test_root_given_through_a_symlink(tmp_path: Path) -> None:
    write(tmp_path, "repo/a.py")
    (tmp_path / "repo" / "b.py").symlink_to(tmp_path / "repo" / "a.py")
    (tmp_path / "link").symlink_to(tmp_path / "repo", target_is_directory=True)
    result = walk(tmp_path / "link")
    assert paths(result) == ["a.py"]
    assert reasons(result) == {"b.py": "symlink"}


def test_gitignored_symlink_reports_gitignored(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "out-link\n")
    (tmp_path / "out-link").symlink_to("/etc", target_is_directory=True)
    assert reasons(walk(tmp_path)) == {"out-link": "gitignored"}


def test_unreadable_directory_and_file_by_permissions(tmp_path: Path) -> None:
    if not permissions_enforced(tmp_path):
        pytest.skip("this process reads through chmod 000 (root); see the simulated test")
    write(tmp_path, "a.py")
    closed_dir = write(tmp_path, "closed/x.py").parent
    closed_file = write(tmp_path, "closed.py")
    closed_dir.chmod(0)
    closed_file.chmod(0)
    try:
        result = walk(tmp_path)
    finally:
        closed_dir.chmod(0o755)
        closed_file.chmod(0o644)
    assert paths(result) == ["a.py"]
    assert reasons(result) == {"closed": "unreadable", "closed.py": "unreadable"}


def test_unreadable_directory_and_file_simulated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulated so the test also means something when run as root.
    write(tmp_path, "a.py")
    closed_dir = write(tmp_path, "closed/x.py").parent
    closed_file = write(tmp_path, "closed.py")
    real_scandir, real_access = os.scandir, os.access

    def scandir(path: str) -> object:
        if Path(path) == closed_dir.resolve():
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    def access(path: str, mode: int) -> bool:
        return Path(path) != closed_file.resolve() and real_access(path, mode)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "access", access)
    result = walk(tmp_path)
    assert paths(result) == ["a.py"]
    assert result.skipped == [
        Skipped("closed", "unreadable", "Permission denied"),
        Skipped("closed.py", "unreadable", "permission denied"),
    ]


def test_root_that_is_not_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a directory"):
        walk(tmp_path / "missing")
    with pytest.raises(UsageError, match="not a directory"):
        walk(write(tmp_path, "file.py"))


def test_odd_file_names(tmp_path: Path) -> None:
    names = [
        "with space.py",
        "ünïcødé.py",
        "日本語.py",
        "new\nline.py",
        "-dash.py",
        "#h#.py",
        "tab\there.py",
        "back\\slash.py",
        "quote'\".py",
        "emoji😀.py",
        "trailing. ",
    ]
    for name in names:
        write(tmp_path, f"dir with space/{name}")
    write(tmp_path, ".gitignore", "*.log\n")
    write(tmp_path, "multi\nline.log")  # wildcards match a newline inside a name
    result = walk(tmp_path)
    assert paths(result) == [".gitignore", *sorted(f"dir with space/{n}" for n in names)]
    assert reasons(result) == {"multi\nline.log": "gitignored"}
    for f in result.files:
        assert f.abs_path.is_file()


def test_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    write(tmp_path, "ok.py")
    try:
        fd = os.open(os.fsencode(tmp_path) + b"/bad\xff.py", os.O_WRONLY | os.O_CREAT, 0o644)
        os.close(fd)
    except OSError:
        pytest.skip("this file system refuses non-UTF-8 names")
    result = walk(tmp_path)
    assert paths(result) == ["ok.py"]
    assert result.skipped == [Skipped("bad\\xff.py", "undecodable-name")]


def test_deep_tree_does_not_recurse(tmp_path: Path) -> None:
    depth = 1100  # deeper than the default recursion limit of 1000
    folders = [tmp_path]
    for _ in range(depth):  # Path.mkdir(parents=True) itself would recurse too deep
        folders.append(folders[-1] / "d")
        folders[-1].mkdir()
    leaf = folders[-1] / "leaf.py"
    leaf.write_text("x = 1\n", encoding="utf-8")
    try:
        assert paths(walk(tmp_path)) == ["/".join(["d"] * depth) + "/leaf.py"]
    finally:
        # pytest's own clean-up (shutil.rmtree on 3.11) recurses, so empty the tree here.
        leaf.unlink()
        for folder in reversed(folders[1:]):
            folder.rmdir()


def test_skip_counts_sorted_by_frequency(tmp_path: Path) -> None:
    write(tmp_path, "a.png")
    write(tmp_path, "b.png")
    write(tmp_path, "yarn.lock")
    counts = walk(tmp_path).skip_counts()
    assert counts == {"binary": 2, "lockfile": 1}
    assert list(counts) == ["binary", "lockfile"]
