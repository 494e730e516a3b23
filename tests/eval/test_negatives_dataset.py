"""Checks the shape of eval/datasets/semble-dev-negatives.jsonl.

The file holds unanswerable queries (negatives) for the 36 semble-dev repositories, used to
calibrate the engine's ``lowConfidence`` flag. The repository names are embedded here rather
than read from the benchmark's repos.json so the test runs on a machine without the benchmark.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEGATIVES = ROOT / "eval" / "datasets" / "semble-dev-negatives.jsonl"
MIN_PER_REPO = 3

SEMBLE_DEV_REPOS = (
    "aiohttp",
    "model2vec",
    "pydantic",
    "cobra",
    "monolog",
    "laravel-framework",
    "sinatra",
    "rack",
    "rails",
    "tokio",
    "ktor",
    "cats",
    "alamofire",
    "click",
    "phoenix",
    "vitest",
    "newtonsoft-json",
    "dapper",
    "kotlinx-coroutines",
    "exposed",
    "vapor",
    "plug",
    "ecto",
    "abseil-cpp",
    "fmtlib",
    "curl",
    "libuv",
    "bats-core",
    "aeson",
    "telescope.nvim",
    "lazy.nvim",
    "nvm",
    "pandoc",
    "xmonad",
    "zls",
    "zig-clap",
)


def _items() -> list[dict[str, Any]]:
    lines = NEGATIVES.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_every_line_parses_as_an_object() -> None:
    for number, line in enumerate(NEGATIVES.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"blank line {number}"
        assert isinstance(json.loads(line), dict), f"line {number} is not an object"


def test_ids_are_unique() -> None:
    counts = Counter(item["id"] for item in _items())
    assert [i for i, n in counts.items() if n > 1] == []


def test_repos_are_known_and_each_has_enough_negatives() -> None:
    assert len(SEMBLE_DEV_REPOS) == 36
    counts = Counter(item["repo"] for item in _items())
    assert set(counts) <= set(SEMBLE_DEV_REPOS)
    short = {repo: counts[repo] for repo in SEMBLE_DEV_REPOS if counts[repo] < MIN_PER_REPO}
    assert short == {}


@pytest.mark.parametrize("item", _items(), ids=lambda item: item["id"])
def test_item_is_a_checked_negative(item: dict[str, Any]) -> None:
    assert item["id"].startswith(f"{item['repo']}-neg-")
    assert isinstance(item["query"], str) and item["query"].strip()
    assert item["category"] == "negative"
    assert item["negative"] is True
    assert item["relevant"] == []
    checked = item["checked"]
    assert isinstance(checked, list) and checked
    assert all(isinstance(p, str) and p for p in checked)
