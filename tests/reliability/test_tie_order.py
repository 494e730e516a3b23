"""Exact score ties rank the same after an update as after a clean build (issue 15).

An update numbers chunks (and lays out the lexical index's segments) differently from a
clean build, and a backend returns exact ties in that order. Ties share a rank in fusion and
are ordered by location, so both builds give identical results and identical scores.
"""

from __future__ import annotations

from pathlib import Path

from engine.index.home import Home
from engine.search.fusion import reciprocal_rank_fusion
from engine.types import Hit
from tests.reliability.conftest import index, ranking, write

TEXT = "def tie_{n}(value):\n    return shared_marker_value(value)\n"


def full_ranking(home: Home, text: str) -> list[tuple[object, tuple[str, int, int, str]]]:
    return [(contributions, key) for contributions, key in ranking(home, text, limit=20)]


def test_ties_rank_identically_after_an_update_and_a_clean_build(
    home: Home, repo: Path, tmp_path: Path
) -> None:
    for n in "ab":
        write(repo, f"ties/{n}.py", TEXT.format(n=n))
    index(home, repo)
    for n in "dcfe":  # added in an order unlike the paths'
        write(repo, f"ties/{n}.py", TEXT.format(n=n))
        index(home, repo)
    clean = Home(tmp_path / "clean")
    index(clean, repo)
    for text in ("shared_marker_value", "shared marker value"):
        got, want = full_ranking(home, text), full_ranking(clean, text)
        assert got == want, (text, got, want)
        tied = [key[0] for _, key in got if key[0].startswith("ties/")]
        assert tied == sorted(tied), tied


def test_equal_scores_share_a_rank_in_fusion() -> None:
    hits = [Hit(chunk_id=1, score=2.0), Hit(chunk_id=2, score=1.0), Hit(chunk_id=3, score=1.0)]
    swapped = [hits[0], hits[2], hits[1]]
    fused = {f.key: f.score for f in reciprocal_rank_fusion({"lexical": hits}, {})}
    again = {f.key: f.score for f in reciprocal_rank_fusion({"lexical": swapped}, {})}
    assert fused == again
    assert fused[2] == fused[3] < fused[1]
