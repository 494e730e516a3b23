"""Shared index homes for the cluster search tests: small repositories indexed locally.

The layout a cluster index writes ($ENGINE_HOME/repos/<slug>/{CURRENT, gen-*}) is the local
one by design, so `engine index` into a folder makes a shared path.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from cli.main import main
from engine.index.home import Home
from engine.index.opening import open_index
from engine.search.federation import search_all
from engine.signal import OpenOptions, Signal, SignalPlugin
from engine.types import Hit, Query, QueryVector, Result, SearchResponse
from signals.vector.query_vector import embed_query
from tests.conftest import fake_plugins
from tests.engine.cluster.conftest import SimulatedCluster

SOURCES = {
    "greeters": {
        "greeter.py": 'def greet(name):\n    """Greet a person by name."""\n'
        '    return "hi " + name\n',
        "farewell.py": "def farewell(name):\n    return 'bye ' + name\n",
    },
    "parsers": {
        "http.py": "def parse_request(raw):\n    head, body = raw.split('\\n\\n', 1)\n"
        "    return head, body\n",
        "json_parse.py": "import json\n\ndef parse_json(text):\n    return json.loads(text)\n",
    },
    "shapes": {
        "shapes.py": "class Circle:\n    def area(self, r):\n        return 3.14 * r * r\n\n\n"
        "class Square:\n    def area(self, side):\n        return side * side\n",
    },
    "storage": {
        "cache.py": "class Cache:\n    def get(self, key):\n        return self.items.get(key)\n\n"
        "    def put(self, key, value):\n        self.items[key] = value\n",
        "files.py": "def read_file(path):\n    with open(path) as fh:\n        return fh.read()\n",
    },
}

QUERIES = [
    "greet a person by name",
    "parse_request",
    "area of a circle",
    "read a file from disk",
    "Cache.get",
    "json",
]


def index(home: Path, root: Path, name: str) -> None:
    previous = os.environ.get("ENGINE_HOME")
    os.environ["ENGINE_HOME"] = str(home)
    try:
        result = CliRunner().invoke(main, ["index", str(root), "--name", name])
    finally:
        if previous is None:
            os.environ.pop("ENGINE_HOME", None)
        else:
            os.environ["ENGINE_HOME"] = previous
    assert result.exit_code == 0, result.output


def shared_home(tmp: Path, names: list[str] | None = None, *, extra: int = 0) -> Path:
    """An index home holding the repositories of SOURCES (or ``names`` of them), and
    ``extra`` more one-file ones (``extra-0``, ...) for placement to spread."""
    home = tmp / "shared-home"
    sources = dict(SOURCES)
    for n in range(extra):
        sources[f"extra-{n}"] = {f"tool_{n}.py": f"def tool_{n}(x):\n    return x + {n}\n"}
    for name, files in sources.items():
        if names is not None and name not in names:
            continue
        root = tmp / "src" / name
        root.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            (root / path).write_text(text)
        index(home, root, name)
    return home


SLEEPY = "sleepy"  # a query with this word makes the lexical signal of SLOW_REPO sleep
SLOW_REPO = "storage"
SLEEP_S = 3.0


class _Sleepy:
    def __init__(self, inner: Signal, slow: bool) -> None:
        self.inner, self.slow = inner, slow
        self.name, self.warning = inner.name, inner.warning

    def search(self, query: Query, limit: int) -> list[Hit]:
        if self.slow and SLEEPY in query.text:
            time.sleep(SLEEP_S)
        return self.inner.search(query, limit)


def slow_plugins() -> dict[str, SignalPlugin]:
    """The fake registry, with a lexical signal that sleeps in SLOW_REPO on SLEEPY queries
    (a late shard, or one to kill mid-query)."""
    plugins = fake_plugins()
    lexical = plugins["lexical"]

    def open_slow(directory: Path, meta: Mapping[str, Any], options: OpenOptions) -> Signal:
        slow = directory.parent.parent.name == SLOW_REPO  # .../repos/<slug>/gen-N/lexical
        return _Sleepy(lexical.open(directory, meta, options), slow)

    plugins["lexical"] = dataclasses.replace(lexical, open=open_slow)
    return plugins


def local_answer(home: Path, repos: list[str], text: str, limit: int = 10) -> SearchResponse:
    """What a local ``engine query a,b TEXT`` answers (without the files check)."""
    opened = [open_index(Home(home), r, fake_plugins(), OpenOptions(home=home)) for r in repos]
    try:
        searches = [partial(o.searcher.search, text, limit=limit) for o in opened]
        return searches[0]() if len(searches) == 1 else search_all(searches, limit)
    finally:
        for o in opened:
            o.close()


def ranking(response: SearchResponse) -> list[tuple[str, str, int, int, float]]:
    return [_key(r) for r in response.results]


def _key(r: Result) -> tuple[str, str, int, int, float]:
    return (r.repo, r.path, r.start_line, r.end_line, r.score)


def embedder(home: Path) -> partial[QueryVector]:
    """The router's embedder for ``home`` (a module-level function, bound)."""
    return partial(embed_query, home=home)


def connected(cluster: SimulatedCluster) -> SimulatedCluster:
    """``cluster`` with this process connected to it: a test using ``ray_local`` in the same
    session (the session fixtures share one connection) may have switched it to a local
    instance since the cluster started."""
    import ray

    if not ray.is_initialized() or ray.get_runtime_context().gcs_address != cluster.address:
        if ray.is_initialized():
            ray.shutdown()
        ray.init(address=cluster.address, log_to_driver=False)
    return cluster
