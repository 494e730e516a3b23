"""The remote embedder an index is built with: the spec, and the size one probe tells.

Apart from remote.py so that the loader, which imports remote.py for a remote index's
queries, is not imported back by it.
"""

from __future__ import annotations

from signals.vector.loader import LoadedModel
from signals.vector.remote import RemoteEmbedder, remote_model_meta
from signals.vector.remote_retry import RetryPolicy
from signals.vector.remote_spec import RemoteSpec


def load_remote_model(spec: RemoteSpec, policy: RetryPolicy | None = None) -> LoadedModel:
    """A remote embedder whose vector size the endpoint has just told (one probe request,
    of a fixed text: no code of the user's); RemoteEmbedderError when it cannot answer."""
    embedder = RemoteEmbedder(spec, policy=policy)
    dim = embedder.probe()
    return LoadedModel(embedder, remote_model_meta(spec, dim))
