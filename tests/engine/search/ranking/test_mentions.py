"""A report's mentions: which names count as written like code, and what a chunk matches."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.search.ranking.definitions import continues_definition
from engine.search.ranking.mentions import (
    CONSTRUCTOR,
    EXACT,
    MENTION_ORDER_DECAY,
    OWNER,
    SUFFIX,
    FrameLine,
    frames_of,
    mention_strength,
    mentions_of,
    same_file,
)
from engine.search.ranking.options import RankingOptions
from engine.search.ranking.rerank import RankQuery, rerank
from engine.types import Result

REPORT = """Please make Matrix.col_insert() work
Calling `Permutation([[0, 1]])` fails. The Poly printer and sinc are wrong; see
  File "sympy/printing/latex.py", line 120, in _print_MatAdd
Example: it works in Python."""


def test_names_written_like_code_count_and_sentence_openers_do_not() -> None:
    mentions = mentions_of(REPORT)
    assert list(mentions.names) == [
        "Matrix",
        "col_insert",
        "Permutation",
        "Poly",
        "_print_MatAdd",
        "Python",
    ]
    # "Please", "Calling", "The", "File", "Example" open a sentence or line; "fails" and
    # "sinc" are plain words here; a path's words are not names.
    assert mentions.called == frozenset({"col_insert", "Permutation"})


def test_a_chunk_matches_by_its_name_a_suffix_of_it_or_as_a_called_class_constructor() -> None:
    mentions = mentions_of(REPORT)
    # Each later mention counts a little less: col_insert is the second, Permutation the third.
    decay = MENTION_ORDER_DECAY
    assert mention_strength("col_insert", "Matrix.col_insert", mentions) == pytest.approx(
        EXACT * OWNER * decay
    )
    assert mention_strength("_print_MatAdd", "LatexPrinter._print_MatAdd", mentions) == (
        pytest.approx(EXACT * decay**4)
    )
    assert mention_strength("_eval_col_insert", "MatrixShaping._eval_col_insert", mentions) == (
        pytest.approx(SUFFIX * decay)
    )
    assert mention_strength("_print_Poly", "X._print_Poly", mentions) == pytest.approx(
        SUFFIX * decay**3
    )
    assert mention_strength("__new__", "Permutation.__new__", mentions) == pytest.approx(
        CONSTRUCTOR * decay**2
    )
    assert mention_strength("__init__", "Poly.__init__", mentions) == 0.0  # Poly is not called
    assert mention_strength("resize", "Matrix.resize", mentions) == 0.0
    assert mention_strength("", "", mentions) == 0.0


def test_a_later_part_of_a_class_continues_it_but_a_long_functions_window_does_not() -> None:
    assert not continues_definition("class", "class Foo(Base):", "class Foo(Base):\n    x = 1")
    assert continues_definition("class", "class Foo(Base):", "    y = 2")
    assert not continues_definition("method", "def run(self):", "        return 2")
    assert not continues_definition("module", "", "import os")


def chunk_result(path: str, score: float, name: str, line: int, kind: str = "method") -> Result:
    return Result(
        repo="r",
        path=path,
        start_line=line,
        end_line=line + 5,
        symbol_name=f"Printer.{name}",
        content=f"{path}:{line}",
        score=score,
        sources=("lexical",),
        kind=kind,
        name=name,
    )


def test_a_mentioned_definition_is_lifted_within_its_file_never_past_the_files_best() -> None:
    report = "Printing a Poly is wrong\n\n```\n>>> latex(Poly(x))\n```\nand `Matrix` too.\n"
    best = chunk_result("printing/latex.py", 0.9, "doprint", 1)
    other = chunk_result("printing/latex.py", 0.5, "_print_Add", 20)
    named = chunk_result("printing/latex.py", 0.3, "_print_Poly", 40)
    window = chunk_result("printing/latex.py", 0.2, "_print_Poly", 46)  # its second window
    elsewhere = chunk_result("printing/str.py", 0.8, "emptyPrinter", 1)
    query = RankQuery.of(report, identifier_query=False, long=True)
    options = RankingOptions(max_per_file=10, path_evidence=False, file_evidence=False)

    ranked = rerank([best, other, named, window, elsewhere], options, 10, query)
    lines = [(r.path.split("/")[1], r.start_line) for r in ranked]
    assert lines == [
        ("latex.py", 1),
        ("str.py", 1),
        ("latex.py", 40),
        ("latex.py", 20),
        ("latex.py", 46),
    ]
    [lift] = [a for a in ranked[2].adjustments if a.feature == "mentions"]
    assert lift.factor == pytest.approx(1.0 + options.mention_weight * SUFFIX)  # Poly: 1st
    assert "Poly" in lift.reason
    assert not any(a.feature == "mentions" for a in ranked[4].adjustments)  # one per definition
    # Off, or for a question (no mentions are read), the fused order stands.
    plain = [
        (r.path.split("/")[1], r.start_line)
        for r in rerank(
            [best, other, named, window, elsewhere], replace(options, mention_weight=0.0), 10, query
        )
    ]
    assert plain == [
        ("latex.py", 1),
        ("str.py", 1),
        ("latex.py", 20),
        ("latex.py", 40),
        ("latex.py", 46),
    ]
    asked = RankQuery.of(report, identifier_query=False)
    assert not asked.mentions


TRACE = """Traceback (most recent call last):
  File "/home/u/proj/pkg/core/expr.py", line 124, in __eq__
pkg/core/sympify.py:385: in sympify
    at render (src/app.js:10:3)
\t/home/ci/go/pkg/mod/github.com/o/cli/v3@v3.3.2/flag_impl.go:138 +0x8e
"""


def test_frames_are_read_in_every_common_trace_format() -> None:
    assert [(f.path, f.line) for f in frames_of(TRACE)] == [
        ("/home/u/proj/pkg/core/expr.py", 124),
        ("pkg/core/sympify.py", 385),
        ("src/app.js", 10),
        ("/home/ci/go/pkg/mod/github.com/o/cli/v3@v3.3.2/flag_impl.go", 138),
    ]
    assert frames_of("see http://example.com:8080/x and C:\\w\\pkg\\a.py:3") == (
        FrameLine("C:\\w\\pkg\\a.py", 3),
    )
    mentions = mentions_of(TRACE)
    assert mentions.frame_lines("pkg/core/expr.py") == [124]
    assert mentions.frame_lines("flag_impl.go") == [138]  # a Go module path ends like it
    assert mentions.frame_lines("core/expr.pyc") == []


def test_a_chunk_holding_a_frames_line_is_lifted_in_any_file() -> None:
    first = chunk_result("pkg/parse.py", 0.9, "parse", 1)
    top = chunk_result("pkg/core/expr.py", 0.6, "__add__", 100)
    frame = chunk_result("pkg/core/expr.py", 0.2, "__eq__", 120)
    options = RankingOptions(mention_files=0, path_evidence=False, file_evidence=False)
    query = RankQuery.of(TRACE, identifier_query=False, long=True)
    ranked = rerank([first, top, frame], options, 10, query)
    assert [r.start_line for r in ranked] == [1, 100, 120]  # lifted to its file's best
    assert ranked[2].score == ranked[1].score
    [lift] = [a for a in ranked[2].adjustments if a.feature == "mentions"]
    assert "line 124" in lift.reason


def test_an_operator_on_a_prompt_line_mentions_the_methods_behind_it() -> None:
    mentions = mentions_of("Bug with `milli`\n>>> milli*W == 1\nTrue\nand 2*3 in prose.")
    assert list(mentions.names) == ["milli", "__mul__", "__rmul__", "__eq__"]
    assert mention_strength("__mul__", "Prefix.__mul__", mentions) > 0


def test_same_file_matches_path_suffixes_at_segment_boundaries() -> None:
    assert same_file("/srv/app/http/utils.py", "http/utils.py")
    assert same_file("./http/utils.py", "http/utils.py")
    assert same_file("Server.java", "src/main/java/com/acme/Server.java")
    assert same_file("C:\\srv\\http\\utils.py", "http/utils.py")
    assert not same_file("/srv/app/xhttp/utils.py", "http/utils.py")
    assert not same_file("utils.py", "http/other.py")
