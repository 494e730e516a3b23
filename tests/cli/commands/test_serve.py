"""``engine serve``: watching is on by default and ``--no-watch`` turns it off."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

import cli.serve.server
from cli.main import main
from cli.serve.watching import SERVE_WATCH


@pytest.mark.parametrize(("args", "expected"), [([], SERVE_WATCH), (["--no-watch"], None)])
def test_no_watch_turns_the_watchers_off(
    monkeypatch: pytest.MonkeyPatch, args: list[str], expected: Any
) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(cli.serve.server, "serve", lambda **kw: calls.append(kw.get("watch")))
    result = CliRunner().invoke(main, ["serve", *args])
    assert result.exit_code == 0, result.output
    assert calls == [expected]
