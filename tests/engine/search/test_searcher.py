from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pytest

from engine.errors import UsageError
from engine.search.ranking.options import RankingOptions
from engine.search.routing import ROUTES, query_kind
from engine.search.searcher import Searcher
from engine.types import Chunk, Filters, Hit, Location, Query
from tests.fakes import FakeChunkSource, FakeSignal, make_chunk


def make_searcher(**signals: FakeSignal) -> Searcher:
    store = FakeChunkSource(
        [
            make_chunk(1, "src/a.py", "def greet(name):\n    return name", name="greet"),
            make_chunk(2, "src/b.py", "def shout(x):\n    return x", name="shout"),
            make_chunk(3, "tests/test_a.ts", "function t() {}", name="t", language="typescript"),
        ]
    )
    return Searcher("toy", store, signals, weights={"lexical": 1.0, "vector": 1.0})


def test_results_are_fused_mapped_and_tagged() -> None:
    searcher = make_searcher(
        lexical=FakeSignal("lexical", {"greet": [Hit(1, 5.0), Hit(2, 1.0)]}),
        vector=FakeSignal("vector", {"greet": [Hit(1, 0.9), Hit(3, 0.5)]}),
    )
    response = searcher.search("greet", limit=10)
    first = response.results[0]
    assert (first.path, first.start_line, first.end_line) == ("src/a.py", 1, 2)
    assert first.sources == ("lexical", "vector")
    assert first.symbol_name == "greet"
    assert first.content == "def greet(name):\n    return name"
    # Ranked first by every signal: the best score of the answer, within [0, 1].
    assert 0.0 < first.score <= 1.0
    assert first.score == max(r.score for r in response.results)
    assert {r.path for r in response.results} == {"src/a.py", "src/b.py", "tests/test_a.ts"}
    assert [run.signal for run in response.runs] == ["lexical", "vector"]


def test_limit_and_subset() -> None:
    lexical = FakeSignal("lexical", {"q": [Hit(1, 1.0), Hit(2, 1.0)]})
    vector = FakeSignal("vector", {"q": [Hit(3, 1.0)]})
    searcher = make_searcher(lexical=lexical, vector=vector)
    response = searcher.search("q", limit=1, signals=["vector"])
    assert [r.path for r in response.results] == ["tests/test_a.ts"]
    assert lexical.calls == []
    with pytest.raises(UsageError, match="nope"):
        searcher.search("q", signals=["nope"])


def test_failing_signal_becomes_a_warning() -> None:
    searcher = make_searcher(
        lexical=FakeSignal("lexical", {"q": [Hit(2, 1.0)]}),
        vector=FakeSignal("vector", error=RuntimeError("boom")),
    )
    response = searcher.search("q")
    assert [r.path for r in response.results] == ["src/b.py"]
    assert any("vector signal failed" in w and "boom" in w for w in response.warnings)


def test_filters() -> None:
    searcher = make_searcher(
        lexical=FakeSignal("lexical", {"q": [Hit(1, 1.0), Hit(2, 1.0), Hit(3, 1.0)]})
    )
    assert [r.path for r in searcher.search("q", filters=Filters(path_globs=("src",))).results] == [
        "src/a.py",
        "src/b.py",
    ]
    only_ts = searcher.search("q", filters=Filters(languages=("typescript",))).results
    assert [r.path for r in only_ts] == ["tests/test_a.ts"]


def test_unknown_chunk_ids_are_dropped_and_locations_kept() -> None:
    loc = Location("gen/x.py", 4, 9)
    searcher = make_searcher(
        lexical=FakeSignal("lexical", {"q": [Hit(99, 1.0), Hit(None, 1.0, "x.y", loc)]})
    )
    results = searcher.search("q").results
    assert [(r.path, r.start_line, r.content, r.symbol_name) for r in results] == [
        ("gen/x.py", 4, "", "x.y")
    ]


@pytest.mark.parametrize("text", ["", "   ", "\x00\x01\x02"])
def test_empty_query_is_a_usage_error(text: str) -> None:
    searcher = make_searcher(lexical=FakeSignal("lexical"))
    with pytest.raises(UsageError, match="empty"):
        searcher.search(text)


def test_signal_warning_is_reported() -> None:
    searcher = make_searcher(lexical=FakeSignal("lexical", warning="model mismatch"))
    assert "model mismatch" in searcher.search("q").warnings


NO_PRIORS = RankingOptions(include_tests=True, include_generated=True, max_per_file=1000)


class CountingSource(FakeChunkSource):
    def __init__(self, chunks: list[Chunk]) -> None:
        super().__init__(chunks)
        self.asked: list[int] = []

    def chunks(self, ids: Sequence[int]) -> Mapping[int, Chunk]:
        self.asked.extend(ids)
        return super().chunks(ids)


def test_only_the_chunks_needed_are_read_and_filters_read_further() -> None:
    chunks = [
        make_chunk(i, f"{'src' if i > 150 else 'lib'}/m{i}.py", f"def f{i}(): pass", name=f"f{i}")
        for i in range(1, 201)
    ]
    store = CountingSource(chunks)
    hits = [Hit(i, 1.0 / i) for i in range(1, 201)]
    searcher = Searcher("toy", store, {"lexical": FakeSignal("lexical", {"q": hits})})

    results = searcher.rank(searcher.run_signals(Query("q"), 200), Filters(), 5, NO_PRIORS)
    assert [r.chunk_id for r in results] == [1, 2, 3, 4, 5]
    assert len(store.asked) == 50  # one window of candidates, not all 200 fused keys

    store.asked.clear()
    only_src = Filters(path_globs=("src",))
    results = searcher.rank(searcher.run_signals(Query("q"), 200), only_src, 5, NO_PRIORS)
    assert [r.chunk_id for r in results] == [151, 152, 153, 154, 155]
    assert sorted(store.asked) == list(range(1, 201))  # windows until enough survive


def test_the_per_file_cap_follows_the_query_kind_unless_the_caller_sets_one() -> None:
    # Six functions of one file, then one of another, ranked in that order.
    chunks = [
        make_chunk(n, "src/big.py", f"def f{n}():\n    return {n}", name=f"f{n}", start_line=10 * n)
        for n in range(1, 7)
    ]
    chunks.append(make_chunk(7, "src/other.py", "def g():\n    return 0", name="g"))
    hits = [Hit(n, 10.0 - n) for n in range(1, 8)]
    report = "Traceback (most recent call last):\n  File big.py\n    f1()\nValueError: bad"
    question = "where are the small functions"
    assert query_kind(report) == "long" and query_kind(question) == "question"
    lexical = FakeSignal("lexical", {report: hits, question: hits})
    searcher = Searcher("toy", FakeChunkSource(chunks), {"lexical": lexical})

    def files(text: str, ranking: RankingOptions | None = None) -> list[str]:
        return [r.path for r in searcher.search(text, limit=7, ranking=ranking).results]

    cap = ROUTES["long"].max_per_file
    assert cap > ROUTES["question"].max_per_file
    # A pasted report: more of the file it is about before the next file.
    assert files(report)[: cap + 1] == ["src/big.py"] * cap + ["src/other.py"]
    assert files(question)[:4] == ["src/big.py"] * 3 + ["src/other.py"]
    # An explicit cap (engine query --max-per-file) holds for every kind.
    two = RankingOptions(max_per_file=2)
    assert (
        files(report, two)[:3] == files(question, two)[:3] == ["src/big.py"] * 2 + ["src/other.py"]
    )


REPORT = """Widget.render() draws nothing
Calling `w.render()` on a Widget returns an empty string:

    >>> Widget(3).render()
    ''
"""


def test_a_report_brings_in_the_definitions_it_names_from_its_first_files() -> None:
    chunks = [
        make_chunk(1, "ui/widget.py", "class Widget:\n    size = 3", name="Widget", kind="class"),
        make_chunk(
            2,
            "ui/widget.py",
            "def _draw_render(self):\n    return ''",
            start_line=20,
            name="_draw_render",
            kind="method",
        ),
        make_chunk(
            3,
            "ui/widget.py",
            "def resize(self):\n    pass",
            start_line=30,
            name="resize",
            kind="method",
        ),
        make_chunk(4, "ui/other.py", "def render():\n    pass", name="render"),
        make_chunk(
            5,
            "ui/widget.py",
            "def __init__(self, n):\n    self.n = n",
            start_line=10,
            name="__init__",
            kind="method",
        ),
    ]
    # The qualified names a member has in its file (make_chunk gives the bare name).
    chunks = [
        replace(c, qualified_name=f"Widget.{c.name}") if c.kind == "method" else c for c in chunks
    ]
    assert query_kind(REPORT) == "long"
    lexical = FakeSignal("lexical", {REPORT: [Hit(1, 2.0)]})  # the signals found the class only
    searcher = Searcher("toy", FakeChunkSource(chunks), {"lexical": lexical})

    found = {r.chunk_id: r for r in searcher.search(REPORT, limit=10).results}
    # _draw_render ends in the called name, __init__ builds the class the report calls;
    # resize is not named, and ui/other.py is not among the ranking's first files.
    assert set(found) == {1, 2, 5}
    assert found[2].sources == ("mentions",) and found[2].score < found[1].score
    assert [c.signal for c in found[2].contributions] == ["mentions"]  # what --explain shows
    off = searcher.search(REPORT, limit=10, ranking=RankingOptions(mention_files=0)).results
    assert [r.chunk_id for r in off] == [1]
    # A question is not a report: its names are left to the signals.
    lexical.answers["how does a Widget render"] = [Hit(1, 2.0)]
    asked = searcher.search("how does a Widget render", limit=10).results
    assert [r.chunk_id for r in asked] == [1]


def test_only_the_header_of_a_class_counts_as_its_definition_for_a_pasted_report() -> None:
    header = make_chunk(1, "a.py", "class Foo(Base):\n    x = 1", name="Foo", kind="class")
    later = make_chunk(
        2,
        "a.py",
        "    y = 2\n    z = 3",
        name="Foo",
        kind="class",
        start_line=40,
        signature="class Foo(Base):",
    )
    report = "Foo breaks when y is set.\n\nSteps:\n1. make a Foo\n2. set y\n"
    hits = [Hit(2, 3.0), Hit(1, 1.0)]
    lexical = FakeSignal("lexical", {"Foo": hits, report: hits})
    searcher = Searcher("toy", FakeChunkSource([header, later]), {"lexical": lexical})

    ranked = searcher.search(report, limit=10).results
    assert [r.chunk_id for r in ranked] == [1, 2]
    assert ranked[1].continued and not ranked[0].continued
    assert not any(a.feature == "definitions" for a in ranked[1].adjustments)
    # Off, every part of the class is boosted alike and the signal's order stands.
    both = searcher.search(report, limit=10, ranking=RankingOptions().without("definition_heads"))
    assert [r.chunk_id for r in both.results] == [2, 1]
    # A name query's answer is the whole type: each of its windows counts as the definition.
    named = searcher.search("Foo", limit=10).results
    assert [r.chunk_id for r in named] == [2, 1]
    assert all(any(a.feature == "definitions" for a in r.adjustments) for r in named)


def test_a_trace_brings_in_the_chunk_each_frame_points_into_even_in_an_unranked_file() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/venv/lib/site-packages/ui/widget.py", line 4, in draw\n'
        '  File "/home/u/venv/lib/site-packages/ui/paint.py", line 12, in fill\n'
        "ValueError: no colour\n"
    )
    chunks = [
        make_chunk(1, "ui/widget.py", "def draw():\n    fill()", name="draw", start_line=3),
        make_chunk(
            2, "ui/paint.py", "def fill():\n    raise ValueError", name="fill", start_line=11
        ),
        make_chunk(3, "ui/paint.py", "def other():\n    pass", name="other", start_line=20),
    ]
    lexical = FakeSignal("lexical", {trace: [Hit(1, 2.0)]})
    searcher = Searcher("toy", FakeChunkSource(chunks), {"lexical": lexical})

    found = {r.chunk_id: r for r in searcher.search(trace, limit=10).results}
    assert set(found) == {1, 2}  # paint.py's frame, though no signal ranked that file
    assert found[2].sources == ("mentions",)
    off = searcher.search(trace, limit=10, ranking=RankingOptions(mention_files=0)).results
    assert [r.chunk_id for r in off] == [1]
