"""The grep-then-read baseline's rule, on a tiny folder, with a word-counting tokenizer."""

from __future__ import annotations

from pathlib import Path

from eval.grep_baseline import GrepCorpus, grep_then_read, keywords


def words(text: str) -> int:
    return len(text.split())


def tiny_folder(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "router.py").write_text("class Router:\n    def route(self): pass\n")
    (root / "src" / "routes.py").write_text("ROUTE = 1\nroute_table = {}\nother = 2\nroute(x)\n")
    (root / "src" / "server.py").write_text("def serve():\n    return 'no match here'\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "route.py").write_text("route route route\n")
    (root / ".route.cfg").write_text("route\n")
    (root / "src" / "route.bin").write_bytes(b"route\0route\n")
    return root


def test_keywords_drop_short_and_stop_words_and_repeats() -> None:
    assert keywords("How does the Router match a route? router, RE") == [
        "router",
        "match",
        "route",
    ]
    assert keywords("where is it") == []
    assert keywords("parse_config_file") == ["parse_config_file"]


def test_files_are_ranked_by_matching_lines_and_hidden_or_binary_files_are_skipped(
    tmp_path: Path,
) -> None:
    corpus = GrepCorpus.scan(tiny_folder(tmp_path), words)
    assert sorted(f.path for f in corpus.files) == [
        "src/router.py",
        "src/routes.py",
        "src/server.py",
    ]
    # routes.py: three lines name "route" (case-insensitively); router.py two lines, one of
    # them with both words, counted once.
    assert corpus.ranked(["route", "router"]) == [("src/routes.py", 3), ("src/router.py", 2)]
    assert corpus.ranked([]) == []


def test_reading_stops_at_the_first_relevant_file_and_counts_whole_files(tmp_path: Path) -> None:
    corpus = GrepCorpus.scan(tiny_folder(tmp_path), words)
    routes, router = corpus.tokens("src/routes.py"), corpus.tokens("src/router.py")
    cost = grep_then_read(corpus, "the route", lambda path: path == "src/router.py")
    assert (cost.tokens, cost.files_read, cost.first_hit) == (routes + router, 2, 2)
    assert cost.words == ("route",)


def test_a_miss_reads_at_most_max_files_and_a_query_without_words_reads_nothing(
    tmp_path: Path,
) -> None:
    corpus = GrepCorpus.scan(tiny_folder(tmp_path), words)
    missed = grep_then_read(corpus, "route", lambda path: path == "src/server.py", max_files=1)
    assert (missed.first_hit, missed.files_read) == (None, 1)
    assert missed.tokens == corpus.tokens("src/routes.py")
    empty = grep_then_read(corpus, "how is it", lambda path: True)
    assert (empty.tokens, empty.files_read, empty.first_hit) == (0, 0, None)
