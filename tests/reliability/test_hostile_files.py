"""Hostile repository contents, indexed and searched end to end: nothing crashes or leaks.

Each file below is a way a real repository goes wrong (binary blobs, broken encodings, giant
or pathological files, odd names, links out of the tree). The index must still build, keep
every good file, report the bad ones by path, and answer searches.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any

import pytest

from engine.chunking.chunker import chunk_file
from engine.errors import UsageError
from engine.index.home import Home
from engine.indexing.source_file import SourceText, read_source
from tests.fakes import InProcessPool
from tests.reliability.conftest import GREETER, cli, index, search, stored_chunks, write

NESTING = 200  # deeper than any real code; tree-sitter and the chunker must not recurse out


def hostile_repo(root: Path) -> Path:
    write(root, "ok/greeter.py", GREETER)
    write(root, "bin/blob.dat", bytes(range(256)) * 64)
    write(root, "bin/looks_like.py", b"def x():\n    pass\n\x00\x01" + bytes(range(256)) * 8)
    write(root, "enc/latin1.py", b"def caf\xe9_latin():\n    return '\xff'\n")
    write(
        root,
        "enc/wide.py",
        codecs.BOM_UTF16_LE + "def wide_utf16_function():\n    return 'wide'\n".encode("utf-16-le"),
    )
    write(
        root,
        "enc/dos.py",
        b"def crlf_first():\r\n    return 1\r\n\r\n\r\ndef crlf_second():\r\n    return 2\r\n",
    )
    write(root, "big/minified.js", "var a=1;" * (10 * 1024 * 1024 // 8))  # 10 MB, one line
    write(root, "big/one_line.js", "function f(){return 1}" + "x" * 1_500_000)
    write(
        root,
        "big/many_lines.py",
        "".join(f"value_{i} = {i}\n" for i in range(99_999)) + "def last_line_function():\n",
    )
    write(
        root,
        "deep/nested.py",
        "def nested_deeply():\n"
        + "".join("    " * (i + 1) + f"if x{i}:\n" for i in range(NESTING))
        + "    " * (NESTING + 1)
        + "deep_call()\n",
    )
    write(
        root,
        "deep/nested.js",
        "function deepJs() {\n"
        + "".join("  " * i + "{\n" for i in range(NESTING))
        + "".join("  " * i + "}\n" for i in reversed(range(NESTING)))
        + "}\n",
    )
    write(root, "empty/empty.py", "")
    write(root, "empty/blank.py", "\n\n   \n\t\n")
    write(root, "names/with space.py", "def spaced_name_function():\n    pass\n")
    write(root, "names/ünï名前.py", "def unicode_name_function():\n    pass\n")
    write(root, "names/new\nline.py", "def newline_name_function():\n    pass\n")
    write(root, "names/-dash.py", "def dash_name_function():\n    pass\n")
    (root / "links").mkdir()
    (root / "links/loop_a").symlink_to("loop_b")
    (root / "links/loop_b").symlink_to("loop_a")
    outside = write(root.parent / "outside", "secret.py", "def outside_secret_function():\n")
    (root / "links/outside.py").symlink_to(outside)
    (root / "links/outside_dir").symlink_to(outside.parent)
    os.mkfifo(root / "links/fifo.py")
    return root


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return hostile_repo(tmp_path / "repo")


def top(home: Home, text: str) -> tuple[str, int, int, str]:
    results, warnings = search(home, text)
    assert warnings == []
    assert results, f"nothing found for {text!r}"
    return results[0]


def test_hostile_repository_indexes_and_answers(home: Home, hostile: Path) -> None:
    report = index(home, hostile)
    paths = {chunk[0] for chunk in stored_chunks(home)}
    assert paths == {
        "ok/greeter.py",
        "enc/latin1.py",
        "enc/wide.py",
        "enc/dos.py",
        "big/many_lines.py",
        "deep/nested.py",
        "deep/nested.js",
        "names/with space.py",
        "names/ünï名前.py",
        "names/new\nline.py",
        "names/-dash.py",
    }
    assert report.skipped == {
        "binary": 2,
        "minified": 1,
        "not-regular": 1,
        "symlink-broken": 2,
        "symlink-outside": 2,
        "too-large": 1,
    }
    assert report.problems == ["enc/latin1.py: undecodable bytes replaced"]
    assert report.files_indexed == len(paths) + 2  # the two empty files have no chunk

    assert top(home, "wide_utf16_function")[:3] == ("enc/wide.py", 1, 2)
    assert top(home, "crlf_second")[:3] == ("enc/dos.py", 5, 6)
    assert top(home, "last_line_function")[:2] == ("big/many_lines.py", 100_000)
    deepest = NESTING + 2
    assert any(
        path == "deep/nested.py" and start <= deepest <= end
        for path, start, end, _ in search(home, "deep_call")[0]
    )
    assert top(home, "deepJs")[0] == "deep/nested.js"
    assert top(home, "spaced_name_function")[0] == "names/with space.py"
    assert top(home, "unicode_name_function")[0] == "names/ünï名前.py"
    assert top(home, "newline_name_function")[0] == "names/new\nline.py"
    assert top(home, "greet")[0] == "ok/greeter.py"
    # Nothing behind a link out of the repository was read.
    assert all("outside_secret" not in text for *_, text in stored_chunks(home))
    results, _ = search(home, "outside_secret_function")
    assert all(not path.startswith("links/") for path, *_ in results)


def test_chunk_text_is_exactly_the_file_lines(home: Home, hostile: Path) -> None:
    index(home, hostile)
    lines: dict[str, list[str]] = {}
    for path, start, end, text in stored_chunks(home):
        if path.startswith("enc/"):
            continue  # decoded from another encoding or with replacements
        if path not in lines:
            lines[path] = (hostile / path).read_text(encoding="utf-8").splitlines()
        assert text == "\n".join(lines[path][start - 1 : end]), path


def test_cli_index_and_query_of_hostile_repository(home: Home, hostile: Path) -> None:
    code, report = cli("index", str(hostile), "--name", "hostile")
    assert code == 0
    assert report["files"] == 13
    code, answer = cli("query", "hostile", "newline_name_function")
    assert code == 0
    assert answer["results"][0]["filePath"] == "names/new\nline.py"


def test_reindex_after_hostile_changes(home: Home, hostile: Path) -> None:
    index(home, hostile)
    (hostile / "enc/wide.py").unlink()
    write(hostile, "bin/looks_like.py", "def now_text_function():\n    pass\n")
    (hostile / "links/loop_a").unlink()
    write(hostile, "names/with space.py", b"\x00\x01garbage" * 100)
    report = index(home, hostile)
    assert (report.files_added, report.files_changed, report.files_removed) == (1, 0, 2)
    assert top(home, "now_text_function")[0] == "bin/looks_like.py"
    assert all(path != "enc/wide.py" for path, *_ in stored_chunks(home))
    assert all(path != "names/with space.py" for path, *_ in stored_chunks(home))


def test_unreadable_file_is_reported_and_the_rest_indexed(
    home: Home, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulated (the tests may run as root, for whom chmod 000 changes nothing).
    closed = write(repo, "toy/closed.py", "def closed_function():\n    pass\n").resolve()
    real_access, real_open = os.access, os.open

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        return Path(path) != closed and real_access(path, mode, *args, **kwargs)

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path) == closed:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(os, "open", open_)
    report = index(home, repo)
    assert report.skipped == {"unreadable": 1}
    assert top(home, "shout")[0] == "toy/greeter.py"
    monkeypatch.undo()
    report = index(home, repo)
    assert report.files_added == 1
    assert top(home, "closed_function")[0] == "toy/closed.py"


@pytest.fixture
def chunk_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are chunked in worker processes, which the patches below would not reach."""
    monkeypatch.setattr("engine.indexing.parallel_chunking.shared_pool", InProcessPool)


def test_file_deleted_while_being_indexed(
    home: Home, repo: Path, monkeypatch: pytest.MonkeyPatch, chunk_in_process: None
) -> None:
    write(repo, "toy/doomed.py", "def doomed_function():\n    pass\n")

    def read_then_delete(abs_path: Path, **kwargs: Any) -> Any:
        if abs_path.name == "doomed.py":
            abs_path.unlink()  # gone between the walk and the read
        return read_source(abs_path, **kwargs)

    monkeypatch.setattr("engine.indexing.parallel_chunking.read_source", read_then_delete)
    report = index(home, repo)
    assert report.skipped == {"vanished": 1}
    assert {path for path, *_ in stored_chunks(home)} == {"toy/greeter.py", "toy/retry.py"}
    monkeypatch.undo()
    again = index(home, repo)
    assert again.up_to_date or (again.files_added, again.files_removed) == (0, 0)
    write(repo, "toy/doomed.py", "def reborn_function():\n    pass\n")
    index(home, repo)
    assert top(home, "reborn_function")[0] == "toy/doomed.py"


def test_file_changed_while_being_indexed_is_picked_up_next_run(
    home: Home, repo: Path, monkeypatch: pytest.MonkeyPatch, chunk_in_process: None
) -> None:
    target = repo / "toy" / "retry.py"

    def read_then_change(abs_path: Path, **kwargs: Any) -> Any:
        source = read_source(abs_path, **kwargs)
        if isinstance(source, SourceText) and abs_path.name == "retry.py":
            # Written after the read, as an editor saving during a reindex would.
            target.write_text("def changed_meanwhile_function():\n    pass\n")
            os.utime(target, ns=(source.mtime_ns + 10**9, source.mtime_ns + 10**9))
        return source

    monkeypatch.setattr("engine.indexing.parallel_chunking.read_source", read_then_change)
    index(home, repo)
    assert top(home, "backoff_delay")[0] == "toy/retry.py"  # what was read is what is indexed
    monkeypatch.undo()
    report = index(home, repo)
    assert report.files_changed == 1
    assert top(home, "changed_meanwhile_function")[0] == "toy/retry.py"
    assert all("backoff" not in text for *_, text in stored_chunks(home))


def test_chunker_failure_on_one_file_is_a_problem_not_a_crash(
    home: Home, repo: Path, monkeypatch: pytest.MonkeyPatch, chunk_in_process: None
) -> None:
    def explode(path: str, text: str, language: str) -> Any:
        if path.endswith("retry.py"):
            raise RecursionError("maximum recursion depth exceeded")
        return chunk_file(path, text, language)

    monkeypatch.setattr("engine.indexing.parallel_chunking.chunk_file", explode)
    report = index(home, repo)
    assert report.skipped == {"chunking-failed": 1}
    assert report.problems == [
        "toy/retry.py: chunking-failed (RecursionError: maximum recursion depth exceeded)"
    ]
    assert top(home, "shout")[0] == "toy/greeter.py"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("index", "{tmp}/missing"), "does not exist"),
        (("index", "{tmp}/repo/toy/greeter.py"), "is a file"),
        (("index", "{tmp}/repo", "--name", "../../etc"), "invalid repository name"),
        (("index", "{tmp}/repo", "--name", "a/b"), "invalid repository name"),
        (("index", "{tmp}/repo", "--name", "."), "invalid repository name"),
        (("index", "{tmp}/repo", "--name", "UPPER"), "invalid repository name"),
        (("index", "{tmp}/repo", "--name", "x" * 65), "invalid repository name"),
        (("reindex", "../toy"), "invalid repository name"),
        (("query", "..", "greet"), "invalid repository name"),
        (("query", "toy/../../etc", "greet"), "invalid repository name"),
        (("status", "/etc"), "invalid repository name"),
        (("remove", ".."), "invalid repository name"),
    ],
)
def test_bad_paths_and_slugs_are_json_errors(
    home: Home, repo: Path, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    code, data = cli(*(arg.format(tmp=tmp_path) for arg in args))
    assert code == 1
    assert message in data["error"]
    assert not (tmp_path / "etc").exists()
    assert not home.root.exists() or not any(p.name in ("etc", "..") for p in home.root.rglob("*"))


def test_index_of_a_root_that_vanished_since_registration(home: Home, repo: Path) -> None:
    index(home, repo)
    repo.rename(repo.with_name("moved"))
    code, data = cli("reindex", "toy")
    assert code == 1
    assert "engine index PATH --name toy" in data["error"]
    code, data = cli("query", "toy", "greet")  # the index itself still answers
    assert code == 0 and data["results"]


def test_root_given_through_a_symlink(home: Home, repo: Path, tmp_path: Path) -> None:
    link = tmp_path / "link-to-repo"
    link.symlink_to(repo)
    report = index(home, link)
    assert report.root == str(repo.resolve())
    with pytest.raises(UsageError, match="already registered"):
        index(home, tmp_path)
