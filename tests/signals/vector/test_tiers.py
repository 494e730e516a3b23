"""The vector signal's tiers (signals/vector/tiers.py), with a fake embedder per tier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.signal import BuildJob, BuildReport, IndexOptions
from signals.vector.builder import VectorBuilder
from signals.vector.embedder import HashingEmbedder
from signals.vector.loader import LoadedModel
from signals.vector.meta import EmbedSettings
from signals.vector.tiers import TieredVectorBuilder
from tests.fakes import CHUNKS, FakeChunkSource, Generations, fake_loader, fake_tiered_builder


def weighed_loader(embedder: HashingEmbedder, weights_sha256: str) -> Any:
    """fake_loader, posing as a model whose weights have the given hash."""
    inner = fake_loader(embedder)

    def load(options: IndexOptions, embed: EmbedSettings) -> LoadedModel:
        loaded = inner(options, embed)
        return LoadedModel(loaded.embedder, {**loaded.meta, "weights_sha256": weights_sha256})

    return load


class FirstTierOnly:
    """A SignalBuilder whose build is ``build_first_tier`` (for Generations.build)."""

    name = "vector"
    slow = True

    def __init__(self, inner: TieredVectorBuilder) -> None:
        self.inner = inner

    def build(self, job: BuildJob) -> BuildReport:
        report = self.inner.build_first_tier(job)
        assert report is not None
        return report


def first_tier(builder: TieredVectorBuilder, generations: Generations) -> Any:
    """Like Generations.build, through build_first_tier."""
    return generations.build(FirstTierOnly(builder), FakeChunkSource(CHUNKS), CHUNKS)


def test_the_first_tier_is_static_and_not_complete_by_default(tmp_path: Path) -> None:
    fast = HashingEmbedder(32, model_id="fake-static-32")
    builder = fake_tiered_builder(IndexOptions(home=tmp_path), fast=fast)
    _, report = first_tier(builder, Generations(tmp_path))
    assert report.ready and not report.complete
    assert report.meta["tier"] == "fast" and report.meta["dim"] == 32
    assert report.meta["tiers"] == {"fast": 1.0, "full": 0.0}
    assert fast.embedded_texts == len(CHUNKS)


def test_a_full_previous_index_is_carried_forward_not_rebuilt_fast(tmp_path: Path) -> None:
    builder = fake_tiered_builder(IndexOptions(home=tmp_path))
    generations = Generations(tmp_path)
    generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)  # the full tier
    assert generations.previous_meta["tier"] == "full"
    directory = tmp_path / "next"
    directory.mkdir()
    assert builder.build_first_tier(_job(generations, directory)) is None


def test_vectors_fast_makes_the_first_tier_complete(tmp_path: Path) -> None:
    builder = fake_tiered_builder(IndexOptions(home=tmp_path, vectors="fast"))
    _, report = first_tier(builder, Generations(tmp_path))
    assert report.complete and report.meta["vectors"] == "fast"
    assert report.meta["tiers"] == {"fast": 1.0}


def test_switching_tiers_is_a_settings_change(tmp_path: Path) -> None:
    generations = Generations(tmp_path)
    generations.build(
        fake_tiered_builder(IndexOptions(home=tmp_path)), FakeChunkSource(CHUNKS), CHUNKS
    )
    meta = generations.previous_meta
    assert not fake_tiered_builder(IndexOptions(home=tmp_path)).settings_changed(meta)
    assert not fake_tiered_builder(IndexOptions(home=tmp_path, vectors="full")).settings_changed(
        meta
    )
    assert fake_tiered_builder(IndexOptions(home=tmp_path, vectors="fast")).settings_changed(meta)


def test_a_model_hash_change_re_embeds_with_a_clear_message(tmp_path: Path) -> None:
    options = IndexOptions(home=tmp_path)
    generations = Generations(tmp_path)

    def tiered(embedder: HashingEmbedder, sha: str) -> TieredVectorBuilder:
        full = VectorBuilder(options, load_model=weighed_loader(embedder, sha))
        fast = VectorBuilder(options, load_model=fake_loader(HashingEmbedder(32)))
        return TieredVectorBuilder(options, full=full, fast=fast)

    old = HashingEmbedder(64, model_id="model-aaaa")
    generations.build(tiered(old, "a" * 64), FakeChunkSource(CHUNKS), CHUNKS)
    new = HashingEmbedder(64, model_id="model-bbbb")  # other weights: another model id
    _, report = generations.build(tiered(new, "b" * 64), FakeChunkSource(CHUNKS), [])
    assert new.embedded_texts == len(CHUNKS)  # every chunk, not only the added ones
    assert report.message.startswith(
        "the full tier's model changed (weights sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb): "
        "every chunk embedded again"
    )


def _job(generations: Generations, directory: Path) -> Any:
    return BuildJob(
        repo_root=tmp_root(generations),
        directory=directory,
        previous_dir=generations.previous_dir,
        previous_meta=generations.previous_meta,
        added=[],
        removed_ids=[],
        removed_paths=[],
        definitions=[],
        changed_paths=[],
        source=FakeChunkSource(CHUNKS),
    )


def tmp_root(generations: Generations) -> Path:
    return generations.root / "repo"


def test_an_index_from_before_tiers_counts_as_full_and_is_carried_forward(tmp_path: Path) -> None:
    builder = fake_tiered_builder(IndexOptions(home=tmp_path))
    generations = Generations(tmp_path)
    generations.build(builder, FakeChunkSource(CHUNKS), CHUNKS)
    for key in ("tier", "vectors", "tiers"):  # what an index written before tiers lacks
        del generations.previous_meta[key]
    directory = tmp_path / "next"
    directory.mkdir()
    assert builder.build_first_tier(_job(generations, directory)) is None
    assert not builder.settings_changed(generations.previous_meta)


def test_a_fast_generation_keeps_the_remote_embedder_its_full_tier_was_asked_for(
    tmp_path: Path,
) -> None:
    # engine index --embedder openai: the fast tier (always local) is published first; if the
    # remote full pass then fails or is interrupted, a plain reindex must still embed remotely,
    # not fall back to the local model without a word.
    from engine.signal import EmbedderChoice
    from signals.vector.remote_spec import RemoteSpec

    asked: list[RemoteSpec] = []
    remote_embedder = HashingEmbedder(48, model_id="fake-remote-48")

    def load_remote(spec: RemoteSpec) -> LoadedModel:
        asked.append(spec)
        return fake_loader(remote_embedder)(IndexOptions(home=tmp_path), EmbedSettings("fp32", 256))

    def tiered(options: IndexOptions) -> TieredVectorBuilder:
        return TieredVectorBuilder(
            options,
            full=VectorBuilder(
                options, load_model=fake_loader(HashingEmbedder(64)), load_remote=load_remote
            ),
            fast=VectorBuilder(  # always local, as TieredVectorBuilder makes its own
                IndexOptions(home=options.home),
                load_model=fake_loader(HashingEmbedder(32, model_id="fake-static-32")),
            ),
        )

    choice = EmbedderChoice("openai", url="http://127.0.0.1:9/v1", model="code-model")
    generations = Generations(tmp_path)
    _, fast = first_tier(tiered(IndexOptions(home=tmp_path, embedder=choice)), generations)
    assert fast.meta["tier"] == "fast" and fast.meta["full_embedder"]["backend"] == "remote"
    assert asked == []  # the fast tier never sends code anywhere

    # The later plain reindex: no --embedder, the previous generation is the fast one.
    _, full = generations.build(
        tiered(IndexOptions(home=tmp_path)), FakeChunkSource(CHUNKS), CHUNKS
    )
    assert [spec.model for spec in asked] == ["code-model"]
    assert full.meta["tier"] == "full" and full.meta["dim"] == 48
