"""Which export folders count as usable and current, and how a newer export replaces one.

The real export (torch tracing, fusion, verification) is in test_onnx_embedder.py (slow);
these tests use folders written by hand, since only the files and the manifest matter.
"""

from __future__ import annotations

from pathlib import Path

from signals.vector.export_files import publish, write_manifest
from signals.vector.onnx_embedder import (
    EXPORT_FORMAT,
    MANIFEST_FILE,
    ONNX_FILE,
    TOKENIZER_FILE,
    WEIGHTS_FILE,
    ExportManifest,
    is_current,
    read_manifest,
)


def manifest(fmt: int = EXPORT_FORMAT, model_id: str = "m") -> ExportManifest:
    return ExportManifest(
        format=fmt,
        model_id=model_id,
        name="toy",
        dim=4,
        max_seq_length=16,
        do_lower_case=False,
        input_names=("input_ids", "attention_mask"),
        output_name="sentence_embedding",
        pad_id=0,
        max_cosine_diff=0.0,
    )


def write_export(folder: Path, fmt: int = EXPORT_FORMAT, *, weights: bool = True) -> Path:
    folder.mkdir(parents=True)
    (folder / ONNX_FILE).write_bytes(b"graph")
    (folder / TOKENIZER_FILE).write_text("{}")
    if weights:
        (folder / WEIGHTS_FILE).write_bytes(b"weights")
    write_manifest(folder, manifest(fmt, model_id=folder.name))
    return folder


def test_a_current_export_needs_its_weights_file(tmp_path: Path) -> None:
    complete = write_export(tmp_path / "complete")
    assert is_current(read_manifest(complete))
    partial = write_export(tmp_path / "partial", weights=False)
    assert read_manifest(partial) is None


def test_an_older_self_contained_export_still_runs_but_is_not_current(tmp_path: Path) -> None:
    older = write_export(tmp_path / "older", fmt=2, weights=False)
    found = read_manifest(older)
    assert found is not None and found.format == 2
    assert not is_current(found)


def test_unknown_formats_and_broken_manifests_are_not_exports(tmp_path: Path) -> None:
    assert read_manifest(write_export(tmp_path / "one", fmt=1)) is None
    assert read_manifest(write_export(tmp_path / "future", fmt=EXPORT_FORMAT + 1)) is None
    broken = write_export(tmp_path / "broken")
    (broken / MANIFEST_FILE).write_text("{not json")
    assert read_manifest(broken) is None
    assert read_manifest(tmp_path / "missing") is None
    assert not is_current(None)


def test_publishing_replaces_an_older_export_whole(tmp_path: Path) -> None:
    target = write_export(tmp_path / "models" / "m", fmt=2, weights=False)
    (target / "stale-extra-file").write_text("from the old export")
    staging = write_export(tmp_path / "models" / ".m.staging")
    publish(staging, target)
    assert is_current(read_manifest(target))
    assert not (target / "stale-extra-file").exists()
    assert not staging.exists()
    # Nothing is left beside it: the old folder was moved aside and removed.
    assert sorted(p.name for p in target.parent.iterdir()) == ["m"]


def test_publishing_keeps_a_current_export_someone_else_published(tmp_path: Path) -> None:
    target = write_export(tmp_path / "models" / "m")
    (target / ONNX_FILE).write_bytes(b"theirs")
    staging = write_export(tmp_path / "models" / ".m.staging")
    publish(staging, target)
    assert (target / ONNX_FILE).read_bytes() == b"theirs"


def test_publishing_replaces_a_partial_folder(tmp_path: Path) -> None:
    target = tmp_path / "models" / "m"
    target.mkdir(parents=True)
    (target / ONNX_FILE).write_bytes(b"half")
    staging = write_export(tmp_path / "models" / ".m.staging")
    publish(staging, target)
    assert is_current(read_manifest(target))
    assert (target / WEIGHTS_FILE).read_bytes() == b"weights"
