from __future__ import annotations

from engine.search.ranking.options import MAX_PER_FILE, RankingOptions
from engine.search.ranking.priors import path_prior
from engine.search.ranking.rerank import rerank
from engine.types import Result


def result(path: str, start: int, end: int, score: float, content: str = "") -> Result:
    return Result(
        repo="r",
        path=path,
        start_line=start,
        end_line=end,
        symbol_name="",
        content=content or f"{path}:{start}",
        score=score,
        sources=("lexical",),
    )


def test_path_priors() -> None:
    options = RankingOptions()
    assert path_prior("src/app.py", options) == (1.0, "")
    for test_path in ("tests/test_app.py", "pkg/app_test.go", "src/app.test.ts", "spec/a_spec.rb"):
        assert path_prior(test_path, options)[1] == "test"
    for generated in ("api/service_pb2.py", "x/y.pb.go", "vendor/lib/a.go"):
        assert path_prior(generated, options)[1] == "generated-or-vendored"
    assert path_prior("tests/test_app.py", RankingOptions(include_tests=True)) == (1.0, "")
    assert path_prior("lib/test_app.rb", options)[1] == "test"  # test-unit, minitest
    # A test_ prefix outside Python and Ruby is no test convention: a test framework's code.
    assert path_prior("lib/bats-core/test_functions.bash", options) == (1.0, "")
    assert path_prior("absl/log/internal/test_helpers.cc", options) == (1.0, "")


def test_test_files_rank_below_implementation() -> None:
    ranked = rerank(
        [result("tests/test_a.py", 1, 5, 0.9), result("src/a.py", 1, 5, 0.8)],
        RankingOptions(),
        10,
    )
    assert [r.path for r in ranked] == ["src/a.py", "tests/test_a.py"]
    assert ranked[1].prior == 0.6 and ranked[1].prior_reason == "test"
    assert ranked[1].score == round(0.9 * 0.6, 4)


def test_overlapping_results_keep_the_best() -> None:
    ranked = rerank(
        [
            result("a.py", 10, 40, 0.9),  # a class
            result("a.py", 12, 20, 0.8),  # its method
            result("a.py", 41, 50, 0.7),  # the next function
        ],
        RankingOptions(max_per_file=3),
        10,
    )
    assert [(r.start_line, r.end_line) for r in ranked] == [(10, 40), (41, 50)]


def test_identical_content_is_collapsed() -> None:
    ranked = rerank(
        [
            result("a/util.py", 1, 3, 0.9, "def f():\n    pass"),
            result("b/util.py", 1, 3, 0.8, "def f():\n    pass"),
            result("c.py", 1, 3, 0.7),
        ],
        RankingOptions(),
        10,
    )
    assert [r.path for r in ranked] == ["a/util.py", "c.py"]
    assert ranked[0].duplicates == ("b/util.py",)


def test_closing_tokens_alike_in_two_files_are_not_one_result() -> None:
    # A class's lone closing brace is the same text in every file; each is its own file's
    # answer (the signals matched its class's name and path), not a copy of another's.
    ranked = rerank(
        [
            result("Serialization/JsonProperty.cs", 325, 325, 0.9, "    }\n}"),
            result("JsonPropertyAttribute.cs", 80, 80, 0.8, "    }\n}"),
        ],
        RankingOptions(),
        10,
    )
    assert [r.path for r in ranked] == ["Serialization/JsonProperty.cs", "JsonPropertyAttribute.cs"]
    assert ranked[0].duplicates == ()


def test_cap_per_file_and_limit() -> None:
    many = [result("a.py", i * 10, i * 10 + 5, 1.0 - i / 100) for i in range(1, 8)]
    ranked = rerank(
        [*many, result("b.py", 1, 2, 0.1)], RankingOptions(max_per_file=2, fill=False), 10
    )
    assert [r.path for r in ranked] == ["a.py", "a.py", "b.py"]
    assert len(rerank(many, RankingOptions(max_per_file=10), 3)) == 3
    # No cap given (a caller outside the searcher, which sets the route's): MAX_PER_FILE.
    unset = rerank([*many, result("b.py", 1, 2, 0.1)], RankingOptions(fill=False), 10)
    assert [r.path for r in unset] == ["a.py"] * MAX_PER_FILE + ["b.py"]


def test_one_per_file_lists_distinct_files_first() -> None:
    rows = [result("a.py", 1, 10, 0.9), result("a.py", 20, 30, 0.8), result("b.py", 1, 5, 0.1)]
    assert [r.path for r in rerank(rows, RankingOptions(max_per_file=1), 2)] == ["a.py", "b.py"]


def test_a_repeat_factor_lets_a_new_file_in_before_a_weaker_second_chunk() -> None:
    rows = [result("a.py", 1, 10, 0.9), result("a.py", 20, 30, 0.8), result("b.py", 1, 5, 0.5)]
    plain = rerank(rows, RankingOptions(), 3)
    assert [(r.path, r.start_line) for r in plain] == [("a.py", 1), ("a.py", 20), ("b.py", 1)]
    soft = rerank(rows, RankingOptions(repeat_factor=0.5), 3)  # 0.8 * 0.5 < 0.5
    assert [(r.path, r.start_line) for r in soft] == [("a.py", 1), ("b.py", 1), ("a.py", 20)]
    assert soft[2].score == 0.8  # the order changes, not the score


def test_when_files_run_out_the_list_is_filled_after_every_file() -> None:
    rows = [result("a.py", 1, 5, 0.9), result("a.py", 20, 30, 0.8), result("b.py", 1, 5, 0.1)]
    ranked = rerank(rows, RankingOptions(max_per_file=1), 10)
    assert [(r.path, r.start_line) for r in ranked] == [("a.py", 1), ("b.py", 1), ("a.py", 20)]
    assert len(rerank(rows, RankingOptions(max_per_file=1), 2)) == 2


def test_dedupe_off_keeps_everything() -> None:
    rows = [result("a.py", 1, 10, 0.9), result("a.py", 2, 3, 0.8)]
    assert len(rerank(rows, RankingOptions(dedupe=False, max_per_file=3), 10)) == 2


def test_duplicate_of_a_capped_result_does_not_break() -> None:
    # Regression: a result skipped by the per-file cap must not be recorded as kept.
    rows = [
        result("a.py", 1, 2, 0.9),
        result("a.py", 5, 6, 0.8, "same"),
        result("b.py", 1, 2, 0.7, "same"),
    ]
    ranked = rerank(rows, RankingOptions(max_per_file=1), 10)
    assert [r.path for r in ranked] == ["a.py", "b.py"]
