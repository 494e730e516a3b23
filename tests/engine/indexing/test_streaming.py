"""engine/indexing/streaming.py and the indexer's use of it: a build from empty feeds the streaming
builders while the files are chunked; a failing stream fails its signal only; an interrupt or
a full disk leaves no generation behind."""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.errors import EngineError
from engine.index.generations import current_generation
from engine.index.home import Home
from engine.index.manifest import read_manifest
from engine.index.store import STORE_FILE, ChunkStore
from engine.indexing.indexer import Indexer
from engine.signal import (
    BuildJob,
    BuildReport,
    IndexOptions,
    ProgressFn,
    SignalPlugin,
    StreamingBuilder,
)
from engine.types import Chunk
from signals import registry
from tests.engine.indexing.test_indexer import GREETER, first_lines, write


class RecordingStream:
    def __init__(self, directory: Path, fail_on: type[BaseException] | None) -> None:
        self.directory = directory
        self.fail_on = fail_on
        self.batches: list[tuple[list[Chunk], list[Any]]] = []
        self.finished = self.aborted = False

    def add(self, chunks: Sequence[Chunk], analyses: Sequence[Any]) -> None:
        if self.fail_on is KeyboardInterrupt:
            raise KeyboardInterrupt
        if self.fail_on is OSError:
            raise OSError(errno.ENOSPC, "No space left on device")
        if self.fail_on is not None:
            raise self.fail_on("stream broke")
        self.batches.append((list(chunks), list(analyses)))

    def finish(self) -> BuildReport:
        self.finished = True
        (self.directory / "done").write_text("1")
        return BuildReport(ready=True, meta={"streamed": True}, message="streamed")

    def abort(self) -> None:
        self.aborted = True


class StreamingRecorder:
    name = "recording"
    slow = False

    def __init__(self, fail_on: type[BaseException] | None = None) -> None:
        self.fail_on = fail_on
        self.streams: list[RecordingStream] = []
        self.jobs: list[BuildJob] = []

    def start_stream(self, directory: Path, progress: ProgressFn) -> RecordingStream:
        self.streams.append(RecordingStream(directory, self.fail_on))
        return self.streams[-1]

    def build(self, job: BuildJob) -> BuildReport:
        self.jobs.append(job)
        return BuildReport(ready=True, meta={"streamed": False})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "toy"
    write(root, "toy/greeter.py", GREETER)
    write(root, "toy/util.py", "def add(a, b):\n    return a + b\n")
    write(root, "README.md", "# Toy\n\nA toy project.\n\n## Usage\n\nCall greet.\n")
    return root


def indexer(home: Home, builder: StreamingRecorder) -> Indexer:
    plugin = SignalPlugin(
        "recording", lambda options: builder, registry.plugins()["lexical"].open, first_lines
    )
    plugins = {"lexical": registry.plugins()["lexical"], "recording": plugin}
    return Indexer(home, plugins, IndexOptions(home=home.root))


def test_the_recorder_is_a_streaming_builder() -> None:
    assert isinstance(StreamingRecorder(), StreamingBuilder)


def test_a_first_build_streams_every_chunk_in_id_order_with_its_analysis(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.indexing.indexer.INSERT_BATCH_CHUNKS", 1)  # one batch per file
    home = Home(tmp_path / "home")
    builder = StreamingRecorder()
    report = indexer(home, builder).index("toy", repo)
    (stream,) = builder.streams
    assert builder.jobs == []
    assert stream.finished and not stream.aborted
    assert len(stream.batches) == 3
    streamed = [c for chunks, _ in stream.batches for c in chunks]
    generation = current_generation(home.repo_dir("toy"))
    assert generation is not None
    store = ChunkStore.open_readonly(generation / STORE_FILE)
    assert streamed == list(store.iter_chunks())
    store.close()
    analyses = [a for _, batch in stream.batches for a in batch]
    assert analyses == [c.text.split("\n")[0] for c in streamed]
    assert (generation / "recording" / "done").is_file()
    assert report.signals["recording"].meta == {"streamed": True}

    write(repo, "toy/extra.py", "def extra():\n    return 3\n")
    indexer(home, builder).reindex("toy")
    assert len(builder.streams) == 1  # an update is built, not streamed
    assert [c.path for c in builder.jobs[0].added] == ["toy/extra.py"]


def test_a_failing_stream_fails_its_signal_only(repo: Path, tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    builder = StreamingRecorder(fail_on=ValueError)
    report = indexer(home, builder).index("toy", repo)
    assert builder.streams[0].aborted
    state = report.signals["recording"]
    assert state.ready is False
    assert state.message == "failed: ValueError: stream broke"
    assert "recording signal: failed: ValueError: stream broke" in report.problems
    generation = current_generation(home.repo_dir("toy"))
    assert generation is not None
    assert list((generation / "recording").iterdir()) == []
    assert read_manifest(generation).signal("lexical").ready is True


@pytest.mark.parametrize(
    ("error", "raised"), [(KeyboardInterrupt, KeyboardInterrupt), (OSError, EngineError)]
)
def test_an_interrupt_or_a_full_disk_while_streaming_leaves_no_generation(
    repo: Path, tmp_path: Path, error: type[BaseException], raised: type[BaseException]
) -> None:
    home = Home(tmp_path / "home")
    builder = StreamingRecorder(fail_on=error)
    with pytest.raises(raised):
        indexer(home, builder).index("toy", repo)
    assert builder.streams[0].aborted
    assert current_generation(home.repo_dir("toy")) is None
    assert list(home.repo_dir("toy").glob("gen-*")) == []
