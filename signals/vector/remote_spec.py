"""Which remote embedder an index uses, as recorded in its meta, and what the user must hear.

A remote embedder is named by a ``RemoteSpec``: the provider's API shape (``openai`` for any
OpenAI-compatible ``/embeddings`` endpoint, which Ollama, text-embeddings-inference and vLLM
serve too; ``voyage`` for Voyage's API), the base URL, the model, the vector size and the
*name* of the environment variable holding the key. The spec is what the index records, so
``engine reindex`` and every query reuse it; the key itself is read from the environment
when needed and is never recorded, logged or put in a message (``redact``).

This module imports no HTTP client: a query process pays for one only when it embeds.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from engine.errors import SignalUnavailable, UsageError
from engine.signal import EmbedderChoice

RemoteProvider = Literal["openai", "voyage"]
REMOTE: Final = "remote"  # the "backend" of a remote index's model meta


@dataclass(frozen=True, slots=True)
class ProviderDefaults:
    url: str
    model: str
    key_env: str


DEFAULTS: Final[Mapping[RemoteProvider, ProviderDefaults]] = {
    "openai": ProviderDefaults(
        "https://api.openai.com/v1", "text-embedding-3-small", "OPENAI_API_KEY"
    ),
    "voyage": ProviderDefaults("https://api.voyageai.com/v1", "voyage-code-3", "VOYAGE_API_KEY"),
}


class RemoteEmbedderError(SignalUnavailable):
    """The remote endpoint could not give vectors (down, refusing, rate-limited past every
    retry, answering nonsense). Its message never holds the key."""


@dataclass(frozen=True, slots=True)
class RemoteSpec:
    provider: RemoteProvider
    url: str  # base URL without a trailing slash; requests go to url + "/embeddings"
    model: str
    key_env: str  # the environment variable's name, never its value
    key_env_given: bool  # named by the user: then a missing variable is an error
    requested_dim: int | None  # asked of the endpoint (OpenAI "dimensions", Voyage
    # "output_dimension"); None: the model's own size

    @property
    def endpoint(self) -> str:
        return f"{self.url}/embeddings"

    @property
    def display_name(self) -> str:
        return f"{self.model} ({self.provider} at {self.url}, remote)"

    def model_id(self, dim: int) -> str:
        """The identity of this embedder's vectors, which keys the embedding cache: provider,
        endpoint, model and size, so that remote and local vectors (or two servers' vectors
        for one model name) never mix."""
        where = hashlib.sha256(self.url.encode()).hexdigest()[:12]
        return f"remote-{self.provider}-{where}/{self.model}/{dim}"

    def key_required(self) -> bool:
        """The provider's own API always wants a key; a server of the user's own (Ollama, a
        local text-embeddings-inference) usually wants none, unless the user names one."""
        return self.key_env_given or self.url == DEFAULTS[self.provider].url

    def read_key(self) -> str | None:
        """The key from the environment; RemoteEmbedderError when one is required but unset."""
        key = os.environ.get(self.key_env) or None
        if key is None and self.key_required():
            raise RemoteEmbedderError(
                f"the {self.provider} embedder needs an API key in the environment variable "
                f"{self.key_env}, which is not set"
            )
        return key

    def to_meta(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "url": self.url,
            "model": self.model,
            "key_env": self.key_env,
            "key_env_given": self.key_env_given,
            "requested_dim": self.requested_dim,
        }

    @classmethod
    def from_meta(cls, data: Mapping[str, Any]) -> RemoteSpec:
        provider = data.get("provider")
        if provider != "openai" and provider != "voyage":
            raise SignalUnavailable(
                f"the vector index names an unknown remote embedder {provider!r}; "
                "run `engine index` again"
            )
        dim = data.get("requested_dim")
        return cls(
            provider=provider,
            url=str(data["url"]),
            model=str(data["model"]),
            key_env=str(data["key_env"]),
            key_env_given=bool(data.get("key_env_given")),
            requested_dim=int(dim) if dim else None,
        )


def spec_from_choice(choice: EmbedderChoice) -> RemoteSpec:
    """The spec of a remote ``--embedder`` choice; UsageError when its URL cannot be used."""
    if choice.provider == "local":
        raise ValueError("the local embedder has no remote spec")
    defaults = DEFAULTS[choice.provider]
    return RemoteSpec(
        provider=choice.provider,
        url=_base_url(choice.url or defaults.url),
        model=choice.model or defaults.model,
        key_env=choice.key_env or defaults.key_env,
        key_env_given=choice.key_env is not None,
        requested_dim=choice.dim,
    )


def _base_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--embedder-url {url!r} is not an http(s) URL")
    if parts.username or parts.password or parts.query:
        # The URL is recorded in the index and shown by status: a secret in it would be too.
        raise UsageError(
            "--embedder-url must not carry credentials or a query string; "
            "put the key in an environment variable (--embedder-key-env NAME)"
        )
    path = parts.path.rstrip("/")
    path = path.removesuffix("/embeddings")  # the endpoint itself, given for its base
    return f"{parts.scheme}://{parts.netloc}{path}"


def check_remote_choice(choice: EmbedderChoice, *, model: str | None) -> None:
    """UsageError, before anything is written or sent, for a remote choice that cannot work."""
    if model is not None:
        raise UsageError(
            f"--model names a local model folder; it does not go with --embedder {choice.provider}"
        )
    spec = spec_from_choice(choice)
    try:
        spec.read_key()
    except RemoteEmbedderError as exc:
        hint = "" if choice.key_env else " (or name the variable with --embedder-key-env NAME)"
        raise UsageError(f"--embedder {choice.provider}: {exc}{hint}") from None


def remote_spec_for(
    choice: EmbedderChoice | None, recorded_model: Mapping[str, Any] | None
) -> RemoteSpec | None:
    """The remote embedder to build with: the user's choice, else the index's recorded one
    (``engine reindex`` keeps it); None for the local model."""
    if choice is not None:
        return None if choice.provider == "local" else spec_from_choice(choice)
    if recorded_model and recorded_model.get("backend") == REMOTE:
        return RemoteSpec.from_meta(recorded_model.get("remote") or {})
    return None


def leaves_machine_warning(spec: RemoteSpec) -> str:
    """The warning every index run with a remote embedder prints."""
    return (
        f"the vector signal sends the text of every chunk (your code) to {spec.endpoint} "
        f"({spec.provider}, model {spec.model}), and the text of every query searched with "
        f"this index: code leaves this machine. The key is read from ${spec.key_env} and "
        "never stored; engine index PATH --embedder local keeps everything here"
    )


def redact(text: str, key: str | None) -> str:
    """``text`` with every occurrence of the key (and of the key's tail, which some APIs
    echo as "sk-...abcd") replaced, for messages built from a server's answer."""
    if not key:
        return text
    text = text.replace(key, "[key]")
    if len(key) >= 12:
        text = text.replace(key[-6:], "[key]")
    return text


def embedder_summary(model_meta: Mapping[str, Any]) -> dict[str, Any]:
    """What ``engine status`` shows of the embedder an index uses (never the key)."""
    if model_meta.get("backend") != REMOTE:
        return {"provider": "local", "model": model_meta.get("name", ""), "remote": False}
    spec = model_meta.get("remote") or {}
    return {
        "provider": spec.get("provider"),
        "model": spec.get("model"),
        "url": spec.get("url"),
        "dim": model_meta.get("dim"),
        "keyEnv": spec.get("key_env"),
        "remote": True,
    }
