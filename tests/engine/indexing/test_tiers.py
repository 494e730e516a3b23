"""The indexer with a tiered slow signal: the vector signal's static tier answers first.

Every embedder here is a fake (tests/fakes.py): the full tier's (MiniLM's stand-in, 64
dimensions) is wrapped to act at a chosen point of the background pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.errors import BuildAborted, IndexBusy, RepoNotFound
from engine.index.generations import current_generation
from engine.index.home import Home
from engine.index.manifest import read_manifest
from engine.index.opening import open_index
from engine.indexing.build_progress import PROGRESS_FILE
from engine.indexing.indexer import Indexer
from engine.indexing.status import repo_status
from engine.signal import IndexOptions, OpenOptions, SignalBuilder, SignalPlugin, VectorTier
from signals import registry
from signals.vector.embedder import FloatMatrix, HashingEmbedder
from tests.fakes import fake_tiered_builder


class HookedEmbedder(HashingEmbedder):
    """The full tier's fake: calls ``hook`` before each batch it embeds."""

    def __init__(self, hook: Callable[[int], None]) -> None:
        super().__init__(64)
        self.hook = hook

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        self.hook(self.calls)
        return super().embed_documents(texts)


def plugins_with(full: HashingEmbedder) -> dict[str, SignalPlugin]:
    plugins = registry.plugins()  # the fake registry (tests/conftest.py)

    def builder(options: IndexOptions) -> SignalBuilder:
        tiered = fake_tiered_builder(options, full=full)
        for inner in (tiered._full, tiered._fast):
            inner._batch_size = 2  # several batches, so a pass can be cut in the middle
        return tiered

    plugins["vector"] = dataclasses.replace(plugins["vector"], make_builder=builder)
    return plugins


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "toy"
    (root / "pkg").mkdir(parents=True)
    for n in range(6):
        (root / "pkg" / f"mod{n}.py").write_text(
            f"def parse_request_{n}(req):\n    return req.body\n\n\n"
            f"def connect_database_{n}(url):\n    return url\n"
        )
    (root / "tests").mkdir()
    (root / "tests" / "test_mod.py").write_text("def test_parse():\n    assert True\n")
    return root


def vector_state(home: Home) -> Any:
    generation = current_generation(home.repo_dir("toy"))
    assert generation is not None
    return read_manifest(generation).signal("vector")


def tiers_answering(home: Home, plugins: dict[str, SignalPlugin]) -> dict[str, str]:
    opened = open_index(home, "toy", plugins, OpenOptions(home=home.root))
    try:
        response = opened.searcher.search("parse request body", limit=5)
    finally:
        opened.close()
    return {run.signal: run.tier for run in response.runs}


def index(home: Home, plugins: dict[str, SignalPlugin], root: Path, **options: Any) -> Any:
    return Indexer(home, plugins, IndexOptions(home=home.root, **options)).index("toy", root)


def test_queries_during_background_embedding_answer_from_the_fast_tier(
    tmp_path: Path, repo: Path
) -> None:
    home = Home(tmp_path / "home")
    seen: list[dict[str, str]] = []
    states: list[Any] = []

    def during(calls: int) -> None:
        if calls == 0:  # the full pass has begun: the fast generation is published
            seen.append(tiers_answering(home, plugins))
            states.append(vector_state(home))

    plugins = plugins_with(HookedEmbedder(during))
    report = index(home, plugins, repo)
    assert seen == [{"lexical": "", "vector": "fast", "symbol": ""}]
    assert states[0].ready and not states[0].synced
    assert states[0].meta["tier"] == "fast" and states[0].meta["vectors"] == "full"
    assert states[0].message.startswith("fast tier built")
    # Done: the full tier replaced the static one, and answers say so.
    assert report.signals["vector"].meta["tier"] == "full"
    assert tiers_answering(home, plugins)["vector"] == "full"
    assert vector_state(home).synced


def test_an_interrupted_full_pass_leaves_the_fast_tier_and_the_next_run_resumes(
    tmp_path: Path, repo: Path
) -> None:
    home = Home(tmp_path / "home")

    def interrupt(calls: int) -> None:
        if calls == 2:
            raise KeyboardInterrupt

    cut = HookedEmbedder(interrupt)
    with pytest.raises(KeyboardInterrupt):
        index(home, plugins_with(cut), repo)
    state = vector_state(home)
    assert state.ready and not state.synced and state.meta["tier"] == "fast"
    assert tiers_answering(home, plugins_with(HashingEmbedder(64)))["vector"] == "fast"
    embedded_before = cut.embedded_texts  # two batches of 2, cached; the third never ran
    assert embedded_before == 4

    resumed = HashingEmbedder(64)
    report = Indexer(home, plugins_with(resumed), IndexOptions(home=home.root)).reindex("toy")
    assert not report.up_to_date  # the vector signal was not synced
    total = report.chunks
    assert resumed.embedded_texts == total - embedded_before  # the cache kept the rest
    assert vector_state(home).meta["tier"] == "full" and vector_state(home).synced


def test_definitions_of_implementation_are_embedded_first(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signals.vector.builder

    monkeypatch.setattr(signals.vector.builder, "_SORT_BATCHES", 1)  # no reordering by length
    home = Home(tmp_path / "home")
    order: list[str] = []

    class Recording(HashingEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
            order.extend(texts)
            return super().embed_documents(texts)

    index(home, plugins_with(Recording(64)), repo)
    assert "test_parse" in order[-1]  # the test file's definition comes last


@pytest.mark.parametrize("choice", ["fast", None])
def test_vectors_fast_is_the_only_tier_and_reindex_keeps_it(
    tmp_path: Path, repo: Path, choice: VectorTier | None
) -> None:
    home = Home(tmp_path / "home")
    full = HashingEmbedder(64)
    index(home, plugins_with(full), repo, vectors="fast")
    state = vector_state(home)
    assert state.synced and state.meta["tier"] == "fast" and state.meta["vectors"] == "fast"
    (repo / "pkg" / "mod0.py").write_text("def renamed(req):\n    return req\n")
    Indexer(home, plugins_with(full), IndexOptions(home=home.root, vectors=choice)).reindex("toy")
    assert vector_state(home).meta["tier"] == "fast"
    assert full.embedded_texts == 0  # MiniLM's stand-in never ran
    # Asking for the full tier switches, with no file changed.
    report = Indexer(
        home, plugins_with(full), IndexOptions(home=home.root, vectors="full")
    ).reindex("toy")
    assert not report.up_to_date and vector_state(home).meta["tier"] == "full"


def test_status_reports_each_tiers_coverage(tmp_path: Path, repo: Path) -> None:
    home = Home(tmp_path / "home")
    during: list[dict[str, Any]] = []

    def hook(calls: int) -> None:
        if calls == 0:
            during.append(repo_status(home, "toy")["signals"]["vector"])

    plugins = plugins_with(HookedEmbedder(hook))
    index(home, plugins, repo)
    assert during[0]["tier"] == "fast"
    assert during[0]["tiers"] == {"fast": 1.0, "full": 0.0}
    done = repo_status(home, "toy")["signals"]["vector"]
    assert done["tier"] == "full" and done["tiers"] == {"full": 1.0}


def test_status_shows_how_far_the_background_pass_got(tmp_path: Path, repo: Path) -> None:
    home = Home(tmp_path / "home")
    during: list[dict[str, Any]] = []

    def hook(calls: int) -> None:
        if calls == 1:  # the pass is under way
            during.append(repo_status(home, "toy"))

    index(home, plugins_with(HookedEmbedder(hook)), repo)
    building = during[0]["building"]
    assert building["stage"] == "embedding" and building["total"] == 13
    assert 0 <= building["done"] < 13  # written at most once a second
    assert "building" not in repo_status(home, "toy")  # published: nothing runs any more


class FirstTierEmbedder(HashingEmbedder):
    """The fast tier's fake: raises ``error`` when asked to embed."""

    def __init__(self, error: Exception) -> None:
        super().__init__(32, model_id="fake-static-32")
        self.error = error

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        raise self.error


def plugins_with_fast(fast: HashingEmbedder) -> dict[str, SignalPlugin]:
    plugins = registry.plugins()
    plugins["vector"] = dataclasses.replace(
        plugins["vector"], make_builder=lambda options: fake_tiered_builder(options, fast=fast)
    )
    return plugins


def test_an_abort_during_the_first_tier_stops_the_build_and_publishes_nothing(
    tmp_path: Path, repo: Path
) -> None:
    home = Home(tmp_path / "home")
    with pytest.raises(BuildAborted):
        index(home, plugins_with_fast(FirstTierEmbedder(BuildAborted("stop"))), repo)
    assert current_generation(home.repo_dir("toy")) is None


def test_a_failing_first_tier_is_a_problem_and_the_full_pass_still_runs(
    tmp_path: Path, repo: Path
) -> None:
    home = Home(tmp_path / "home")
    report = index(home, plugins_with_fast(FirstTierEmbedder(RuntimeError("no table"))), repo)
    assert any("first tier failed: RuntimeError: no table" in p for p in report.problems)
    assert report.signals["vector"].ready and report.signals["vector"].meta["tier"] == "full"


class HookedFastEmbedder(HashingEmbedder):
    """The fast tier's fake: calls ``hook`` before embedding (still in the first build)."""

    def __init__(self, hook: Callable[[], None]) -> None:
        super().__init__(32, model_id="fake-static-32")
        self.hook = hook

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        self.hook()
        return super().embed_documents(texts)


def test_a_first_index_being_built_says_so_and_how_far_it_got(tmp_path: Path, repo: Path) -> None:
    home = Home(tmp_path / "home")
    during: list[dict[str, Any]] = []
    refused: list[str] = []

    def hook() -> None:
        if during:
            return
        during.append(repo_status(home, "toy"))
        with pytest.raises(IndexBusy) as busy:
            open_index(home, "toy", registry.plugins(), OpenOptions(home=home.root))
        refused.append(str(busy.value))

    index(home, plugins_with_fast(HookedFastEmbedder(hook)), repo)
    first = during[0]
    assert first["firstBuild"] and first["generation"] is None
    assert first["building"]["stage"] and first["building"]["total"] >= first["building"]["done"]
    assert "being indexed for the first time" in refused[0] and "engine status toy" in refused[0]
    generation = current_generation(home.repo_dir("toy"))
    assert generation is not None and not (generation / PROGRESS_FILE).exists()
    assert "firstBuild" not in repo_status(home, "toy")


def test_a_registered_repository_with_no_build_running_still_says_to_reindex(
    tmp_path: Path, repo: Path
) -> None:
    home = Home(tmp_path / "home")
    home.register("toy", repo)
    with pytest.raises(RepoNotFound, match="run engine reindex toy"):
        repo_status(home, "toy")
