"""The remote embedder: texts to vectors by an HTTP embeddings API, batched and retried.

Two request shapes cover the endpoints users have: OpenAI's ``POST {base}/embeddings``
(``{"model", "input": [...]}`` → ``{"data": [{"index", "embedding"}]}``), which Ollama,
text-embeddings-inference and vLLM also serve, and Voyage's, which is the same plus
``input_type`` ("document" or "query": voyage-code-3 embeds the two differently).

The HTTP client is httpx2, the maintained successor of httpx that mcp already installs: one
pooled, thread-safe client with timeouts, so no second HTTP stack is added. The key goes in
the ``Authorization`` header only; every message built from an answer is passed through
``redact`` first, since some APIs echo what they were sent.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from signals.vector.embedder import FloatMatrix, FloatVector, l2_normalise
from signals.vector.remote_retry import QUERY_POLICY as _QUERY_POLICY
from signals.vector.remote_retry import RETRYABLE_STATUS, RetryPolicy, retry_after_s
from signals.vector.remote_spec import REMOTE, RemoteEmbedderError, RemoteSpec, redact

if TYPE_CHECKING:
    import httpx2

# Bounds of one request. OpenAI takes at most 2,048 inputs of 8,192 tokens and 300k tokens
# per request, Voyage 1,000 inputs and 120k tokens for voyage-code-3; code runs ~3 characters
# per token (minified code nearer 2), so these stay inside both with room to spare.
MAX_BATCH_TEXTS = 64
MAX_BATCH_CHARS = 100_000
MAX_TEXT_CHARS = 12_000  # a longer document is cut: its head carries the name and contract
TIMEOUT_S = 60.0
QUERY_TIMEOUT_S = 10.0
PROBE_TEXT = "def probe(): pass"  # what the dimension probe sends: no code of the user's

# The retry policies embedders get unless given one; tests replace them with policies whose
# sleep returns at once.
INDEX_POLICY = RetryPolicy()
QUERY_POLICY = _QUERY_POLICY

_CONTROL = re.compile(r"\s+")


class RemoteEmbedder:
    """``Embedder`` over HTTP. ``dim`` None means unknown until the first answer (``probe``).

    Safe to use from several threads (the client is); the key is read from the environment
    when the first request is made, so opening an index never needs it.
    """

    def __init__(
        self,
        spec: RemoteSpec,
        dim: int | None = None,
        *,
        policy: RetryPolicy | None = None,
        query_policy: RetryPolicy | None = None,
        timeout_s: float = TIMEOUT_S,
        max_batch_texts: int = MAX_BATCH_TEXTS,
        max_batch_chars: int = MAX_BATCH_CHARS,
    ) -> None:
        self._spec = spec
        self._dim = dim
        self._policy = policy or INDEX_POLICY
        self._query_policy = query_policy or QUERY_POLICY
        self._timeout_s = timeout_s
        self._max_texts = max_batch_texts
        self._max_chars = max_batch_chars
        self._client: httpx2.Client | None = None
        self._key: str | None = None
        self._lock = threading.Lock()
        self.requests = 0  # requests sent, retries included: tests and the report read it

    @property
    def spec(self) -> RemoteSpec:
        return self._spec

    @property
    def model_id(self) -> str:
        return self._spec.model_id(self.dim)

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise RemoteEmbedderError("the remote embedder's vector size is not known yet")
        return self._dim

    def probe(self) -> int:
        """Ask the endpoint for one vector of a fixed text (no code of the user's) and learn
        its size; RemoteEmbedderError when it cannot answer."""
        self._dim = None
        (vector,) = self._request([PROBE_TEXT], "document", self._policy)
        self._dim = len(vector)
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows in batches(texts, self._max_texts, self._max_chars):
            out[rows.start : rows.stop] = self._request(
                [_clipped(texts[i]) for i in rows], "document", self._policy
            )
        return out

    def embed_query(self, text: str) -> FloatVector:
        row: FloatVector = self._request([_clipped(text)], "query", self._query_policy)[0]
        return row

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # --- one request -----------------------------------------------------------------------

    def _request(self, texts: list[str], input_type: str, policy: RetryPolicy) -> FloatMatrix:
        import httpx2

        client = self._open()
        body = self._body(texts, input_type)
        failures = 0
        while True:
            wait: float | None = None
            try:
                self.requests += 1
                response = client.post(self._spec.endpoint, json=body)
            except httpx2.TimeoutException:
                reason = "the request timed out"
            except httpx2.TransportError as err:
                reason = f"could not reach it ({type(err).__name__}: {err})"
            else:
                if response.status_code == 200:
                    return self._vectors(response, len(texts))
                reason = f"HTTP {response.status_code}{self._snippet(response)}"
                if response.status_code not in RETRYABLE_STATUS:
                    raise RemoteEmbedderError(self._refused(response))
                if response.status_code in (429, 503):
                    wait = retry_after_s(response.headers.get("retry-after"))
            failures += 1
            if failures >= policy.max_attempts:
                raise RemoteEmbedderError(
                    redact(
                        f"the {self._spec.provider} embedder at {self._spec.endpoint} failed "
                        f"{failures} times in a row; the last answer: {reason}",
                        self._key,
                    )
                )
            policy.sleep(policy.delay_s(failures, wait))

    def _open(self) -> httpx2.Client:
        import httpx2

        with self._lock:
            if self._client is None:
                self._key = self._spec.read_key()
                headers = {"User-Agent": "engine (code search)"}
                if self._key:
                    headers["Authorization"] = f"Bearer {self._key}"
                self._client = httpx2.Client(
                    headers=headers, timeout=self._timeout_s, follow_redirects=False
                )
            return self._client

    def _body(self, texts: list[str], input_type: str) -> dict[str, Any]:
        spec = self._spec
        body: dict[str, Any] = {"model": spec.model, "input": texts}
        if spec.provider == "voyage":
            body["input_type"] = input_type
            body["truncation"] = True
            if spec.requested_dim:
                body["output_dimension"] = spec.requested_dim
        else:
            body["encoding_format"] = "float"
            if spec.requested_dim:
                body["dimensions"] = spec.requested_dim
        return body

    def _vectors(self, response: httpx2.Response, count: int) -> FloatMatrix:
        try:
            data = response.json()["data"]
            items = sorted(data, key=lambda item: int(item.get("index", 0)))
            rows = [item["embedding"] for item in items]
            matrix = np.asarray(rows, dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise RemoteEmbedderError(
                f"the {self._spec.provider} embedder at {self._spec.endpoint} answered "
                f"something other than embeddings ({type(err).__name__})"
            ) from None
        if matrix.ndim != 2 or matrix.shape[0] != count or matrix.shape[1] == 0:
            raise RemoteEmbedderError(
                f"the {self._spec.provider} embedder at {self._spec.endpoint} returned "
                f"{matrix.shape[0] if matrix.ndim else 0} vectors for {count} texts"
            )
        if self._dim is not None and matrix.shape[1] != self._dim:
            raise RemoteEmbedderError(
                f"the {self._spec.provider} embedder at {self._spec.endpoint} now returns "
                f"{matrix.shape[1]}-dimensional vectors, but this index holds {self._dim}; "
                "run engine reindex to re-embed with its current model"
            )
        if not np.isfinite(matrix).all():
            raise RemoteEmbedderError(
                f"the {self._spec.provider} embedder at {self._spec.endpoint} returned "
                "vectors with NaN or infinite values"
            )
        # OpenAI's vectors are unit length already; a local server's need not be.
        return l2_normalise(matrix)

    def _refused(self, response: httpx2.Response) -> str:
        spec = self._spec
        status = response.status_code
        if status in (401, 403):
            fix = f"check the key in ${spec.key_env}"
        elif status == 404:
            fix = f"check --embedder-url (requests go to {spec.endpoint}) and the model name"
        else:
            fix = "check --embedder-model and --embedder-dim"
        return redact(
            f"the {spec.provider} embedder at {spec.endpoint} refused the request "
            f"(HTTP {status}{self._snippet(response)}): {fix}",
            self._key,
        )

    def _snippet(self, response: httpx2.Response) -> str:
        text = _CONTROL.sub(" ", response.text).strip()[:200]
        return f": {redact(text, self._key)}" if text else ""


def batches(texts: Sequence[str], max_texts: int, max_chars: int) -> Iterator[range]:
    """Consecutive ranges of ``texts``, each at most ``max_texts`` long and (unless one text
    alone is longer) at most ``max_chars`` characters after clipping."""
    start = 0
    while start < len(texts):
        end, size = start, 0
        while end < len(texts) and end - start < max_texts:
            length = min(len(texts[end]), MAX_TEXT_CHARS)
            if end > start and size + length > max_chars:
                break
            size += length
            end += 1
        yield range(start, end)
        start = end


def _clipped(text: str) -> str:
    # An empty input is an error to OpenAI's API; a document is never empty, a query may be.
    return text[:MAX_TEXT_CHARS] or " "


def remote_model_meta(spec: RemoteSpec, dim: int) -> dict[str, Any]:
    """The index meta's "model" for a remote embedder: the loader's fields plus the spec."""
    return {
        "backend": REMOTE,
        "model_id": spec.model_id(dim),
        "name": spec.display_name,
        "path": "",
        "bundled": False,
        "weights_sha256": "",
        "config_sha256": "",
        "dim": dim,
        "max_seq_length": 0,
        "precision": "",  # not the local model's: switching back uses the local default
        "document_tokens": 0,
        "remote": spec.to_meta(),
    }


_QUERY_EMBEDDERS: dict[tuple[RemoteSpec, int], RemoteEmbedder] = {}
_QUERY_EMBEDDERS_LOCK = threading.Lock()


def query_embedder(meta: Any) -> RemoteEmbedder:
    """The embedder a remote index's queries use: the recorded spec and size, no request.

    One per spec and process, as loader.py keeps one ONNX session: a server opens a new
    generation after every reindex, and each embedder holds a pool of connections."""
    key = (RemoteSpec.from_meta(meta.get("remote") or {}), int(meta["dim"]))
    with _QUERY_EMBEDDERS_LOCK:
        embedder = _QUERY_EMBEDDERS.get(key)
        if embedder is None:
            embedder = RemoteEmbedder(*key, timeout_s=QUERY_TIMEOUT_S)
            _QUERY_EMBEDDERS[key] = embedder
        return embedder
