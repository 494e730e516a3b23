"""The chunker's rules: line numbering, coverage, class/module layout, splitting, fallbacks."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap

import pytest

from engine.chunking import parsing as chunking_parsing
from engine.chunking.chunker import CHUNKER_VERSION, MAX_LINE_CHARS, chunk_file, split_lines
from engine.chunking.layout import MAX_CHUNK_LINES
from engine.chunking.markdown import MAX_SECTION_LINES
from engine.chunking.windows import TEXT_WINDOW_LINES
from engine.types import ChunkDraft, FileChunks


def _rows(result: FileChunks) -> list[tuple[int, int, str, str]]:
    return [(c.start_line, c.end_line, c.kind, c.qualified_name) for c in result.chunks]


def _assert_covered(text: str, chunks: list[ChunkDraft]) -> None:
    lines = split_lines(text)
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    missing = [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered]
    assert missing == []
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])


def test_version_is_an_int() -> None:
    assert isinstance(CHUNKER_VERSION, int)
    assert CHUNKER_VERSION >= 1


def test_empty_and_blank_files_have_no_chunks() -> None:
    assert chunk_file("a.py", "", "python") == FileChunks([], [])
    assert chunk_file("a.py", "\n \n\t\n", "python") == FileChunks([], [])
    assert chunk_file("a.txt", "", None) == FileChunks([], [])


def test_lines_are_numbered_as_an_editor_shows_them() -> None:
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("a\r\nb\rc\n\n") == ["a", "b", "c", ""]
    # Form feeds and other Unicode separators are not line breaks in editors.
    assert split_lines("a\x0cb\u2028c") == ["a\x0cb\u2028c"]


def test_crlf_and_cr_give_the_same_chunks_as_lf() -> None:
    source = (
        "import os\n\n\ndef f():\n    return 1\n\n\n"
        "class A:\n    x = 1\n\n    def m(self):\n        pass\n"
    )
    expected = chunk_file("a.py", source, "python")
    for newline in ("\r\n", "\r"):
        result = chunk_file("a.py", source.replace("\n", newline), "python")
        assert result == expected
    assert all("\r" not in c.text for c in expected.chunks)


def test_module_code_between_definitions_is_merged_into_runs() -> None:
    source = textwrap.dedent(
        """\
        import os
        import sys
        from typing import Any

        LIMIT = 10


        def f():
            return LIMIT


        x = f()
        y = x + 1
        """
    )
    assert _rows(chunk_file("a.py", source, "python")) == [
        (1, 5, "module", ""),
        (8, 9, "function", "f"),
        (12, 13, "module", ""),
    ]


def test_class_chunk_holds_header_and_fields_but_not_method_bodies() -> None:
    source = textwrap.dedent(
        """\
        class Config:
            \"\"\"Settings.\"\"\"

            name: str = "x"

            def load(self):
                return 1

            timeout: int = 5

            def save(self):
                return 2
        """
    )
    result = chunk_file("a.py", source, "python")
    assert _rows(result) == [
        (1, 4, "class", "Config"),
        (6, 7, "method", "Config.load"),
        (9, 9, "class", "Config"),  # a field between methods is the class's too
        (11, 12, "method", "Config.save"),
    ]
    assert {c.signature for c in result.chunks if c.kind == "class"} == {"class Config:"}


def test_closing_brace_stays_with_its_own_definition() -> None:
    """Issue 17: a method's chunk ends at its own last line, not its class's closing brace."""
    source = textwrap.dedent(
        """\
        class A {
          int x;

          void f() {
            x = 1;
          }
        }
        """
    )
    assert _rows(chunk_file("A.java", source, "java")) == [
        (1, 2, "class", "A"),
        (4, 6, "method", "A.f"),
        (7, 7, "class", "A"),  # the class's own last line
    ]
    header = "#ifndef A_H\n#define A_H\n\nint f(void) {\n  return 1;\n}\n\n#endif  /* A_H */\n"
    assert _rows(chunk_file("a.h", header, "c")) == [
        (1, 2, "module", ""),
        (4, 6, "function", "f"),
        (8, 8, "module", ""),
    ]
    fields = "class B {\n  void f() {}\n  int y;\n}\n"
    # After a field the brace joins the class's chunk before it: same definition.
    assert _rows(chunk_file("B.java", fields, "java")) == [
        (1, 1, "class", "B"),
        (2, 2, "method", "B.f"),
        (3, 4, "class", "B"),
    ]


def test_typescript_method_range_does_not_swallow_the_class_brace() -> None:
    """Issue 17: ``greet`` spans lines 2-4; its chunk was 2-5."""
    source = "class Greeter {\n  greet(name: string): string {\n    return name;\n  }\n}\n"
    result = chunk_file("greeter.ts", source, "typescript")
    assert _rows(result) == [
        (1, 1, "class", "Greeter"),
        (2, 4, "method", "Greeter.greet"),
        (5, 5, "class", "Greeter"),
    ]
    greet = next(d for d in result.definitions if d.name == "greet")
    assert (greet.start_line, greet.end_line) == (2, 4)


def test_long_function_is_split_at_statements_and_keeps_its_signature() -> None:
    body = "".join(f"    value_{i} = compute({i})\n" for i in range(200))
    source = f"def build(items: list[int]) -> dict:\n{body}    return locals()\n"
    result = chunk_file("a.py", source, "python")
    windows = result.chunks
    assert len(windows) == 3  # 202 lines in the fewest windows of at most MAX_CHUNK_LINES
    assert windows[0].start_line == 1
    assert windows[-1].end_line == 202
    for before, after in itertools.pairwise(windows):
        assert after.start_line == before.end_line + 1
    for window in windows:
        assert window.end_line - window.start_line + 1 <= MAX_CHUNK_LINES
        assert (window.kind, window.name, window.qualified_name) == ("function", "build", "build")
        assert window.signature == "def build(items: list[int]) -> dict:"
    assert [d.qualified_name for d in result.definitions] == ["build"]


def test_split_prefers_statement_starts_over_blank_lines_inside_strings() -> None:
    # Each statement is a 3-line call; a cut inside one would split the call.
    statements = "".join(f"    register(\n        {i},\n    )\n" for i in range(60))
    source = f"def setup():\n{statements}"
    starts = {2 + 3 * i for i in range(60)}
    for window in chunk_file("a.py", source, "python").chunks[1:]:
        assert window.start_line in starts


def test_long_module_run_and_long_text_are_windowed() -> None:
    source = "".join(f"CONSTANT_{i} = {i}\n" for i in range(500))
    chunks = chunk_file("a.py", source, "python").chunks
    assert all(c.kind == "module" for c in chunks)
    assert max(c.end_line - c.start_line + 1 for c in chunks) <= MAX_CHUNK_LINES
    _assert_covered(source, chunks)

    prose = "".join(f"line {i}\n" + ("\n" if i % 9 == 0 else "") for i in range(300))
    windows = chunk_file("notes.txt", prose, "text").chunks
    assert {c.kind for c in windows} == {"window"}
    assert max(c.end_line - c.start_line + 1 for c in windows) <= TEXT_WINDOW_LINES
    _assert_covered(prose, windows)
    # Cuts fall on paragraph starts when there is one in reach.
    lines = split_lines(prose)
    assert all(lines[c.start_line - 2] == "" for c in windows[1:])


def test_unknown_language_and_languages_without_grammar_get_windows() -> None:
    result = chunk_file("data.bin.txt", "a\nb\n", None)
    assert [(c.language, c.kind, c.start_line, c.end_line) for c in result.chunks] == [
        ("text", "window", 1, 2)
    ]
    result = chunk_file("config.json", '{\n  "a": 1\n}\n', "json")
    assert [(c.language, c.kind) for c in result.chunks] == [("json", "window")]
    assert result.definitions == []


def test_markdown_long_section_is_split_and_keeps_its_heading() -> None:
    paragraphs = "".join(f"Paragraph {i} line one.\nLine two.\n\n" for i in range(60))
    source = f"# Guide\n\n{paragraphs}## End\n\nBye.\n"
    chunks = chunk_file("README.md", source, "markdown").chunks
    guide = [c for c in chunks if c.name == "Guide"]
    assert len(guide) > 1
    assert all(c.end_line - c.start_line + 1 <= MAX_SECTION_LINES for c in guide)
    assert {c.signature for c in guide} == {"# Guide"}
    assert chunks[-1].name == "End"
    _assert_covered(source, chunks)


def test_arrow_functions_count_but_anonymous_functions_do_not() -> None:
    source = textwrap.dedent(
        """\
        export const parseBody = (req) => req.body;
        const handlers = [function () {}, () => 1];
        setTimeout(function () { run(); }, 10);
        """
    )
    result = chunk_file("a.js", source, "javascript")
    assert [(d.kind, d.name) for d in result.definitions] == [("function", "parseBody")]


def test_go_methods_and_rust_impl_methods_are_qualified_by_their_type() -> None:
    go = "package p\n\nfunc (r *Router) Handle() {}\n\nfunc (r Router) Get() {}\n"
    names = [(d.qualified_name, d.kind) for d in chunk_file("r.go", go, "go").definitions]
    assert names == [("Router.Handle", "method"), ("Router.Get", "method")]
    rust = "impl<T: Clone> Stack<T> {\n    fn push(&mut self, v: T) {}\n}\n"
    names = [(d.qualified_name, d.kind) for d in chunk_file("s.rs", rust, "rust").definitions]
    assert names == [("Stack", "impl"), ("Stack.push", "method")]


def test_files_with_syntax_errors_are_still_covered() -> None:
    source = "def broken(:\n    return )\n\nclass Fine:\n    def ok(self):\n        pass\n}}}\n"
    result = chunk_file("a.py", source, "python")
    _assert_covered(source, result.chunks)
    assert "Fine.ok" in {d.qualified_name for d in result.definitions}


def test_deep_nesting_does_not_recurse() -> None:
    brackets = "x = " + "[" * 500 + "]" * 500 + "\n"
    _assert_covered(brackets, chunk_file("a.py", brackets, "python").chunks)
    nested = "".join("    " * i + f"def f{i}():\n" for i in range(500)) + "    " * 500 + "pass\n"
    result = chunk_file("a.py", nested, "python")
    _assert_covered(nested, result.chunks)
    assert len(result.definitions) == 500
    assert result.definitions[-1].qualified_name.count(".") == 499
    braces = "".join(f"function f{i}() {{\n" for i in range(500)) + "}\n" * 500
    _assert_covered(braces, chunk_file("a.js", braces, "javascript").chunks)


def test_huge_runs_of_error_tokens_fall_back_to_windows() -> None:
    # The query cursor is quadratic in such a node: 100k of these took minutes.
    source = "{\n" * 30_000
    result = chunk_file("a.js", source, "javascript")
    assert {c.kind for c in result.chunks} == {"window"}
    assert result.definitions == []
    _assert_covered(source, result.chunks)


def test_a_parse_over_its_time_budget_falls_back_to_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chunking_parsing, "PARSE_BUDGET_S", -1.0)
    monkeypatch.setattr(chunking_parsing, "PARSE_BUDGET_S_PER_MB", 0.0)
    large = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(2000))
    assert len(large) > chunking_parsing.GUARDED_PARSE_MIN_BYTES
    result = chunk_file("big.py", large, "python")
    assert {c.kind for c in result.chunks} == {"window"}
    assert result.definitions == []
    _assert_covered(large, result.chunks)
    # Small files are parsed without the guard, so they keep their syntax chunks.
    small = chunk_file("small.py", "def f():\n    pass\n", "python")
    assert [c.kind for c in small.chunks] == ["function"]


def test_minified_lines_fall_back_to_windows() -> None:
    line = "function a(){return 1}" * (MAX_LINE_CHARS // 20)
    result = chunk_file("app.min.js", line + "\n", "javascript")
    assert [(c.kind, c.start_line, c.end_line) for c in result.chunks] == [("window", 1, 1)]
    huge = chunk_file("blob.txt", "x" * 10_000_000, None)
    assert [(c.start_line, c.end_line) for c in huge.chunks] == [(1, 1)]


def test_odd_characters_do_not_crash() -> None:
    source = 'def f():\n    return "\udcff\ud800 \u2028 \x00 é"\n'
    result = chunk_file("a.py", source, "python")
    _assert_covered(source, result.chunks)
    assert [d.name for d in result.definitions] == ["f"]


def test_importing_the_chunker_loads_no_grammar() -> None:
    code = (
        "import sys, engine.chunking.chunker, engine.languages;"
        "print('tree_sitter_language_pack' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
