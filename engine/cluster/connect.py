"""Joining a Ray cluster (to build or to search), with a clear error when it cannot be reached.

``ray.init(address=...)`` keeps retrying an unreachable head for minutes, printing warnings;
a TCP probe of the head's port first turns that into one sentence. ``local`` starts a Ray
instance on this machine instead (one machine, every core). Ray 2.60 turns on token
authentication: the token reaches the driver through Ray's own environment and files (see
the README's "Tokens and security"); nothing here reads, prints or logs it.
"""

from __future__ import annotations

import logging
import socket
import sys

from engine.errors import UsageError

LOCAL = "local"
PROBE_TIMEOUT_S = 5.0
DEFAULT_PORT = 6379  # the GCS port ``ray start --head`` listens on


def head_endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of a ``HOST[:PORT]`` address; None for addresses Ray resolves itself
    (``auto``, ``ray://`` client addresses)."""
    if address == "auto" or "://" in address:
        return None
    host, _, port = address.rpartition(":")
    if not host:
        return address, DEFAULT_PORT
    if not port.isdigit():
        raise UsageError(f"--cluster {address}: expected HOST:PORT, 'auto' or 'local'")
    return host, int(port)


def probe(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """UsageError, saying what to check, when nothing listens at the head's address."""
    endpoint = head_endpoint(address)
    if endpoint is None:
        return
    try:
        socket.create_connection(endpoint, timeout=timeout_s).close()
    except OSError as exc:
        raise UsageError(
            f"cannot reach a Ray cluster at {address} ({exc.strerror or exc}) — start one "
            "with `ray start --head` on the head node and give its HOST:PORT, or use "
            "--cluster local to run on this machine"
        ) from None


def connect(address: str) -> None:
    """Connect this process to the cluster at ``address`` (``local``: start one here); a
    process already connected keeps its connection."""
    already = sys.modules.get("ray")
    if already is not None and already.is_initialized():
        return
    if address != LOCAL:
        probe(address)  # before the second it takes to import Ray
    try:
        import ray
    except ImportError:
        raise UsageError(
            "--cluster needs the cluster extra: pip install 'engine[cluster]'"
        ) from None

    if address == LOCAL:
        ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    else:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
