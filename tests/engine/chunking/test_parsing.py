"""engine/chunking/parsing.py: the parser never sees an astral code point, so the grammars'
scanners cannot read far past C's ctype table with one: the segfault that once ended a whole
pytest run in test_chunking_properties.py::test_arbitrary_text_in_any_language."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import engine.chunking.parsing
from engine.chunking.chunker import chunk_file
from engine.chunking.parsing import scanner_safe

ROOT = Path(__file__).resolve().parents[3]

# tree-sitter-language-pack 0.13.0 (tree-sitter 0.26.1) crashed on each of these in about one
# process in two, depending on where ASLR put the ctype table: the markdown scanner calls
# isdigit() on the code point after a digit that starts a line, the bash scanner on the one
# after "{" (upstream: tree-sitter-grammars/tree-sitter-markdown#252, tree-sitter-bash#348).
CRASHED_THE_PARSER = [
    ("markdown", "# Notes\n\n1\U0010ffff\n"),
    ("markdown", "7\U000f0000 item\n"),
    ("bash", "echo {\U0010ffff\n"),
    ("bash", "echo {1\U00100000\n"),
]


def test_astral_code_points_become_placeholders_of_the_same_length() -> None:
    text = "x = '\U0001f600'  # \U0001d465 \u00e9 \u20ac\n"
    safe = scanner_safe(text.encode())
    assert len(safe) == len(text.encode())
    assert safe.decode() == "x = '\u00a4\u00a4'  # \u00aa\u00aa \u00e9 \u20ac\n"
    ascii_only = b"def f():\n    pass\n"
    assert scanner_safe(ascii_only) is ascii_only
    undecodable = "\udcff1\udcf0".encode("utf-8", "surrogateescape")  # lone bytes stay
    assert scanner_safe(undecodable) is undecodable


def test_the_parser_is_handed_no_astral_code_point(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bytes] = []
    real = engine.chunking.parsing.parser_for

    class Recording:
        def __init__(self, language: str) -> None:
            self.parser = real(language)

        def parse(self, source: Any, **kwargs: Any) -> Any:
            seen.append(source if isinstance(source, bytes) else b"".join(iter_read(source)))
            return self.parser.parse(source, **kwargs)

    def iter_read(read: Any) -> Any:
        offset = 0
        while chunk := read(offset, None):
            yield chunk
            offset += len(chunk)

    monkeypatch.setattr(engine.chunking.parsing, "parser_for", Recording)
    big = "# Big\n\n" + "1\U0010ffff line\n" * 4000  # over the size where parse streams
    for language, text in [*CRASHED_THE_PARSER, ("markdown", big)]:
        chunk_file("f", text, language)
    assert len(seen) == len(CRASHED_THE_PARSER) + 1
    for data in seen:
        assert all(ord(c) <= 0xFFFF for c in data.decode("utf-8", "surrogateescape"))


def test_names_are_read_from_the_file_not_from_the_placeholders() -> None:
    text = "def f\U0001d465():\n    pass\n"
    [definition] = chunk_file("m.py", text, "python").definitions
    assert definition.name == "f\U0001d465"
    written = text.splitlines()[0].encode()[definition.name_start_col : definition.name_end_col]
    assert written.decode() == "f\U0001d465"


def test_inputs_that_crashed_the_parser_chunk_in_a_fresh_process() -> None:
    """End to end, in child processes so that a crash fails this test, not pytest. Without
    the placeholders each process crashed with probability ~0.55 here, so three catch a
    regression nine times in ten; the test above is the deterministic one."""
    script = (
        "import sys\n"
        "from engine.chunking.chunker import chunk_file\n"
        f"for language, text in {CRASHED_THE_PARSER!r}:\n"
        "    assert chunk_file('f', text, language).chunks\n"
    )
    for _ in range(3):
        child = subprocess.run(
            [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True
        )
        assert child.returncode == 0, (child.returncode, child.stderr[-2000:])
