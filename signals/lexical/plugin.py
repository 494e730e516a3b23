"""The lexical signal's registry entry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.signal import IndexOptions, OpenOptions, Signal, SignalBuilder, SignalPlugin
from engine.types import LEXICAL, ChunkDraft


def _builder(options: IndexOptions) -> SignalBuilder:
    del options
    from signals.lexical.builder import LexicalBuilder

    return LexicalBuilder()


def _open(directory: Path, meta: Mapping[str, Any], options: OpenOptions) -> Signal:
    del meta, options
    from signals.lexical.search import LexicalSignal

    return LexicalSignal.open(directory)


def _check(directory: Path, meta: Mapping[str, Any]) -> None:
    """``SignalPlugin.check``: the open itself, which costs under a millisecond."""
    del meta
    from signals.lexical.search import LexicalSignal

    LexicalSignal.open(directory)


def _analyze(drafts: Sequence[ChunkDraft]) -> Sequence[Any]:
    from signals.lexical.schema import analyze

    return analyze(drafts)


PLUGIN = SignalPlugin(
    name=LEXICAL, make_builder=_builder, open=_open, analyze=_analyze, check=_check
)
