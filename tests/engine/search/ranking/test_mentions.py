"""A report's mentions: which names count as written like code, and what a chunk matches."""

from __future__ import annotations

from engine.search.ranking.definitions import continues_definition
from engine.search.ranking.mentions import (
    CONSTRUCTOR,
    EXACT,
    OWNER,
    SUFFIX,
    mention_strength,
    mentions_of,
)

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
    assert mention_strength("col_insert", "Matrix.col_insert", mentions) == EXACT * OWNER
    assert mention_strength("_print_MatAdd", "LatexPrinter._print_MatAdd", mentions) == EXACT
    assert mention_strength("_eval_col_insert", "MatrixShaping._eval_col_insert", mentions) == (
        SUFFIX
    )
    assert mention_strength("_print_Poly", "LatexPrinter._print_Poly", mentions) == SUFFIX
    assert mention_strength("__new__", "Permutation.__new__", mentions) == CONSTRUCTOR
    assert mention_strength("__init__", "Poly.__init__", mentions) == 0.0  # Poly is not called
    assert mention_strength("resize", "Matrix.resize", mentions) == 0.0
    assert mention_strength("", "", mentions) == 0.0


def test_a_later_part_of_a_class_continues_it_but_a_long_functions_window_does_not() -> None:
    assert not continues_definition("class", "class Foo(Base):", "class Foo(Base):\n    x = 1")
    assert continues_definition("class", "class Foo(Base):", "    y = 2")
    assert not continues_definition("method", "def run(self):", "        return 2")
    assert not continues_definition("module", "", "import os")
