"""The remote embedder against fake APIs on 127.0.0.1: requests, batching, retries, secrecy."""

from __future__ import annotations

import logging
import socket
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from engine.errors import UsageError
from engine.signal import EmbedderChoice
from signals.vector.cache import cache_path
from signals.vector.remote import MAX_TEXT_CHARS, RemoteEmbedder, batches
from signals.vector.remote_retry import RetryPolicy, retry_after_s
from signals.vector.remote_spec import (
    RemoteEmbedderError,
    RemoteSpec,
    check_remote_choice,
    spec_from_choice,
)
from tests.signals.vector.embedding_servers import EmbeddingServer

KEY = "sk-test-SECRET-0123456789abcdef"


class Sleeps:
    """An injected ``sleep`` that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def policy(sleeps: Sleeps, attempts: int = 4) -> RetryPolicy:
    # jitter 0: each backoff is exactly half its bound, so the waits are known.
    return RetryPolicy(max_attempts=attempts, base_delay_s=1.0, sleep=sleeps, jitter=lambda: 0.0)


def spec_of(server: EmbeddingServer, **choice: object) -> RemoteSpec:
    return spec_from_choice(EmbedderChoice(server.provider, url=server.url, **choice))  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)


def test_openai_request_shape_and_unit_vectors(openai_server: EmbeddingServer) -> None:
    embedder = RemoteEmbedder(spec_of(openai_server, model="nomic-embed-text"))
    assert embedder.probe() == 16
    vectors = embedder.embed_documents(["def parse(): pass", "class Router: pass"])
    assert vectors.shape == (2, 16) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    last = openai_server.seen[-1]
    assert last.path == "/v1/embeddings"
    assert last.body == {
        "model": "nomic-embed-text",
        "input": ["def parse(): pass", "class Router: pass"],
        "encoding_format": "float",
    }
    assert last.authorization == f"Bearer {KEY}"
    # The server answered out of order: rows follow the inputs, not the answer.
    again = embedder.embed_documents(["class Router: pass"])
    assert np.allclose(again[0], vectors[1])


def test_voyage_sends_input_type_and_dimension(voyage_server: EmbeddingServer) -> None:
    embedder = RemoteEmbedder(spec_of(voyage_server, dim=16))
    embedder.probe()
    embedder.embed_documents(["def parse(): pass"])
    embedder.embed_query("where is parsing")
    documents, query = voyage_server.seen[-2:]
    assert documents.body["input_type"] == "document"
    assert query.body["input_type"] == "query"
    assert query.body["model"] == "voyage-code-3"
    assert query.body["output_dimension"] == 16
    assert query.body["truncation"] is True


def test_batches_are_bounded_by_count_and_characters(openai_server: EmbeddingServer) -> None:
    embedder = RemoteEmbedder(spec_of(openai_server), 16, max_batch_texts=4, max_batch_chars=1000)
    texts = [f"def f{i}(): return {i}" for i in range(10)]
    embedder.embed_documents(texts)
    assert [len(s.body["input"]) for s in openai_server.seen] == [4, 4, 2]

    openai_server.seen.clear()
    long = ["x" * 600] * 3
    embedder.embed_documents(long)
    assert [len(s.body["input"]) for s in openai_server.seen] == [1, 1, 1]


def test_batches_clip_long_texts_and_keep_every_row() -> None:
    texts = ["a" * (MAX_TEXT_CHARS * 2), "b", "c" * 10]
    got = list(batches(texts, 2, MAX_TEXT_CHARS + 5))
    assert got == [range(0, 2), range(2, 3)]
    assert [i for r in batches(texts * 7, 3, 50) for i in r] == list(range(21))


def test_429_waits_what_retry_after_says_then_succeeds(openai_server: EmbeddingServer) -> None:
    sleeps = Sleeps()
    openai_server.script = [(429, {"Retry-After": "7"}), (429, {"Retry-After": "2"})]
    embedder = RemoteEmbedder(spec_of(openai_server), 16, policy=policy(sleeps))
    vectors = embedder.embed_documents(["def f(): pass"])
    assert vectors.shape == (1, 16)
    assert sleeps.waits == [7.0, 2.0]
    assert len(openai_server.seen) == 3


def test_5xx_back_off_exponentially_then_succeed(openai_server: EmbeddingServer) -> None:
    sleeps = Sleeps()
    openai_server.script = [(500, {}), (502, {}), (503, {})]
    embedder = RemoteEmbedder(spec_of(openai_server), 16, policy=policy(sleeps))
    embedder.embed_documents(["def f(): pass"])
    assert sleeps.waits == [0.5, 1.0, 2.0]  # half of 1, 2, 4 s with the jitter at 0


def test_jitter_spreads_a_backoff_within_its_bound() -> None:
    spread = RetryPolicy(base_delay_s=2.0, max_delay_s=5.0, jitter=lambda: 0.999)
    assert 3.9 < spread.delay_s(2) < 4.0
    assert spread.delay_s(10) < 5.0  # capped
    assert spread.delay_s(1, retry_after_s=1000.0) == spread.max_retry_after_s


def test_persistent_failure_is_a_clear_error_without_the_key(
    openai_server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sleeps = Sleeps()
    openai_server.fail_with = 500
    embedder = RemoteEmbedder(spec_of(openai_server), 16, policy=policy(sleeps, attempts=3))
    with pytest.raises(RemoteEmbedderError) as caught:
        embedder.embed_documents(["def f(): pass"])
    message = str(caught.value)
    assert "failed 3 times in a row" in message and "HTTP 500" in message
    assert openai_server.url in message
    assert KEY not in message and KEY[-6:] not in message
    assert "[key]" in message  # the server echoed it; the message did not
    assert len(sleeps.waits) == 2
    assert KEY not in caplog.text


def test_refused_key_is_not_retried_and_names_the_variable(
    openai_server: EmbeddingServer,
) -> None:
    sleeps = Sleeps()
    openai_server.fail_with = 401
    embedder = RemoteEmbedder(spec_of(openai_server), 16, policy=policy(sleeps))
    with pytest.raises(RemoteEmbedderError, match=r"HTTP 401.*OPENAI_API_KEY") as caught:
        embedder.embed_query("parse")
    assert KEY not in str(caught.value)
    assert sleeps.waits == [] and len(openai_server.seen) == 1


def test_unreachable_endpoint_retries_then_fails() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = Sleeps()
    spec = spec_from_choice(EmbedderChoice("openai", url=f"http://127.0.0.1:{port}/v1"))
    embedder = RemoteEmbedder(spec, 16, policy=policy(sleeps, attempts=2))
    with pytest.raises(RemoteEmbedderError, match="could not reach it"):
        embedder.embed_documents(["x"])
    assert len(sleeps.waits) == 1


def test_a_changed_dimension_is_an_error(openai_server: EmbeddingServer) -> None:
    embedder = RemoteEmbedder(spec_of(openai_server), 8)
    with pytest.raises(RemoteEmbedderError, match="now returns 16-dimensional vectors"):
        embedder.embed_query("parse")


def test_retry_after_reads_seconds_and_dates() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_s("3") == 3.0
    assert retry_after_s("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_s("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0
    assert retry_after_s("soon") is None
    assert retry_after_s(None) is None


def test_identity_separates_providers_models_sizes_and_servers() -> None:
    a = spec_from_choice(EmbedderChoice("openai", url="http://127.0.0.1:1/v1"))
    b = spec_from_choice(EmbedderChoice("openai", url="http://127.0.0.1:2/v1"))
    v = spec_from_choice(EmbedderChoice("voyage", url="http://127.0.0.1:1/v1"))
    ids = {a.model_id(16), a.model_id(32), b.model_id(16), v.model_id(16)}
    assert len(ids) == 4
    assert all(i.startswith("remote-") for i in ids)  # a local model's id is hex digests
    assert KEY not in "".join(ids)
    assert len({cache_path(Path("/h"), i) for i in ids}) == 4


def test_choice_is_checked_before_anything_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        check_remote_choice(EmbedderChoice("openai"), model=None)
    with pytest.raises(UsageError, match="MY_KEY"):
        check_remote_choice(
            EmbedderChoice("openai", url="http://127.0.0.1:9/v1", key_env="MY_KEY"), model=None
        )
    # A server of the user's own needs no key unless one is named.
    check_remote_choice(EmbedderChoice("openai", url="http://127.0.0.1:9/v1"), model=None)
    with pytest.raises(UsageError, match="credentials"):
        check_remote_choice(EmbedderChoice("openai", url=f"http://u:{KEY}@h/v1"), model=None)
    with pytest.raises(UsageError, match="--model"):
        check_remote_choice(EmbedderChoice("voyage"), model="/some/model")


def test_endpoint_url_given_whole_is_taken_for_its_base() -> None:
    spec = spec_from_choice(EmbedderChoice("openai", url="http://127.0.0.1:9/v1/embeddings/"))
    assert spec.url == "http://127.0.0.1:9/v1"
    assert spec.endpoint == "http://127.0.0.1:9/v1/embeddings"
