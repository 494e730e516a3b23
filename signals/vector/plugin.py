"""The vector signal's registry entry: ``PLUGIN``, for signals/registry.py to list.

Importing this module is cheap: the builder and the opener import numpy, FAISS and
onnxruntime only when called.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import SignalUnavailable, UsageError
from engine.signal import IndexOptions, OpenOptions, Signal, SignalBuilder, SignalPlugin
from engine.types import VECTOR


def make_builder(options: IndexOptions) -> SignalBuilder:
    from signals.vector.tiers import TieredVectorBuilder

    return TieredVectorBuilder(options)


def open_signal(directory: Path, meta: Mapping[str, Any], options: OpenOptions) -> Signal:
    from signals.vector.signal import open_vector_signal

    return open_vector_signal(directory, meta, options)


def check_signal(directory: Path, meta: Mapping[str, Any]) -> None:
    """``SignalPlugin.check``: the meta this engine writes and whole files, without importing
    numpy or FAISS (``engine status`` stays fast)."""
    from signals.vector.files import VectorFilesDamaged, check_files, unreadable
    from signals.vector.meta import check_meta

    check_meta(meta)
    try:
        check_files(directory)
    except VectorFilesDamaged as err:
        raise unreadable(directory, err) from None


def check_options(options: IndexOptions) -> None:
    """A ``--model`` folder must hold a model: otherwise the index would be built with the
    vector signal off, which the user did not ask for. A remote ``--embedder`` must have a
    usable URL and its key in the environment."""
    if options.embedder is not None and options.embedder.provider != "local":
        from signals.vector.remote_spec import check_remote_choice

        check_remote_choice(options.embedder, model=options.model)
        return
    if options.model is None:
        return  # the bundled model: when it is missing, the builder says how to install it
    from signals.vector.model import resolve_model

    try:
        resolve_model(options.model)
    except SignalUnavailable as exc:
        raise UsageError(f"--model: {exc}") from None


PLUGIN = SignalPlugin(
    name=VECTOR,
    make_builder=make_builder,
    open=open_signal,
    check_options=check_options,
    check=check_signal,
)
