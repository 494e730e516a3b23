"""Tests for engine.indexing.source_file: hashing, binary sniffing, decoding, minified content,
races."""

from __future__ import annotations

import codecs
import os
import random
from pathlib import Path
from typing import Any

import pytest

from engine.indexing.source_file import NotRead, SourceText, decode_source, hash_bytes, read_source
from engine.indexing.walk import Skipped, walk

CAP = 2_000_000


def read_ok(path: Path, max_file_bytes: int = CAP) -> SourceText:
    outcome = read_source(path, max_file_bytes=max_file_bytes)
    assert isinstance(outcome, SourceText), outcome
    return outcome


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_plain_utf8(tmp_path: Path) -> None:
    data = "def grüß():\n    return '日本'\n".encode()
    path = write(tmp_path, "a.py", data)
    source = read_ok(path)
    assert source.text == data.decode("utf-8")
    assert source.encoding == "utf-8"
    assert not source.had_decode_errors
    assert source.content_hash == hash_bytes(data)
    assert source.size_bytes == len(data)
    assert source.mtime_ns == path.stat().st_mtime_ns


def test_hash_is_of_raw_bytes_and_distinguishes_content() -> None:
    assert hash_bytes(b"a") != hash_bytes(b"b")
    assert hash_bytes(b"a") == hash_bytes(b"a")
    assert len(hash_bytes(b"")) == 32 and int(hash_bytes(b""), 16) >= 0
    # The BOM is part of the bytes, so it is part of the hash though not of the text.
    with_bom = decode_source(codecs.BOM_UTF8 + b"x\n")
    without = decode_source(b"x\n")
    assert isinstance(with_bom, SourceText) and isinstance(without, SourceText)
    assert with_bom.text == without.text == "x\n"
    assert with_bom.content_hash != without.content_hash


def test_utf8_bom_is_removed(tmp_path: Path) -> None:
    source = read_ok(write(tmp_path, "a.py", codecs.BOM_UTF8 + b"x = 1\n"))
    assert source.text == "x = 1\n"
    assert source.encoding == "utf-8-sig"


@pytest.mark.parametrize(
    ("codec", "bom", "expected_encoding"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le"),
        ("utf-16-be", codecs.BOM_UTF16_BE, "utf-16-be"),
        ("utf-32-le", codecs.BOM_UTF32_LE, "utf-32-le"),
        ("utf-32-be", codecs.BOM_UTF32_BE, "utf-32-be"),
    ],
)
def test_utf16_and_utf32_with_bom_are_text_despite_nul_bytes(
    tmp_path: Path, codec: str, bom: bytes, expected_encoding: str
) -> None:
    text = "class Größe:\r\n    pass\n"
    data = bom + text.encode(codec)
    assert b"\0" in data
    source = read_ok(write(tmp_path, "a.cs", data))
    assert source.text == text
    assert source.encoding == expected_encoding
    assert not source.had_decode_errors
    assert source.content_hash == hash_bytes(data)


def test_truncated_utf16_is_flagged_not_fatal(tmp_path: Path) -> None:
    data = codecs.BOM_UTF16_LE + "abc".encode("utf-16-le") + b"d"  # odd byte count
    source = read_ok(write(tmp_path, "a.txt", data))
    assert source.text.startswith("abc")
    assert source.had_decode_errors


def test_nul_byte_in_first_8_kib_is_binary(tmp_path: Path) -> None:
    outcome = read_source(
        write(tmp_path, "blob", b"x" * 8000 + b"\0" + b"y" * 100), max_file_bytes=CAP
    )
    assert outcome == NotRead("binary", "NUL byte in the first 8 KiB")


def test_nul_byte_after_8_kib_is_not_sniffed(tmp_path: Path) -> None:
    source = read_ok(write(tmp_path, "a.txt", b"x\n" * 4096 + b"\0"))
    assert source.text.endswith("\0")


def test_invalid_utf8_falls_back_to_replacement(tmp_path: Path) -> None:
    data = "café = 1  # latin-1\n".encode("latin-1")
    source = read_ok(write(tmp_path, "a.py", data))
    assert source.text == "caf\ufffd = 1  # latin-1\n"
    assert source.encoding == "utf-8"
    assert source.had_decode_errors
    assert source.content_hash == hash_bytes(data)


def test_legacy_encoded_text_is_kept_with_replacements(tmp_path: Path) -> None:
    data = "# Привет, мир\nprint('Привет')\n".encode("koi8-r")
    source = read_ok(write(tmp_path, "a.py", data))
    assert source.had_decode_errors
    assert source.text.startswith("# \ufffd")
    assert "print('" in source.text


def test_binary_without_nul_bytes_is_undecodable(tmp_path: Path) -> None:
    rng = random.Random(7)
    data = bytes(rng.randrange(1, 256) for _ in range(4000))  # never a NUL
    outcome = read_source(write(tmp_path, "blob.dat", data), max_file_bytes=CAP)
    assert isinstance(outcome, NotRead)
    assert outcome.reason == "undecodable"


def test_valid_utf8_with_control_characters_is_text(tmp_path: Path) -> None:
    data = b"\x01\x02\x03 ctrl-a/b/c in a test fixture\n"
    assert read_ok(write(tmp_path, "fixture.txt", data)).text == data.decode()


def test_crlf_and_lone_cr_are_kept(tmp_path: Path) -> None:
    data = b"a = 1\r\nb = 2\r\n\rc = 3"
    assert read_ok(write(tmp_path, "a.py", data)).text == "a = 1\r\nb = 2\r\n\rc = 3"


def test_empty_file(tmp_path: Path) -> None:
    source = read_ok(write(tmp_path, "empty.py", b""))
    assert source == SourceText("", hash_bytes(b""), "utf-8", False, 0, source.mtime_ns)


def test_ten_megabyte_single_line_is_minified_or_too_large(tmp_path: Path) -> None:
    path = write(tmp_path, "app.js", b"var a=1;" * 1_250_000)
    assert read_source(path, max_file_bytes=CAP).reason == "too-large"  # type: ignore[union-attr]
    assert read_source(path, max_file_bytes=20_000_000) == NotRead("minified", "very long lines")


def test_long_average_line_is_minified(tmp_path: Path) -> None:
    # No line reaches 5,000 characters, but none is shorter than 3,000 either.
    data = b"\n".join([b"f(" + b"x," * 1500 + b")"] * 10)
    outcome = read_source(write(tmp_path, "bundle.js", data), max_file_bytes=CAP)
    assert outcome == NotRead("minified", "very long lines")


def test_one_huge_line_dominating_the_file_is_minified(tmp_path: Path) -> None:
    data = b"// header\n" * 20 + b"x" * 6000 + b"\n" + b"// footer\n" * 20
    outcome = read_source(write(tmp_path, "a.js", data), max_file_bytes=CAP)
    assert outcome == NotRead("minified", "very long lines")


def test_ordinary_code_and_prose_are_not_minified(tmp_path: Path) -> None:
    code = ("def f(x):\n    return x * 2  # a comment of ordinary length\n\n" * 2000).encode()
    assert read_ok(write(tmp_path, "a.py", code)).text.startswith("def f")
    paragraph = ("word " * 160).strip()  # one ~800-character line per paragraph
    prose = ("# Title\n\n" + f"{paragraph}\n\n" * 50).encode()
    assert read_ok(write(tmp_path, "README.md", prose)).text.startswith("# Title")
    # One long line (a data URI) in a big file of ordinary code is kept.
    mixed = code + b"ICON = '" + b"A" * 6000 + b"'\n"
    assert read_ok(write(tmp_path, "icons.py", mixed)).text.endswith("'\n")
    # A long single line below the minimum size is not enough.
    assert read_ok(write(tmp_path, "short.json", b'{"k": "' + b"v" * 4000 + b'"}'))


def test_file_deleted_between_walk_and_read_is_vanished(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    walked = walk(tmp_path).files[0]
    walked.abs_path.unlink()
    outcome = read_source(walked.abs_path, max_file_bytes=CAP)
    assert isinstance(outcome, NotRead)
    assert outcome.reason == "vanished"
    assert outcome.as_skipped(walked.path) == Skipped("a.py", "vanished", outcome.detail)


def test_file_changed_between_walk_and_read_reports_what_was_read(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n", encoding="utf-8")
    walked = walk(tmp_path).files[0]
    path.write_text("x = 1\ny = 2\n", encoding="utf-8")
    os.utime(path, ns=(walked.mtime_ns + 10**9, walked.mtime_ns + 10**9))
    source = read_ok(walked.abs_path)
    assert source.text == "x = 1\ny = 2\n"
    assert source.size_bytes == 12 != walked.size_bytes
    assert source.mtime_ns == walked.mtime_ns + 10**9


def test_file_grown_past_the_cap_after_the_walk_is_too_large(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n", encoding="utf-8")
    walked = walk(tmp_path, max_file_bytes=100).files[0]
    path.write_text("x = 1\n" * 100, encoding="utf-8")
    outcome = read_source(walked.abs_path, max_file_bytes=100)
    assert isinstance(outcome, NotRead)
    assert outcome.reason == "too-large"


def test_unreadable_file_by_permissions(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", b"x = 1\n")
    path.chmod(0)
    try:
        try:
            path.read_bytes()
        except PermissionError:
            pass
        else:
            pytest.skip("this process reads through chmod 000 (root); see the simulated test")
        outcome = read_source(path, max_file_bytes=CAP)
    finally:
        path.chmod(0o644)
    assert outcome == NotRead("unreadable", "Permission denied")


def test_unreadable_file_simulated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "a.py", b"x = 1\n")

    def denied(file: Any, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(os, "open", denied)
    assert read_source(path, max_file_bytes=CAP) == NotRead("unreadable", "Permission denied")


def test_path_replaced_by_a_symlink_is_not_followed(tmp_path: Path) -> None:
    outside = write(tmp_path, "outside.py", b"secret = 1\n")
    (tmp_path / "repo").mkdir()
    link = tmp_path / "repo" / "a.py"
    link.symlink_to(outside)
    outcome = read_source(link, max_file_bytes=CAP)
    assert isinstance(outcome, NotRead)
    assert outcome.reason == "symlink"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_path_replaced_by_a_fifo_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert read_source(tmp_path / "pipe", max_file_bytes=CAP) == NotRead(
        "not-regular", "not a regular file"
    )


def test_directory_is_not_regular(tmp_path: Path) -> None:
    outcome = read_source(tmp_path, max_file_bytes=CAP)
    assert isinstance(outcome, NotRead)
    assert outcome.reason == "not-regular"
