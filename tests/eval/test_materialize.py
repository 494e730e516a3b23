"""Tests for eval.materialize against throwaway local git repositories (no network)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from eval.materialize import (
    MaterializeError,
    RepoSpec,
    find_mirror,
    load_repos,
    main,
    materialize,
)


def _git(*args: str, cwd: Path | None = None) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare repository with two commits; returns (bare dir, first commit, second commit)."""
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", "-b", "main", cwd=work)
    (work / "a.txt").write_text("one\n", encoding="utf-8")
    _git("add", "a.txt", cwd=work)
    _git("commit", "-q", "-m", "one", cwd=work)
    first = _git("rev-parse", "HEAD", cwd=work)
    (work / "a.txt").write_text("two\n", encoding="utf-8")
    _git("commit", "-q", "-am", "two", cwd=work)
    second = _git("rev-parse", "HEAD", cwd=work)
    bare = tmp_path / "upstream.git"
    _git("clone", "-q", "--bare", str(work), str(bare))
    return bare, first, second


def _spec(commit: str, url: str = "https://github.com/acme/widget") -> RepoSpec:
    return RepoSpec(
        name="widget", url=url, commit=commit, language="python", dataset="eval/x.jsonl"
    )


def _mirror_root(tmp_path: Path, bare: Path) -> Path:
    root = tmp_path / "mirror"
    # Snapshots are stored as <owner>+<name>/repo; the git dir sits one level down.
    (root / "acme+widget").mkdir(parents=True)
    _git("clone", "-q", "--bare", str(bare), str(root / "acme+widget" / "repo"))
    return root


def test_materializes_pinned_commit_from_mirror(
    tmp_path: Path, upstream: tuple[Path, str, str]
) -> None:
    bare, first, _ = upstream
    mirror_root = _mirror_root(tmp_path, bare)
    dest = tmp_path / "out" / "widget"

    source = materialize(_spec(first), dest, mirror_root=mirror_root, allow_network=False)

    assert source == "mirror"
    assert (dest / "a.txt").read_text(encoding="utf-8") == "one\n"
    assert _git("rev-parse", "HEAD", cwd=dest) == first
    # No staging folders are left next to the checkout.
    assert sorted(p.name for p in dest.parent.iterdir()) == ["widget"]


def test_second_run_is_a_no_op(tmp_path: Path, upstream: tuple[Path, str, str]) -> None:
    bare, first, _ = upstream
    mirror_root = _mirror_root(tmp_path, bare)
    dest = tmp_path / "widget"
    materialize(_spec(first), dest, mirror_root=mirror_root, allow_network=False)

    assert materialize(_spec(first), dest, mirror_root=mirror_root) == "existing"


def test_refuses_to_overwrite_a_checkout_at_another_commit(
    tmp_path: Path, upstream: tuple[Path, str, str]
) -> None:
    bare, first, second = upstream
    mirror_root = _mirror_root(tmp_path, bare)
    dest = tmp_path / "widget"
    materialize(_spec(first), dest, mirror_root=mirror_root, allow_network=False)

    with pytest.raises(MaterializeError, match="remove it"):
        materialize(_spec(second), dest, mirror_root=mirror_root, allow_network=False)
    assert _git("rev-parse", "HEAD", cwd=dest) == first


def test_mirror_without_the_commit_is_ignored(
    tmp_path: Path, upstream: tuple[Path, str, str]
) -> None:
    bare, _, _ = upstream
    mirror_root = _mirror_root(tmp_path, bare)

    assert find_mirror(_spec("0" * 40), mirror_root) is None
    with pytest.raises(MaterializeError, match="no local snapshot"):
        materialize(
            _spec("0" * 40), tmp_path / "widget", mirror_root=mirror_root, allow_network=False
        )


def test_falls_back_to_cloning_the_url(tmp_path: Path, upstream: tuple[Path, str, str]) -> None:
    bare, _, second = upstream
    # A local path stands in for the remote URL so the clone path runs without a network.
    spec = _spec(second, url=str(bare))

    source = materialize(spec, tmp_path / "widget", mirror_root=tmp_path / "no-mirror")

    assert source == "network"
    assert (tmp_path / "widget" / "a.txt").read_text(encoding="utf-8") == "two\n"


def test_failed_clone_explains_what_to_do(tmp_path: Path) -> None:
    spec = _spec("1" * 40, url=str(tmp_path / "missing.git"))

    with pytest.raises(MaterializeError, match="no local snapshot") as caught:
        materialize(spec, tmp_path / "widget", mirror_root=tmp_path / "no-mirror")
    assert "allow network access" in str(caught.value)
    assert not (tmp_path / "widget").exists()


def test_manifest_lists_the_pinned_repositories() -> None:
    specs = load_repos()
    assert {"jinja", "ky", "urfave-cli"} <= set(specs)
    assert specs["urfave-cli"].owner_and_name == ("urfave", "cli")


def test_cli_rejects_unknown_names_and_missing_arguments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["no-such-repo"]) == 2
    assert "unknown repository" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([])
