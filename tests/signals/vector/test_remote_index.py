"""Indexes embedded by a remote API, end to end through the CLI, against fake APIs on
127.0.0.1: the warning, the stored choice, queries, failures, dimension changes, the cache,
and the key that must never appear anywhere."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import signals.vector.remote as remote
from cli.main import main
from engine.signal import IndexOptions, SignalBuilder, SignalPlugin
from signals import registry
from signals.vector.builder import VectorBuilder
from signals.vector.embedder import HashingEmbedder
from signals.vector.remote_retry import RetryPolicy
from tests.conftest import _real_plugins
from tests.fakes import fake_loader
from tests.signals.vector.embedding_servers import EmbeddingServer

KEY = "sk-test-SECRET-0123456789abcdef"
LEAVES = "code leaves this machine"


def remote_plugins() -> dict[str, SignalPlugin]:
    """The real registry, the vector signal's builder alone (no tiers) with the hashing fake
    standing in for the local model, which a remote index never loads; its real opener, so
    that the vector signal's own warnings reach the answer."""
    plugins = _real_plugins()

    def builder(options: IndexOptions) -> SignalBuilder:
        return VectorBuilder(options, load_model=fake_loader(HashingEmbedder(64)))

    plugins["vector"] = dataclasses.replace(plugins["vector"], make_builder=builder)
    return plugins


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(registry, "plugins", remote_plugins)
    monkeypatch.setenv("ENGINE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    # Retries without waiting (the waits themselves are test_remote.py's business).
    quick = RetryPolicy(max_attempts=3, sleep=lambda _s: None)
    monkeypatch.setattr(remote, "INDEX_POLICY", quick)
    monkeypatch.setattr(remote, "QUERY_POLICY", quick)
    root = tmp_path / "toy-repo"
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "greeter.py").write_text(
        "def greet(name):\n    return f'Hello {name}'\n\n\n"
        "def shout(text):\n    return text.upper()\n"
    )
    (root / "toy" / "store.py").write_text(
        "def connect_database(url):\n    return sqlite3.connect(url)\n"
    )
    return root


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def index_remote(repo: Path, server: EmbeddingServer, *extra: str) -> Result:
    return run(
        "index", str(repo), "--embedder", server.provider, "--embedder-url", server.url, *extra
    )


def modify(repo: Path) -> None:
    (repo / "toy" / "extra.py").write_text("def farewell(name):\n    return f'Bye {name}'\n")


def no_key_anywhere(repo_home: Path, *outputs: str) -> None:
    for text in outputs:
        assert KEY not in text and KEY[-6:] not in text
    for path in repo_home.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_openai_index_query_status_and_the_warning(
    repo: Path, openai_server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    done = index_remote(repo, openai_server, "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["signals"]["vector"]["ready"] is True
    assert any(LEAVES in w and openai_server.url in w for w in report["warnings"])
    assert LEAVES in done.stderr  # also before anything was sent
    # Every chunk went to the server (after the one dimension probe), with the key.
    assert any("connect_database" in t for t in openai_server.texts())
    assert {s.authorization for s in openai_server.seen} == {f"Bearer {KEY}"}

    asked = len(openai_server.seen)
    found = run("query", "toy-repo", "open a database connection", "--json")
    assert found.exit_code == 0, found.output
    results = json.loads(found.stdout)["results"]
    assert any("vector" in r["sources"] for r in results)
    assert len(openai_server.seen) == asked + 1  # the query was embedded remotely too

    status = run("status", "toy-repo", "--json")
    vector = json.loads(status.stdout)["signals"]["vector"]
    assert vector["embedder"] == {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "url": openai_server.url,
        "dim": 16,
        "keyEnv": "OPENAI_API_KEY",
        "remote": True,
    }
    text_status = run("status", "toy-repo")
    assert "remote" in text_status.output
    no_key_anywhere(
        repo.parent / "home",
        done.output,
        found.output,
        status.output,
        text_status.output,
        caplog.text,
    )


def test_voyage_index_and_reindex_reuse_the_choice(
    repo: Path, voyage_server: EmbeddingServer
) -> None:
    first = index_remote(repo, voyage_server, "--embedder-model", "voyage-code-3")
    assert first.exit_code == 0, first.output
    assert LEAVES in first.stderr
    documents = voyage_server.texts("document")
    assert any("greet" in t for t in documents)

    modify(repo)
    again = run("reindex", "toy-repo", "--json")
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert any(LEAVES in w for w in report["warnings"])  # the stored choice warns again
    assert LEAVES in again.stderr
    new = voyage_server.texts("document")[len(documents) :]
    assert any("farewell" in t for t in new)
    assert not any("connect_database" in t for t in new)  # unchanged chunks: not re-sent

    found = run("query", "toy-repo", "say goodbye", "--json")
    assert found.exit_code == 0
    assert voyage_server.seen[-1].body["input_type"] == "query"
    no_key_anywhere(repo.parent / "home", first.output, again.output, found.output)


def test_persistent_failure_stops_the_update_and_keeps_the_vectors(
    repo: Path, openai_server: EmbeddingServer
) -> None:
    assert index_remote(repo, openai_server).exit_code == 0
    openai_server.fail_with = 500
    modify(repo)
    failed = run("reindex", "toy-repo", "--json")
    assert failed.exit_code == 1
    error = json.loads(failed.stdout)["error"]
    assert "failed 3 times in a row" in error and "HTTP 500" in error
    assert "keeps its previous vectors" in error
    no_key_anywhere(repo.parent / "home", failed.output)

    openai_server.fail_with = None
    status = json.loads(run("status", "toy-repo", "--json").stdout)
    assert status["signals"]["vector"]["ready"] is True  # the previous vectors answer
    found = run("query", "toy-repo", "open a database connection", "--json")
    assert any("vector" in r["sources"] for r in json.loads(found.stdout)["results"])
    # The next run finishes the job.
    assert run("reindex", "toy-repo").exit_code == 0
    status = json.loads(run("status", "toy-repo", "--json").stdout)
    assert status["signals"]["vector"]["synced"] is True


def test_an_endpoint_down_on_the_first_index_leaves_the_other_signals_searchable(
    repo: Path, openai_server: EmbeddingServer
) -> None:
    openai_server.fail_with = 502
    failed = index_remote(repo, openai_server, "--json")
    assert failed.exit_code == 1
    assert "HTTP 502" in json.loads(failed.stdout)["error"]
    status = json.loads(run("status", "toy-repo", "--json").stdout)
    assert status["signals"]["lexical"]["ready"] is True
    assert status["signals"]["vector"]["ready"] is False
    found = run("query", "toy-repo", "greet", "--json")
    assert found.exit_code == 0 and json.loads(found.stdout)["results"]
    no_key_anywhere(repo.parent / "home", failed.output, found.output)


def test_failing_endpoint_at_query_time_degrades_the_vector_signal(
    repo: Path, openai_server: EmbeddingServer
) -> None:
    assert index_remote(repo, openai_server).exit_code == 0
    openai_server.fail_with = 503
    found = run("query", "toy-repo", "greet", "--json")
    assert found.exit_code == 0, found.output
    data = json.loads(found.stdout)
    assert data["results"]  # the lexical and symbol signals still answer
    assert all("vector" not in r["sources"] for r in data["results"])
    assert "vector signal left out of this answer" in data["warning"]
    assert KEY not in found.output


def test_dimension_change_re_embeds_with_a_message(
    repo: Path, openai_server: EmbeddingServer
) -> None:
    assert index_remote(repo, openai_server).exit_code == 0
    openai_server.dim = 24
    before = len(openai_server.texts())
    modify(repo)
    again = run("reindex", "toy-repo", "--json")
    assert again.exit_code == 0, again.output
    warnings = json.loads(again.stdout)["warnings"]
    assert any("24-dimensional" in w and "held 16" in w for w in warnings)
    resent = openai_server.texts()[before:]
    assert any("connect_database" in t for t in resent)  # every chunk, not just the new
    status = json.loads(run("status", "toy-repo", "--json").stdout)
    assert status["signals"]["vector"]["embedder"]["dim"] == 24
    found = run("query", "toy-repo", "greet", "--json")
    assert "warning" not in json.loads(found.stdout)


def test_the_cache_keeps_embedders_apart(
    repo: Path, openai_server: EmbeddingServer, voyage_server: EmbeddingServer
) -> None:
    assert index_remote(repo, openai_server, "--name", "a").exit_code == 0
    sent = openai_server.texts()
    # The same chunks embedded by another provider are not served from the first's cache.
    assert index_remote(repo, voyage_server, "--name", "b").exit_code == 0
    assert len(voyage_server.texts("document")) == len(sent)
    # ... nor by the same server asked for another size.
    openai_server.seen.clear()
    assert index_remote(repo, openai_server, "--name", "c", "--embedder-dim", "8").exit_code == 0
    assert openai_server.seen[-1].body["dimensions"] == 8
    assert len(openai_server.texts()) == len(sent)
    # The same embedder again: everything comes from the cache, only the probe is sent.
    openai_server.seen.clear()
    assert index_remote(repo, openai_server, "--name", "a", "--full").exit_code == 0
    assert len(openai_server.seen) == 1
    caches = sorted((repo.parent / "home" / "cache").glob("embeddings-*.sqlite"))
    assert len(caches) == 3


def test_a_missing_key_or_a_bad_url_is_refused_before_anything_is_sent(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VOYAGE_API_KEY")
    refused = run("index", str(repo), "--embedder", "voyage", "--json")
    assert refused.exit_code == 1
    assert "VOYAGE_API_KEY" in json.loads(refused.stdout)["error"]
    bad = run("index", str(repo), "--embedder", "openai", "--embedder-url", "ftp://x", "--json")
    assert "not an http(s) URL" in json.loads(bad.stdout)["error"]
    alone = run("index", str(repo), "--embedder-model", "m", "--json")
    assert "go with --embedder" in json.loads(alone.stdout)["error"]
    assert not (repo.parent / "home" / "repos").exists() or not any(
        (repo.parent / "home" / "repos").iterdir()
    )
