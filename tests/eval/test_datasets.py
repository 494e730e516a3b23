"""Checks the labeled evaluation datasets in eval/datasets/ and their manifest eval/repos.json.

The structural checks need nothing but the files themselves. The label checks (every path
exists, every range lies inside its file) run only when a repository has been materialized
into ``.eval-repos/<name>`` at its pinned commit (``python -m eval.materialize --all``).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATASETS_DIR = ROOT / "eval" / "datasets"
REPOS_JSON = ROOT / "eval" / "repos.json"
CHECKOUTS_DIR = ROOT / ".eval-repos"

CATEGORIES = frozenset({"conceptual", "partial-identifier", "exact-symbol", "long", "architecture"})
REQUIRED_KEYS = frozenset({"id", "query", "repo", "relevant", "category", "negative"})
OPTIONAL_KEYS = frozenset({"notes"})
RANGE_KEYS = frozenset({"path", "startLine", "endLine"})
# Floors for the datasets of public repositories, as agreed for the benchmark.
MIN_QUERIES = 40
MIN_NEGATIVES = 5

# The semble-dev negatives span 36 repositories and record their grep checks: their own test
# (test_negatives_dataset.py) holds them to that format.
DATASET_FILES = sorted(
    p for p in DATASETS_DIR.glob("*.jsonl") if p.name != "semble-dev-negatives.jsonl"
)


def _load_manifest() -> dict[str, dict[str, Any]]:
    raw = json.loads(REPOS_JSON.read_text(encoding="utf-8"))
    assert isinstance(raw, dict)
    return raw


def _public_repo_for(dataset: Path) -> str | None:
    """The repos.json name whose ``dataset`` field names this file, if any."""
    for name, entry in _load_manifest().items():
        if (ROOT / entry["dataset"]).resolve() == dataset.resolve():
            return name
    return None


def _path_problems(where: str, path: object) -> list[str]:
    if not isinstance(path, str) or not path:
        return [f"{where}: path must be a non-empty string"]
    if path.startswith("/") or "\\" in path or ".." in path.split("/"):
        return [f"{where}: path {path!r} must be repository-relative with '/' separators"]
    return []


def _relevant_problems(where: str, relevant: object) -> list[str]:
    if not isinstance(relevant, list):
        return [f"{where}: 'relevant' must be a list"]
    problems: list[str] = []
    for index, entry in enumerate(relevant):
        at = f"{where} relevant[{index}]"
        if isinstance(entry, str):
            problems += _path_problems(at, entry)
            continue
        if isinstance(entry, dict) and set(entry) == {"path", "symbol"}:
            problems += _path_problems(at, entry["path"])
            if not isinstance(entry["symbol"], str) or not entry["symbol"]:
                problems.append(f"{at}: symbol must be a non-empty string")
            continue
        if not isinstance(entry, dict) or set(entry) != RANGE_KEYS:
            problems.append(f"{at}: must be a path or an object with exactly {sorted(RANGE_KEYS)}")
            continue
        problems += _path_problems(at, entry["path"])
        start, end = entry["startLine"], entry["endLine"]
        # bool is an int subclass; a JSON true must not pass as line 1.
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            problems.append(f"{at}: startLine and endLine must be integers")
        elif not 1 <= start <= end:
            problems.append(f"{at}: need 1 <= startLine <= endLine, got {start}..{end}")
    return problems


def dataset_problems(lines: list[str], expected_repo: str | None) -> list[str]:
    """Every structural problem in one dataset's lines; an empty list means it is valid."""
    problems: list[str] = []
    seen_ids: set[str] = set()
    repos: set[str] = set()
    for number, line in enumerate(lines, 1):
        where = f"line {number}"
        if not line.strip():
            problems.append(f"{where}: blank line")
            continue
        try:
            query = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not JSON ({exc})")
            continue
        if not isinstance(query, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        missing = REQUIRED_KEYS - set(query)
        unknown = set(query) - REQUIRED_KEYS - OPTIONAL_KEYS
        if missing or unknown:
            problems.append(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")
            continue
        for key in ("id", "query", "repo"):
            if not isinstance(query[key], str) or not query[key].strip():
                problems.append(f"{where}: {key!r} must be a non-empty string")
        if isinstance(query["id"], str):
            if query["id"] in seen_ids:
                problems.append(f"{where}: duplicate id {query['id']!r}")
            seen_ids.add(query["id"])
        if isinstance(query["repo"], str):
            repos.add(query["repo"])
            if expected_repo is not None and query["repo"] != expected_repo:
                problems.append(f"{where}: repo {query['repo']!r}, expected {expected_repo!r}")
        if query["category"] not in CATEGORIES:
            problems.append(f"{where}: category {query['category']!r} not in {sorted(CATEGORIES)}")
        if not isinstance(query["negative"], bool):
            problems.append(f"{where}: 'negative' must be true or false")
        problems += _relevant_problems(where, query["relevant"])
        if isinstance(query["relevant"], list):
            if query["negative"] is True and query["relevant"]:
                problems.append(f"{where}: a negative query must have an empty 'relevant'")
            if query["negative"] is False and not query["relevant"]:
                problems.append(f"{where}: a positive query needs at least one relevant entry")
    if len(repos) > 1:
        problems.append(f"one dataset must cover one repository, found {sorted(repos)}")
    return problems


def _read_queries(dataset: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in dataset.read_text(encoding="utf-8").splitlines()]


def test_there_are_datasets() -> None:
    assert DATASET_FILES, f"no *.jsonl files in {DATASETS_DIR}"


@pytest.mark.parametrize("dataset", DATASET_FILES, ids=lambda p: p.name)
def test_dataset_is_well_formed(dataset: Path) -> None:
    lines = dataset.read_text(encoding="utf-8").splitlines()
    assert dataset_problems(lines, _public_repo_for(dataset)) == []


def test_ids_are_unique_across_datasets() -> None:
    owners: dict[str, str] = {}
    clashes = []
    for dataset in DATASET_FILES:
        for query in _read_queries(dataset):
            if query["id"] in owners:
                clashes.append(f"{query['id']} in {owners[query['id']]} and {dataset.name}")
            owners[query["id"]] = dataset.name
    assert clashes == []


def test_manifest_entries_are_pinned_and_point_at_datasets() -> None:
    manifest = _load_manifest()
    assert manifest
    for name, entry in manifest.items():
        assert set(entry) >= {"url", "commit", "language", "dataset"}, name
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), f"{name}: commit must be 40 hex"
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", entry["url"]), name
        assert (ROOT / entry["dataset"]).is_file(), f"{name}: {entry['dataset']} is missing"


@pytest.mark.parametrize("name", sorted(_load_manifest()))
def test_public_dataset_meets_size_floors(name: str) -> None:
    queries = _read_queries(ROOT / _load_manifest()[name]["dataset"])
    negatives = [q for q in queries if q["negative"]]
    assert len(queries) >= MIN_QUERIES
    assert len(negatives) >= MIN_NEGATIVES
    # Every category is represented, so per-category metrics are never empty.
    assert {q["category"] for q in queries if not q["negative"]} == CATEGORIES


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "not JSON"),
        ('{"id": "x"}', "missing"),
        (
            '{"id": "x", "query": "q", "repo": "r", "relevant": [], "category": "vague",'
            ' "negative": true}',
            "category",
        ),
        (
            '{"id": "x", "query": "q", "repo": "r", "relevant": ["a.py"], "category": "long",'
            ' "negative": true}',
            "empty 'relevant'",
        ),
        (
            '{"id": "x", "query": "q", "repo": "r", "relevant": [], "category": "long",'
            ' "negative": false}',
            "at least one",
        ),
        (
            '{"id": "x", "query": "q", "repo": "r", "category": "long", "negative": false,'
            ' "relevant": [{"path": "a.py", "startLine": 9, "endLine": 3}]}',
            "startLine <= endLine",
        ),
        (
            '{"id": "x", "query": "q", "repo": "r", "category": "long", "negative": false,'
            ' "relevant": [{"path": "/abs/a.py", "startLine": 1, "endLine": 3}]}',
            "repository-relative",
        ),
        (
            '{"id": "x", "query": "q", "repo": "other", "relevant": [], "category": "long",'
            ' "negative": true}',
            "expected 'r'",
        ),
    ],
)
def test_validator_rejects_bad_lines(line: str, expected: str) -> None:
    problems = dataset_problems([line], expected_repo="r")
    assert any(expected in p for p in problems), problems


def test_validator_rejects_duplicate_ids() -> None:
    line = (
        '{"id": "x", "query": "q", "repo": "r", "relevant": [], "category": "long",'
        ' "negative": true}'
    )
    assert any("duplicate" in p for p in dataset_problems([line, line], expected_repo="r"))


def _checkout_at_pinned_commit(name: str) -> Path:
    checkout = CHECKOUTS_DIR / name
    if not checkout.is_dir():
        pytest.skip(f"{checkout} is absent; run `python -m eval.materialize {name}`")
    head = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if head != _load_manifest()[name]["commit"]:
        pytest.skip(f"{checkout} is at {head or 'no commit'}, not the pinned commit")
    return checkout


@pytest.mark.parametrize("name", sorted(_load_manifest()))
def test_labels_lie_inside_the_materialized_repository(name: str) -> None:
    checkout = _checkout_at_pinned_commit(name)
    problems = []
    for query in _read_queries(ROOT / _load_manifest()[name]["dataset"]):
        for entry in query["relevant"]:
            path = entry if isinstance(entry, str) else entry["path"]
            target = checkout / path
            if not target.is_file():
                problems.append(f"{query['id']}: {path} does not exist")
                continue
            if isinstance(entry, str):
                continue
            lines = target.read_text(encoding="utf-8").splitlines()
            start, end = entry["startLine"], entry["endLine"]
            if end > len(lines):
                problems.append(f"{query['id']}: {path}:{start}-{end} beyond {len(lines)} lines")
            # A range that starts or ends on a blank line is almost always off by one.
            elif not lines[start - 1].strip() or not lines[end - 1].strip():
                problems.append(f"{query['id']}: {path}:{start}-{end} starts or ends blank")
    assert problems == []
