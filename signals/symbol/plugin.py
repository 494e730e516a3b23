"""The symbol signal's registry entry."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import UsageError
from engine.signal import IndexOptions, OpenOptions, Signal, SignalBuilder, SignalPlugin
from engine.types import SYMBOL


def _builder(options: IndexOptions) -> SignalBuilder:
    from signals.symbol.builder import SymbolBuilder

    return SymbolBuilder(options)


def _open(directory: Path, meta: Mapping[str, Any], options: OpenOptions) -> Signal:
    del meta, options
    from signals.symbol.search import SymbolSignal

    return SymbolSignal.open(directory)


def _check(directory: Path, meta: Mapping[str, Any]) -> None:
    """``SignalPlugin.check``: the table's open, which reads its meta and ranking arrays."""
    del meta
    from signals.symbol.table import SymbolTable

    SymbolTable.open(directory).close()


def _check_options(options: IndexOptions) -> None:
    """A ``--scip`` file must be a SCIP index with documents: otherwise it would be left out
    with a problem line, and the symbol signal built from tree-sitter alone. The file is read
    twice (here and by the builder); what matters is failing before anything is written."""
    if options.scip_file is None:
        return
    from scip.errors import ScipError
    from scip.reader import read_index

    fix = "give an index.scip written by a SCIP indexer (e.g. scip-python), or leave --scip out"
    try:
        index = read_index(options.scip_file)
    except ScipError as exc:
        raise UsageError(f"--scip: {exc} — {fix}") from None
    if index.is_empty:
        raise UsageError(f"--scip: {options.scip_file} holds no documents — {fix}")


PLUGIN = SignalPlugin(
    name=SYMBOL, make_builder=_builder, open=_open, check_options=_check_options, check=_check
)
