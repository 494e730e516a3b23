"""The signal registry: every signal the engine can build and search, by name.

A new signal is one module exposing a ``SignalPlugin`` and one entry here. Importing this
module imports no backend library; plugins import theirs when called.
"""

from __future__ import annotations

from engine.signal import SignalPlugin
from signals.lexical.plugin import PLUGIN as LEXICAL_PLUGIN
from signals.symbol.plugin import PLUGIN as SYMBOL_PLUGIN
from signals.vector.plugin import PLUGIN as VECTOR_PLUGIN


def plugins() -> dict[str, SignalPlugin]:
    """All registered signals, in the order results list their sources."""
    found = [LEXICAL_PLUGIN, VECTOR_PLUGIN, SYMBOL_PLUGIN]
    return {p.name: p for p in found}
