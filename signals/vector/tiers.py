"""The vector signal's two tiers: static vectors in seconds, then MiniLM's in the background.

A new index (or one whose vectors must all be redone) gets the **fast** tier in the
indexer's fast phase, beside the lexical and symbol signals: every chunk embedded with the
static model distilled from MiniLM (static_model.py), thousands of chunks per second. It is
published ready but not synced, so the slow phase then builds the **full** tier with MiniLM
into the next generation, which replaces it; an interrupt leaves the fast tier answering,
and the next run embeds what is left (the embedding cache keeps what was done).

An index whose previous generation is a full one keeps it while it is updated (carried
forward, as before tiers). ``--vectors fast`` makes the fast tier the only one: its first
tier is complete and no slow phase follows. The choice is recorded in the meta
(``vectors``), so ``engine reindex`` keeps it; ``tier`` says which vectors a generation holds,
and the signal reports it with every answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from engine.signal import BuildJob, BuildReport, IndexOptions, VectorTier
from engine.types import VECTOR
from signals.vector.builder import VectorBuilder
from signals.vector.loader import load_static_model
from signals.vector.remote_spec import REMOTE, remote_spec_for

DEFAULT_TIER: VectorTier = "full"
# Where a fast generation records the remote embedder its full tier is to use, so that a
# reindex after an interrupted or failed remote pass does not fall back to the local model.
FULL_EMBEDDER = "full_embedder"
# Texts per static embed call: model2vec's own batch; 10k stdlib chunks embed in 6.2 s with
# it against 9.7 s in MiniLM's batches of 64 (load ~4).
STATIC_BATCH_SIZE = 1024


class TieredVectorBuilder:
    """``SignalBuilder``, ``TieredBuilder`` and ``ConfiguredBuilder`` of the vector signal:
    one ``VectorBuilder`` per tier. Tests pass builders with fake embedders."""

    def __init__(
        self,
        options: IndexOptions,
        *,
        full: VectorBuilder | None = None,
        fast: VectorBuilder | None = None,
    ) -> None:
        self._options = options
        self._full = full if full is not None else VectorBuilder(options)
        # The fast tier is always local: only the home and the model it is distilled from.
        static_options = IndexOptions(home=options.home, model=options.model)
        self._fast = (
            fast
            if fast is not None
            else VectorBuilder(
                static_options, load_model=load_static_model, batch_size=STATIC_BATCH_SIZE
            )
        )

    @property
    def name(self) -> str:
        return VECTOR

    @property
    def slow(self) -> bool:
        return True

    def build(self, job: BuildJob) -> BuildReport:
        return self._build(job, self.tier_for(job.previous_meta))

    def build_first_tier(self, job: BuildJob) -> BuildReport | None:
        chosen = self.tier_for(job.previous_meta)
        if (
            chosen == "full"
            and job.previous_dir is not None
            and _tier_of(job.previous_meta) == "full"
        ):
            return None  # the full vectors are carried forward and updated in the slow phase
        report = self._build(job, "fast")
        return dataclasses.replace(report, complete=chosen == "fast")

    def settings_changed(self, previous_meta: Mapping[str, Any]) -> bool:
        chosen = self._options.vectors
        if chosen is not None and chosen != previous_meta.get("vectors", DEFAULT_TIER):
            return True
        tier = _tier_of(previous_meta)
        builder = self._fast if tier == "fast" else self._full
        return builder.settings_changed(previous_meta) or source_changed(
            previous_meta, self._options
        )

    def tier_for(self, previous_meta: Mapping[str, Any]) -> VectorTier:
        """What the user asked for, else what the index recorded, else the default."""
        if self._options.vectors is not None:
            return self._options.vectors
        return "fast" if previous_meta.get("vectors") == "fast" else DEFAULT_TIER

    def _build(self, job: BuildJob, tier: VectorTier) -> BuildReport:
        builder = self._fast if tier == "fast" else self._full
        full_embedder = self._full_embedder(job.previous_meta)
        if job.previous_dir is not None and _tier_of(job.previous_meta) != tier:
            # The previous generation holds the other tier's vectors: nothing to update, but
            # the full tier keeps the embedder it was asked for (a remote one, say), which a
            # fast generation records for it.
            job = dataclasses.replace(
                job,
                previous_dir=None,
                previous_meta={"model": full_embedder} if tier == "full" and full_embedder else {},
                added=list(job.source.iter_chunks()),
                removed_ids=(),
                removed_paths=(),
            )
        report = builder.build(job)
        if not report.ready:
            return report
        chosen = self.tier_for(job.previous_meta)
        message = report.message
        if tier == "fast" and chosen == "full":
            message = f"fast tier {message}; MiniLM vectors follow"
        coverage = float(report.meta.get("coverage", 0.0))
        # Each tier's share of the chunks, for `engine status`: the full tier has none until
        # its generation replaces this one.
        tiers = {"fast": coverage, "full": 0.0} if tier != chosen else {tier: coverage}
        meta = {**report.meta, "tier": tier, "vectors": chosen, "tiers": tiers}
        if tier == "fast" and full_embedder:
            meta[FULL_EMBEDDER] = full_embedder
        return dataclasses.replace(
            report, meta=meta, message=model_change(job.previous_meta, meta) + message
        )

    def _full_embedder(self, previous_meta: Mapping[str, Any]) -> dict[str, Any] | None:
        """The remote embedder the full tier builds with, as a model meta records it: the
        user's choice, else what the previous generation recorded (a full one in its model
        meta, a fast one under ``FULL_EMBEDDER``); None for the local model."""
        recorded = (
            previous_meta.get(FULL_EMBEDDER)
            if _tier_of(previous_meta) == "fast"
            else _recorded(previous_meta)
        )
        spec = remote_spec_for(
            self._options.embedder, recorded if isinstance(recorded, Mapping) else None
        )
        return None if spec is None else {"backend": REMOTE, "remote": spec.to_meta()}


def _tier_of(meta: Mapping[str, Any]) -> str:
    """The tier a generation's meta holds; an index from before tiers holds the full one."""
    return str(meta.get("tier", DEFAULT_TIER)) if meta else ""


def model_change(previous: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
    """The first words of a build's message when it re-embedded because the model's weights
    changed; "" otherwise."""
    before, after = _recorded(previous).get("weights_sha256"), _recorded(meta).get("weights_sha256")
    if not before or not after or before == after or _tier_of(previous) != _tier_of(meta):
        return ""
    return (
        f"the {meta.get('tier')} tier's model changed (weights sha256 {str(before)[:12]} -> "
        f"{str(after)[:12]}): every chunk embedded again; "
    )


def source_changed(previous_meta: Mapping[str, Any], options: IndexOptions) -> bool:
    """True when the model folder the index was embedded with now holds other weights (the
    bundled package upgraded, a --model folder rewritten), so that every chunk must be
    embedded again. Weights hashes are cached per file's size and mtime: this costs a stat."""
    recorded = _recorded(previous_meta)
    backend = recorded.get("backend")
    if backend not in ("onnx", "static"):
        return False  # the test fake, a remote embedder: no folder of weights to compare
    field = "source_weights_sha256" if backend == "static" else "weights_sha256"
    from engine.errors import SignalUnavailable
    from signals.vector.model import resolve_model, weights_sha256

    folder = options.model
    if folder is None and not recorded.get("bundled"):
        folder = str(recorded.get("path") or "") or None
    try:
        now = weights_sha256(resolve_model(folder).path, options.home)
    except (SignalUnavailable, OSError):
        return False  # the build says what is missing
    return bool(recorded.get(field)) and now != recorded.get(field)


def _recorded(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    model = meta.get("model")
    return model if isinstance(model, Mapping) else {}
