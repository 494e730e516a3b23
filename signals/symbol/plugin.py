"""The symbol signal's registry entry."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.signal import IndexOptions, OpenOptions, Signal, SignalBuilder, SignalPlugin
from engine.types import SYMBOL


def _builder(options: IndexOptions) -> SignalBuilder:
    from signals.symbol.builder import SymbolBuilder

    return SymbolBuilder(options)


def _open(directory: Path, meta: Mapping[str, Any], options: OpenOptions) -> Signal:
    del meta, options
    from signals.symbol.search import SymbolSignal

    return SymbolSignal.open(directory)


PLUGIN = SignalPlugin(name=SYMBOL, make_builder=_builder, open=_open)
