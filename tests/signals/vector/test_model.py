from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from engine.errors import SignalUnavailable
from signals.vector import model
from signals.vector.model import BUNDLED_NAME, identify, resolve_model, weights_sha256
from tests.fakes import fake_model_folder


def test_bundled_model_is_found_by_name() -> None:
    source = resolve_model(None)
    assert source.bundled
    assert source.name == BUNDLED_NAME
    assert (source.path / "model.safetensors").is_file()


def test_missing_or_empty_folders_are_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SignalUnavailable, match="does not exist"):
        resolve_model(str(tmp_path / "absent"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(SignalUnavailable, match="no model weights"):
        resolve_model(str(tmp_path / "empty"))


def test_weights_hash_is_the_file_sha256_and_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = fake_model_folder(tmp_path, "m", b"some weights")
    home = tmp_path / "home"
    expected = hashlib.sha256(b"some weights").hexdigest()
    assert weights_sha256(folder, home) == expected

    def fail(path: Path) -> str:
        raise AssertionError(f"hashed {path} again")

    monkeypatch.setattr(model, "_file_sha256", fail)
    assert weights_sha256(folder, home) == expected
    # A changed file (other size and mtime) is hashed again.
    monkeypatch.undo()
    weights = folder / "model.safetensors"
    weights.write_bytes(b"other weights!")
    os.utime(weights, ns=(1, 1))
    assert weights_sha256(folder, home) == hashlib.sha256(b"other weights!").hexdigest()


def test_identity_key_follows_weights_and_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    a = identify(resolve_model(str(fake_model_folder(tmp_path, "a", b"w1"))), home)
    b = identify(resolve_model(str(fake_model_folder(tmp_path, "b", b"w1"))), home)
    c = identify(resolve_model(str(fake_model_folder(tmp_path, "c", b"w2"))), home)
    assert a.key == b.key  # same weights and config in another folder: same vectors
    assert a.key != c.key
    (tmp_path / "b" / "sentence_bert_config.json").write_text('{"max_seq_length": 128}')
    assert identify(resolve_model(str(tmp_path / "b")), home).key != a.key
