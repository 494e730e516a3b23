"""The ranking stage's features: definition first, path evidence, file evidence, stems."""

from __future__ import annotations

from engine.search.ranking.definitions import definition_factor, query_names
from engine.search.ranking.file_evidence import file_bonuses
from engine.search.ranking.options import RankingOptions
from engine.search.ranking.path_evidence import path_share
from engine.search.ranking.rerank import RankQuery, rerank
from engine.search.ranking.stems import content_stems, stem, stems_match
from engine.types import Result


def result(
    path: str, score: float, *, kind: str = "function", name: str = "", line: int = 1
) -> Result:
    return Result(
        repo="r",
        path=path,
        start_line=line,
        end_line=line + 5,
        symbol_name=name,
        content=f"{path}:{line}",
        score=score,
        sources=("lexical",),
        kind=kind,
        name=name,
    )


def test_stems_join_plurals_and_near_forms() -> None:
    assert stem("completions") == stem("completion")
    assert stems_match(stem("routing"), stem("router"))
    assert not stems_match(stem("cat"), stem("catalog"))  # too short to be a prefix match
    assert content_stems("how are the Generators discovered") == ("generat", "discov")


def test_query_names_of_identifier_queries_and_questions() -> None:
    assert query_names("Flask.url_for", identifier_query=True).names == ("Flask", "url_for")
    assert query_names("Flask.url_for", identifier_query=True).qualified == (("Flask", "url_for"),)
    asked = query_names("how does the Router dispatch requests to handle_request", False)
    assert asked.names == ("Router", "handle_request")
    assert query_names("How are options parsed", False).names == ()  # first-word capital


def test_a_definition_of_the_named_symbol_is_boosted_types_most() -> None:
    names = query_names("Railtie", identifier_query=True)
    cls, _ = definition_factor("class", "Railtie", "Rails.Railtie", "lib/other.rb", names)
    fn, _ = definition_factor("function", "Railtie", "Railtie", "lib/other.rb", names)
    impl, _ = definition_factor("impl", "Railtie", "Railtie", "lib/other.rb", names)
    assert cls > fn > impl > 1.0
    assert definition_factor("module", "", "", "lib/railtie.rb", names) == (1.0, "")
    assert definition_factor("class", "Engine", "Engine", "lib/engine.rb", names) == (1.0, "")


def test_the_file_named_after_the_symbol_wins_the_tie() -> None:
    names = query_names("Application", identifier_query=True)
    home, why = definition_factor(
        "class", "Application", "Application", "rails/application.rb", names
    )
    reopened, _ = definition_factor(
        "class", "Application", "Application", "app/bootstrap.rb", names
    )
    assert home > reopened
    assert "file named after it" in why


def test_a_name_inside_a_question_is_boosted_less() -> None:
    asked = query_names("where is parse_args called", identifier_query=False)
    bare = query_names("parse_args", identifier_query=True)
    in_question, _ = definition_factor("function", "parse_args", "parse_args", "a.py", asked)
    alone, _ = definition_factor("function", "parse_args", "parse_args", "a.py", bare)
    assert 1.0 < in_question < alone


def test_path_share_weighs_the_file_stem_over_folders() -> None:
    stems = content_stems("bash completion generation")
    assert path_share("bash_completions.go", stems) == 2 / 3
    assert path_share("bash/completions/gen.go", stems) == 0.5 * 2 / 3
    assert path_share("command.go", stems) == 0.0
    assert path_share("anything.go", ()) == 0.0


def test_path_share_counts_a_file_name_the_query_names_whole_as_more_words() -> None:
    stems = content_stems("rate-limiting concurrent operations with a semaphore")
    n = len(stems)
    assert path_share("sync/semaphore.rs", stems) == 1 / n
    assert path_share("batch_semaphore.rs", stems) == 1 / n
    assert path_share("sync/semaphore.rs", stems, 2.0) == (1 + 2.0) / (n + 2.0)
    # half of batch_semaphore's name is named: a quarter of the extra weight
    assert path_share("batch_semaphore.rs", stems, 2.0) == (1 + 2.0 * 0.25) / (n + 2.0)
    assert path_share("sync/mutex.rs", stems, 2.0) == 0.0
    # the extra words are out of reach of a file only its folder names
    assert path_share("semaphore/mod.rs", stems, 2.0) == 0.5 / (n + 2.0)


def test_a_question_prefers_the_file_it_names_whole_and_a_name_or_report_does_not() -> None:
    partly = result("sync/batch_semaphore.rs", 0.55)
    wholly = result("sync/semaphore.rs", 0.5)
    text = "rate-limiting concurrent operations with a semaphore"
    options = RankingOptions().without("definitions")

    def first(query: RankQuery, ranking: RankingOptions = options) -> str:
        return rerank([partly, wholly], ranking, 10, query)[0].path

    question = RankQuery.of(text, identifier_query=False)
    assert first(question) == "sync/semaphore.rs"
    assert first(question, options.without("file_names")) == "sync/batch_semaphore.rs"
    assert first(RankQuery.of(text, identifier_query=False, long=True)) == partly.path
    assert first(RankQuery.of("semaphore", identifier_query=True)) == partly.path
    ranked = rerank([partly, wholly], options, 10, question)
    assert all(0.0 <= r.score <= 1.0 for r in ranked)
    # --explain shows the file name's part apart from the path's
    named = {r.path: next(a for a in r.adjustments if a.feature == "file_names") for r in ranked}
    assert named[wholly.path].factor > named[partly.path].factor
    assert named[wholly.path].reason == "the question names its file name"


def test_file_bonus_grows_with_other_strong_chunks_of_the_file() -> None:
    bonuses = file_bonuses(["a", "a", "a", "b"], [0.5, 0.4, 0.2, 0.5], weight=1.0)
    assert bonuses[3] == 0.0  # alone in its file
    assert bonuses[0] == 0.4 + 0.5 * 0.2
    assert bonuses[0] > bonuses[3]


def test_rerank_puts_the_definition_above_a_call_site_and_explains_it() -> None:
    call_site = result("app/main.py", 0.9, kind="module")
    definition = result("lib/greeter.py", 0.5, kind="class", name="Greeter")
    query = RankQuery.of("Greeter", identifier_query=True)
    ranked = rerank([call_site, definition], RankingOptions(), 10, query)
    assert [r.path for r in ranked] == ["lib/greeter.py", "app/main.py"]
    assert ranked[0].adjustments[0].feature == "definitions"
    assert all(0.0 <= r.score <= 1.0 for r in ranked)


def test_each_feature_switches_off() -> None:
    call_site = result("app/main.py", 0.9, kind="module")
    definition = result("lib/greeter.py", 0.5, kind="class", name="Greeter")
    query = RankQuery.of("Greeter", identifier_query=True)
    options = RankingOptions().without("definitions").without("path_evidence")
    ranked = rerank([call_site, definition], options, 10, query)
    assert [r.path for r in ranked] == ["app/main.py", "lib/greeter.py"]
    assert not any(a.feature == "definitions" for r in ranked for a in r.adjustments)


def test_path_and_file_evidence_lift_only_the_best_chunk_of_a_file() -> None:
    best = result("bash_completions.go", 0.6, line=1)
    weaker = result("bash_completions.go", 0.3, line=40)
    query = RankQuery.of("bash completion generation", identifier_query=False)
    ranked = rerank([best, weaker], RankingOptions(), 10, query)
    by_line = {r.start_line: r for r in ranked}
    features = {a.feature for a in by_line[1].adjustments}
    assert features == {"path_evidence", "file_names", "file_evidence"}
    assert by_line[40].adjustments == ()
    everything = rerank([best, weaker], RankingOptions(file_scope="all"), 10, query)
    assert all(any(a.feature == "path_evidence" for a in r.adjustments) for r in everything)
