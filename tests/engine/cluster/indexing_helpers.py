"""What the cluster indexing tests share: small repositories, a local reference build, and
the comparisons that say a cluster-built index is the local one."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.cluster.indexing import ClusterIndexReport, index_on_cluster
from engine.cluster.indexing_repos import RepoSpec
from engine.index.generations import current_generation
from engine.index.home import Home
from engine.index.manifest import read_manifest
from engine.index.opening import open_index
from engine.index.store import STORE_FILE
from engine.indexing.indexer import Indexer
from engine.search.federation import search_all
from engine.signal import IndexOptions, OpenOptions
from signals import registry
from signals.vector.cluster_embedding import ClusterVectorEmbedding
from signals.vector.embedder import HashingEmbedder
from tests.fakes import fake_loader

QUERIES = [
    "greet a person by name",
    "parse the request body",
    "connect to the database",
    "Greeter",
    "render a template with context",
    "retry with backoff",
]
# Timestamps and durations differ between any two builds; the vector build's message counts
# the texts it embedded against those it found cached, which depends on the cache, not on
# the index (a second local build says the same as a cluster one).
VOLATILE = {"built_at", "scanned_at_ns", "source_checked_ns", "store_stamp"}

_SHARED = '''
def retry(call, attempts=3, delay_s=0.1):
    """Call until it succeeds, waiting longer each time (exponential backoff)."""
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            time.sleep(delay_s * 2**attempt)
    return call()
'''


def make_repos(root: Path) -> list[RepoSpec]:
    """Three small repositories sharing one file at one path (the embedded text holds the
    path), so that the coordinator has a text to embed once for all three."""
    files = {
        "alpha": {
            "greeter.py": 'class Greeter:\n    """Greets people."""\n\n    def greet(self, name):\n'
            '        """Greet a person by name."""\n        return f"hello {name}"\n',
            "util/retry.py": _SHARED,
            "README.md": "# alpha\n\nGreets people by name.\n",
        },
        "beta": {
            "http/body.py": "import json\n\n\ndef parse_request_body(req):\n"
            '    """Parse the JSON request body."""\n    return json.loads(req.body)\n',
            "db.py": "import sqlite3\n\n\ndef connect_database(url):\n"
            "    return sqlite3.connect(url)\n",
            "util/retry.py": _SHARED,
        },
        "gamma": {
            "render.ts": "export function renderTemplate(name: string, context: object) {\n"
            "  return env.get(name).render(context);\n}\n",
            "util/retry.py": _SHARED,
            "test_render.py": "def test_render_template():\n    assert render('a', {}) == 'a'\n",
        },
    }
    specs = []
    for name, tree in files.items():
        for rel, text in tree.items():
            path = root / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        specs.append(RepoSpec(name, (root / name).resolve()))
    return specs


def fake_side(home: Path) -> ClusterVectorEmbedding:
    """The embedding side for the registry's fake vector signal (tests/conftest.py)."""
    return ClusterVectorEmbedding(
        IndexOptions(home=home), load_model=fake_loader(HashingEmbedder(64))
    )


def build_local(home: Path, repos: Sequence[RepoSpec]) -> None:
    """The reference: each repository indexed on this machine, one after another, one home."""
    indexer = Indexer(Home(home), registry.plugins(), IndexOptions(home=home))
    for spec in repos:
        indexer.index(spec.slug, spec.root)


def build_cluster(
    coordinator_home: Path,
    store: Path,
    repos: Sequence[RepoSpec],
    *,
    actors: int = 2,
    repos_per_round: int | None = None,
) -> ClusterIndexReport:
    options = IndexOptions(home=coordinator_home)
    with fake_side(coordinator_home) as side:
        return index_on_cluster(
            repos,
            store,
            registry.plugins(),
            options,
            side,
            actors=actors,
            repos_per_round=repos_per_round,
        )


def rows(generation: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the chunk store, table by table, in a fixed order."""
    db = sqlite3.connect(f"file:{generation / STORE_FILE}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        db.close()


def manifest_json(generation: Path) -> dict[str, Any]:
    data = read_manifest(generation).to_json()
    for key in VOLATILE:
        data.pop(key, None)
    for state in data["signals"].values():
        state.pop("seconds", None)
        state["meta"].pop("seconds", None)  # the symbol signal times its own build
        if state["meta"].get("tier"):
            state.pop("message", None)
    return data


def vector_files(generation: Path) -> dict[str, bytes]:
    folder = generation / "vector"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def published(home: Path, slug: str) -> Path:
    generation = current_generation(home / "repos" / slug)
    assert generation is not None, f"{slug} has no published generation in {home}"
    return generation


def local_copy(store: Path, target: Path) -> Path:
    """What a search node does: copy the store to its own disk (mtimes kept) and open that."""
    shutil.copytree(store, target, ignore=shutil.ignore_patterns("staging", "*.lock"))
    return target


def rankings(home: Path, slugs: Sequence[str], query: str) -> list[tuple[Any, ...]]:
    """The ranked results of ``query`` over ``slugs`` (federated when more than one)."""
    opened = [open_index(Home(home), s, registry.plugins(), OpenOptions(home=home)) for s in slugs]
    try:
        searches = [lambda o=o: o.searcher.search(query, limit=10) for o in opened]
        response = searches[0]() if len(searches) == 1 else search_all(searches, 10)
    finally:
        for o in opened:
            o.close()
    return [
        (r.repo, r.path, r.start_line, r.end_line, r.score, r.sources) for r in response.results
    ]
