"""Joining a cluster: addresses, an unreachable head as one sentence, no usage statistics."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from engine.cluster.connect import DEFAULT_PORT, head_endpoint, probe
from engine.errors import UsageError


def test_addresses_name_the_head_or_leave_it_to_ray() -> None:
    assert head_endpoint("10.0.0.5:6380") == ("10.0.0.5", 6380)
    assert head_endpoint("head") == ("head", DEFAULT_PORT)
    assert head_endpoint("auto") is None and head_endpoint("ray://head:10001") is None
    with pytest.raises(UsageError, match="expected HOST:PORT"):
        head_endpoint("head:port")


def test_an_unreachable_head_is_one_sentence_naming_the_fix() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(UsageError, match=r"cannot reach a Ray cluster at .* `ray start --head`"):
        probe(f"127.0.0.1:{port}", timeout_s=1.0)


def test_ray_instances_the_engine_starts_report_no_usage_statistics() -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAY_USAGE_STATS_ENABLED"}
    code = "import os, engine.cluster; print(os.environ['RAY_USAGE_STATS_ENABLED'])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "0"


def test_the_cli_deadline_default_is_the_routers() -> None:
    from cli.invocation import DEFAULT_DEADLINE_MS
    from engine.cluster.search_router import DEFAULT_DEADLINE_MS as ROUTER_DEFAULT

    assert DEFAULT_DEADLINE_MS == ROUTER_DEFAULT
