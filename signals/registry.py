"""The signal registry: every signal the engine can build and search, by name.

A new signal is one module exposing a ``SignalPlugin`` and one entry here. Importing this
module imports no backend library; plugins import theirs when called.
"""

from __future__ import annotations

from engine.signal import SignalPlugin
from signals.lexical.plugin import PLUGIN as LEXICAL_PLUGIN


def plugins() -> dict[str, SignalPlugin]:
    """All registered signals in their fusion order (fast builders before slow ones)."""
    found = [LEXICAL_PLUGIN]
    return {p.name: p for p in found}
