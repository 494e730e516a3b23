"""Checks that every label of eval/datasets/self.jsonl still names code that exists.

The self dataset labels this repository's own code by ``{path, symbol}``, and the code keeps
changing: a rename or a move breaks a label silently until ``engine eval`` refuses to run.
These checks chunk each labeled file with the real chunker (no index, no embedding) and look
for a chunk whose ``qualified_name`` is the label's symbol, exactly as ``engine eval``
resolves it from the chunk store.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from engine.chunking.chunker import chunk_file
from engine.languages import detect_language

ROOT = Path(__file__).resolve().parents[2]
SELF_DATASET = ROOT / "eval" / "datasets" / "self.jsonl"
REPO = "engine-self"
CATEGORIES = frozenset({"conceptual", "partial-identifier", "exact-symbol", "long", "architecture"})
# Labels point at implementation code, never at tests or fixtures.
LABELED_ROOTS = ("engine/", "signals/", "scip/", "cli/", "eval/")


def _queries() -> list[dict[str, Any]]:
    lines = SELF_DATASET.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@cache
def qualified_names(root: Path, path: str) -> frozenset[str]:
    """Every qualified name the chunker gives a chunk of ``root/path``."""
    text = (root / path).read_text(encoding="utf-8")
    chunks = chunk_file(path, text, detect_language(path)).chunks
    return frozenset(c.qualified_name for c in chunks if c.qualified_name)


def label_problems(query: dict[str, Any], root: Path) -> list[str]:
    """Why each of ``query``'s targets does not resolve in the tree at ``root``."""
    problems: list[str] = []
    for target in query["relevant"]:
        path = target if isinstance(target, str) else target["path"]
        where = f"{query['id']}: {path}"
        if not path.startswith(LABELED_ROOTS):
            problems.append(f"{where} is outside {', '.join(LABELED_ROOTS)}")
            continue
        if not (root / path).is_file():
            problems.append(f"{where} does not exist")
            continue
        symbol = target.get("symbol") if isinstance(target, dict) else None
        if symbol and symbol not in qualified_names(root, path):
            problems.append(f"{where} has no chunk named {symbol}")
    return problems


def test_every_label_resolves() -> None:
    problems = [p for query in _queries() for p in label_problems(query, ROOT)]
    assert problems == []


def test_the_checker_reports_a_broken_label() -> None:
    query = {
        "id": "self-x",
        "relevant": [
            {"path": "engine/search/fusion.py", "symbol": "reciprocal_rank_fusion"},
            {"path": "engine/search/fusion.py", "symbol": "reciprocal_rank_fusion_v2"},
            {"path": "engine/no_such_module.py", "symbol": "anything"},
            "tests/engine/search/test_fusion.py",
        ],
    }
    problems = label_problems(query, ROOT)
    assert problems == [
        "self-x: engine/search/fusion.py has no chunk named reciprocal_rank_fusion_v2",
        "self-x: engine/no_such_module.py does not exist",
        "self-x: tests/engine/search/test_fusion.py is outside engine/, signals/, scip/, cli/, "
        "eval/",
    ]


def test_queries_are_well_formed() -> None:
    queries = _queries()
    ids = [q["id"] for q in queries]
    assert ids == [f"self-{n:03d}" for n in range(1, len(queries) + 1)]
    for query in queries:
        assert query["repo"] == REPO, query["id"]
        assert query["category"] in CATEGORIES, query["id"]
        assert isinstance(query["negative"], bool), query["id"]
        assert bool(query["relevant"]) != query["negative"], query["id"]
        for target in query["relevant"]:
            # Symbol targets, so labels follow the code as it moves; ranges would drift.
            assert isinstance(target, dict), query["id"]
            assert set(target) == {"path", "symbol"}, query["id"]
            assert isinstance(target["symbol"], str) and target["symbol"], query["id"]


def test_dataset_size_and_mix() -> None:
    queries = _queries()
    positives = Counter(q["category"] for q in queries if not q["negative"])
    assert len(queries) >= 45
    assert 5 <= sum(q["negative"] for q in queries) <= 6
    assert set(positives) == CATEGORIES
    assert min(positives.values()) >= 5


@pytest.mark.parametrize(
    ("path", "symbol"),
    [
        ("engine/search/searcher.py", "Searcher.search"),
        ("engine/indexing/indexer.py", "Indexer._update"),
    ],
)
def test_methods_are_named_class_dot_method(path: str, symbol: str) -> None:
    # Every method label relies on this naming; if the chunker changes it, labels must too.
    assert symbol in qualified_names(ROOT, path)
