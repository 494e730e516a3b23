"""Properties of chunk_file over random Python-like, JS-like and arbitrary text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.chunking.chunker import chunk_file
from engine.chunking.layout import MAX_CHUNK_LINES
from engine.chunking.markdown import MAX_SECTION_LINES
from engine.chunking.windows import TEXT_WINDOW_LINES
from engine.indexing.workerpool import Failure, shared_pool
from engine.languages import LANGUAGES_WITH_GRAMMAR
from engine.types import FileChunks

PYTHON_LINES = [
    "def f(x):",
    "async def g(a, b=1) -> int:",
    "class A:",
    "class B(A, metaclass=M):",
    "def m(self):",
    "@decorator",
    "@property",
    "return x",
    "pass",
    "x = 1",
    "# a comment",
    '"""Docstring."""',
    '"""',
    "if x:",
    "else:",
    "for i in range(3):",
    "try:",
    "except Exception:",
    "lambda: 0",
    "items = [",
    "]",
    "(",
    ")",
    "}",
    "print('héllo ünïcode')",
    "",
    "   ",
]

JS_LINES = [
    "function f(a) {",
    "}",
    "};",
    "const g = (x) => {",
    "const h = async function () {",
    "export const k = () => 1;",
    "class C extends D {",
    "m() {",
    "static s() { return 1; }",
    "handler = (e) => {",
    "return 1;",
    "// comment",
    "/** Doc comment. */",
    "/*",
    "*/",
    "@decorator",
    "export default class {",
    "if (x) {",
    "} else {",
    "items.map(function (x) { return x; });",
    "{",
    "(",
    ")",
    "`",
    "",
]

NEWLINES = st.sampled_from(["\n", "\r\n", "\r"])


def _source(lines: list[tuple[int, str]], newline: str, final_newline: bool) -> str:
    text = newline.join("    " * indent + line for indent, line in lines)
    return text + newline if final_newline else text


def _editor_lines(text: str) -> list[str]:
    lines = re.split(r"\r\n|\r|\n", text)
    if lines[-1] == "":
        lines.pop()
    return lines


def _check(text: str, result: FileChunks, limit: int) -> None:
    lines = _editor_lines(text)
    covered: set[int] = set()
    previous_start = 0
    for chunk in result.chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.end_line - chunk.start_line + 1 <= limit
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.start_line >= previous_start  # chunks come in file order
        previous_start = chunk.start_line
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    uncovered = [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered]
    assert uncovered == []
    for definition in result.definitions:
        assert 1 <= definition.start_line <= definition.end_line <= len(lines)
        assert definition.start_line <= definition.name_line <= definition.end_line
        assert definition.name and definition.qualified_name.endswith(definition.name)


def _check_names(text: str, result: FileChunks) -> None:
    lines = _editor_lines(text)
    for definition in result.definitions:
        raw = lines[definition.name_line - 1].encode("utf-8", "surrogateescape")
        written = raw[definition.name_start_col : definition.name_end_col]
        assert written.decode("utf-8", "replace") == definition.name


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.sampled_from(PYTHON_LINES)), max_size=120),
    NEWLINES,
    st.booleans(),
)
def test_python_like_sources(lines: list[tuple[int, str]], newline: str, final: bool) -> None:
    text = _source(lines, newline, final)
    result = chunk_file("pkg/mod.py", text, "python")
    _check(text, result, MAX_CHUNK_LINES)
    _check_names(text, result)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.sampled_from(JS_LINES)), max_size=120),
    NEWLINES,
    st.booleans(),
    st.sampled_from(["javascript", "typescript", "tsx"]),
)
def test_js_like_sources(
    lines: list[tuple[int, str]], newline: str, final: bool, language: str
) -> None:
    text = _source(lines, newline, final)
    result = chunk_file("web/app.js", text, language)
    _check(text, result, MAX_CHUNK_LINES)
    _check_names(text, result)


def chunk_in_worker(args: tuple[str, str, str | None]) -> FileChunks:
    return chunk_file(*args)


def crash_as_failure(args: tuple[str, str, str | None], failure: Failure) -> FileChunks:
    raise AssertionError(f"chunk_file {failure.kind} ({failure.detail}) on {args!r}")


@settings(max_examples=150, deadline=None)
@given(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=400),
    st.sampled_from([None, "text", "markdown", *sorted(LANGUAGES_WITH_GRAMMAR)]),
)
def test_arbitrary_text_in_any_language(text: str, language: str | None) -> None:
    # Arbitrary text reaches the grammars' native scanners, where a bug is a segfault, not an
    # exception: chunk in a worker process, so that it fails this test (and hypothesis
    # shrinks and prints the text) instead of ending the pytest run.
    [result] = shared_pool().run(
        chunk_in_worker, [("some/file", text, language)], workers=1, failed=crash_as_failure
    )
    limit = {None: TEXT_WINDOW_LINES, "text": TEXT_WINDOW_LINES, "markdown": MAX_SECTION_LINES}
    _check(text, result, limit.get(language, MAX_CHUNK_LINES))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["", "x = 1", "# c", "def f():", "    pass", "#"]), max_size=400))
def test_long_python_files_respect_the_size_limit(lines: list[str]) -> None:
    text = "\n".join(lines)
    _check(text, chunk_file("m.py", text, "python"), MAX_CHUNK_LINES)
