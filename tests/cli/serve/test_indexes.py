from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import cast

import pytest

from cli.serve.indexes import IndexCache
from engine.errors import RepoNotFound
from engine.index.home import Home
from engine.index.opening import OpenIndex

HANG_GUARD_S = 60.0  # fails a test that would otherwise hang; not a speed check


class FakeOpen:
    """Stands in for ``OpenIndex``: the generation it was opened at, and whether it closed."""

    def __init__(self, generation: Path) -> None:
        self.generation = generation
        self.closed = False

    def close(self) -> None:
        assert not self.closed, "closed twice"
        self.closed = True

    def is_closed(self) -> bool:  # a call, so that mypy does not narrow between asserts
        return self.closed


class Opener:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.opened: list[FakeOpen] = []
        self.entered = threading.Event()  # set when a call is inside the opener
        self.gate = threading.Event()  # the opener waits for it
        self.gate.set()

    def __call__(self, slug: str) -> OpenIndex:
        self.entered.set()
        self.gate.wait()
        name = (self.home.repo_dir(slug) / "CURRENT").read_text().strip()
        fake = FakeOpen(self.home.repo_dir(slug) / name)
        self.opened.append(fake)
        return cast(OpenIndex, fake)


def publish(home: Home, slug: str, number: int) -> None:
    directory = home.repo_dir(slug)
    (directory / f"gen-{number:06d}").mkdir(parents=True)
    (directory / "CURRENT").write_text(f"gen-{number:06d}\n")


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.register("toy", tmp_path)
    publish(home, "toy", 1)
    return home


def test_an_index_is_opened_once_and_reused(home: Home) -> None:
    opener = Opener(home)
    cache = IndexCache(home, {}, opener=opener)
    for _ in range(5):
        with cache.use("toy") as opened:
            assert opened.generation.name == "gen-000001"
    assert len(opener.opened) == 1
    assert not opener.opened[0].closed


def test_a_published_generation_replaces_the_old_one(home: Home) -> None:
    opener = Opener(home)
    cache = IndexCache(home, {}, opener=opener)
    with cache.use("toy"):
        pass
    publish(home, "toy", 2)
    with cache.use("toy") as opened:
        assert opened.generation.name == "gen-000002"
    old, new = opener.opened
    assert old.closed and not new.closed
    assert cache.generation("toy") == new.generation


def test_an_index_in_use_is_closed_only_after_its_last_call(home: Home) -> None:
    opener = Opener(home)
    cache = IndexCache(home, {}, opener=opener)
    with cache.use("toy"):
        publish(home, "toy", 2)
        with cache.use("toy") as newer:
            assert newer.generation.name == "gen-000002"
        old = opener.opened[0]
        assert not old.is_closed()  # the outer call is still searching it
    assert old.is_closed()
    assert not opener.opened[1].closed


def test_concurrent_first_calls_open_the_index_once(home: Home) -> None:
    opener = Opener(home)
    opener.gate.clear()  # hold the first opener until every thread is waiting
    cache = IndexCache(home, {}, opener=opener)
    seen: list[str] = []

    def search() -> None:
        with cache.use("toy") as opened:
            seen.append(opened.generation.name)

    threads = [threading.Thread(target=search) for _ in range(8)]
    for thread in threads:
        thread.start()
    opener.gate.set()
    for thread in threads:
        thread.join()
    assert seen == ["gen-000001"] * 8
    assert len(opener.opened) == 1


def test_calls_during_a_slow_open_are_served_from_the_previous_generation(home: Home) -> None:
    opener = Opener(home)
    cache = IndexCache(home, {}, opener=opener)
    with cache.use("toy"):
        pass
    publish(home, "toy", 2)
    opener.gate.clear()
    opener.entered.clear()
    opened_new: list[str] = []

    def first_call_after_publish() -> None:
        with cache.use("toy") as opened:
            opened_new.append(opened.generation.name)

    thread = threading.Thread(target=first_call_after_publish)
    thread.start()
    assert opener.entered.wait(HANG_GUARD_S)  # that call is now opening gen-000002
    with cache.use("toy") as meanwhile:
        assert meanwhile.generation.name == "gen-000001"
    opener.gate.set()
    thread.join()
    assert opened_new == ["gen-000002"]
    with cache.use("toy") as opened:
        assert opened.generation.name == "gen-000002"
    assert opener.opened[0].is_closed()


def test_a_removed_repository_is_an_error_and_its_index_is_closed(home: Home) -> None:
    opener = Opener(home)
    cache = IndexCache(home, {}, opener=opener)
    with cache.use("toy"):
        pass
    shutil.rmtree(home.repo_dir("toy"))
    with pytest.raises(RepoNotFound, match="engine index PATH --name toy"), cache.use("toy"):
        pass
    assert opener.opened[0].closed
    assert cache.generation("toy") is None


def test_close_waits_for_calls_in_flight(home: Home) -> None:
    opener = Opener(home)
    cache = IndexCache(home, {}, opener=opener)
    with cache.use("toy"):
        cache.close()
        assert not opener.opened[0].is_closed()
    assert opener.opened[0].is_closed()
